"""Miners: the miners file and the querying edge of a round (collect -> responses).

``load_miners`` reads the operator's miners file (TOML ``[[miner]]`` tables or
a YAML ``miners:`` list) into validated ``MinerSpec`` values and resolves each
API key from the environment once, into an ``lm.config.Secret`` that never
prints. ``query_miners`` sends one prompt to every miner concurrently and
returns one ``MinerAnswer`` per miner, in the miners' order: the text, the
latency, a confidence from token log-probabilities when the miner sent them,
or a ``FailureReason``. ``to_response`` turns an answer into the
``consensus.types.Response`` the pure core reads; a failed miner becomes a
response with ``error`` set, which never enters consensus and never earns.

A miner's failure is a value, never an exception: the round goes on with
the others, and ``outcome_counts`` gives the caller what it needs to decide
quorum. Errors raised here are about the validator's own inputs::

    ValueError
     +-- ConfigError (consensus.errors)
          +-- MinersFileError   the miners file is unreadable or invalid; names the
                                file, the entry (number and hotkey) and the field

Latency, timeouts and the confidence formula are described in docs/miners.md.
"""

from __future__ import annotations

import asyncio
import enum
import errno
import json
import logging
import math
import re
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

from consensus.errors import ConfigError
from consensus.types import Response
from lm.config import Secret

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "FailureReason", "MinerAnswer", "MinerSpec", "MinersFileError", "load_miners", "logprob_confidence",
    "outcome_counts", "parse_chat_completion", "query_miners", "query_miners_async", "to_response",
]

log = logging.getLogger(__name__)

MAX_HOTKEY_CHARS = 256  # the same bound as a round's miner ids (InputLimits.max_id_chars)
MAX_MODEL_CHARS = 256
MAX_TIMEOUT_S = 3600.0
MAX_MINERS = 4096  # InputLimits.max_responses
MAX_FILE_BYTES = 16 * 1024 * 1024
FIELDS = ("hotkey", "base_url", "model", "api_key_env", "timeout_s")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Control, format (bidi overrides, zero-width), surrogate and line/paragraph separator characters
# would let a hotkey rewrite a log line or hide itself; everything else, '/' included, is allowed
# (storage percent-encodes keys).
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


# ---------------------------------------------------------------------------------------------
# Miner specs and the miners file
# ---------------------------------------------------------------------------------------------

class MinersFileError(ConfigError):
    """The miners file is invalid; the message names the file, the entry, its hotkey and the field."""

    def __init__(self, path: str | Path, message: str, *, index: int | None = None, hotkey: Any = None,
                 field: str | None = None) -> None:
        where = str(path)
        if index is not None:
            where += f": miner entry #{index + 1}"
            if isinstance(hotkey, str):
                where += f" (hotkey {_show(hotkey)})"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(where, message)
        self.path = str(path)
        self.index = index
        self.hotkey = hotkey if isinstance(hotkey, str) else None
        self.field_name = field


class _Invalid(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _show(value: Any, limit: int = 60) -> str:
    """A short, escaped repr of an untrusted value for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clean_text(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise _Invalid(name, f"must be a string, got {type(value).__name__}")
    if not value.strip():
        raise _Invalid(name, "empty")
    if len(value) > limit:
        raise _Invalid(name, f"{len(value)} characters, more than the limit of {limit}")
    bad = next((c for c in value if unicodedata.category(c) in _FORBIDDEN_CATEGORIES), None)
    if bad is not None:
        raise _Invalid(name, f"contains the control or format character U+{ord(bad):04X}")
    if value != value.strip():
        raise _Invalid(name, "has leading or trailing whitespace")
    return value


def _check_url(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("base_url", f"expected an http(s) URL such as http://127.0.0.1:8000/v1, got {_show(value)}")
    try:
        parts = urlsplit(value.strip())
        port = parts.port  # raises on a malformed port
    except ValueError as exc:
        raise _Invalid("base_url", f"malformed URL {_show(value)}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Invalid("base_url", f"expected an http(s) URL with a host, such as http://127.0.0.1:8000/v1, "
                                   f"got {_show(value)}")
    if parts.username is not None or parts.password is not None:
        # credentials in a URL end up in logs and records; keys belong in api_key_env
        raise _Invalid("base_url", "must not contain user:password@ (put the key in api_key_env)")
    if parts.query or parts.fragment:
        raise _Invalid("base_url", f"must not have a query or fragment, got {_show(value)}")
    if port == 0:
        raise _Invalid("base_url", "port 0 is not a port")
    if any(unicodedata.category(c) in _FORBIDDEN_CATEGORIES or c.isspace() for c in value.strip()):
        raise _Invalid("base_url", "contains whitespace or control characters")
    return value.strip().rstrip("/")


def _check_env_name(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        raise _Invalid("api_key_env", f"expected an environment variable name such as MINER_KEY, got {_show(value)}")
    return value


def _check_timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid("timeout_s", f"must be a number of seconds, got {_show(value)}")
    value = float(value)
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT_S:
        raise _Invalid("timeout_s", f"must be > 0 and <= {MAX_TIMEOUT_S:g} seconds, got {value!r}")
    return value


@dataclass(frozen=True)
class MinerSpec:
    """One miner: who it is, where its OpenAI-compatible server is, and how long it may take.

    ``api_key`` is the resolved key (never printed, never serialised; ``dataclasses.asdict``
    refuses it); ``api_key_env`` only records which variable it came from. ``timeout_s``
    None means the round's ``request_timeout_s``.
    """

    hotkey: str
    base_url: str  # e.g. http://127.0.0.1:8000/v1; the request goes to {base_url}/chat/completions
    model: str
    api_key_env: str | None = None
    timeout_s: float | None = None
    api_key: Secret | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        try:
            _clean_text("hotkey", self.hotkey, MAX_HOTKEY_CHARS)
            object.__setattr__(self, "base_url", _check_url(self.base_url))
            _clean_text("model", self.model, MAX_MODEL_CHARS)
            _check_env_name(self.api_key_env)
            object.__setattr__(self, "timeout_s", _check_timeout(self.timeout_s))
            if self.api_key is not None and not isinstance(self.api_key, Secret):
                raise _Invalid("api_key", "must be an lm.config.Secret")
        except _Invalid as exc:
            raise ConfigError(f"miner {_show(self.hotkey)}.{exc.field}", exc.message) from None

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"


def _read_table(path: Path) -> list[Any]:
    """The raw miner entries of a TOML or YAML miners file."""
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise MinersFileError(path, f"unknown miners file type {suffix or '(none)'!r}: use .toml, .yaml or .yml")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise MinersFileError(path, f"{size:,} bytes, more than the limit of {MAX_FILE_BYTES:,}")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise MinersFileError(path, f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except OSError as exc:
        raise MinersFileError(path, f"cannot read the miners file: {exc.strerror or exc}") from None
    if suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise MinersFileError(path, f"invalid TOML: {exc}") from None
        key, shape = "miner", "[[miner]] tables"
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise MinersFileError(path, f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else exc}") from None
        key, shape = "miners", "a list under 'miners:'"
    if not isinstance(data, dict):
        raise MinersFileError(path, f"expected {shape}, got {type(data).__name__}")
    unknown = [k for k in data if k != key]
    if unknown:
        raise MinersFileError(path, f"unknown top-level key {_show(unknown[0])} (expected {shape})")
    entries = data.get(key)
    if not isinstance(entries, list) or not entries:
        raise MinersFileError(path, f"no miners: expected {shape}")
    if len(entries) > MAX_MINERS:
        raise MinersFileError(path, f"{len(entries)} miners, more than the limit of {MAX_MINERS}")
    return entries


def load_miners(path: str | Path, env: Mapping[str, str]) -> list[MinerSpec]:
    """Read and validate a miners file (format chosen by extension); resolve API keys from ``env``.

    ``env`` is the environment as ``validator.settings`` merged it (this module reads no
    environment itself). Every problem raises ``MinersFileError`` naming the file, the
    entry and the field: a bad URL, a duplicate hotkey, an unset key variable (named),
    an unknown key or a bad timeout.
    """
    path = Path(path)
    specs: list[MinerSpec] = []
    first: dict[str, int] = {}
    for index, entry in enumerate(_read_table(path)):
        if not isinstance(entry, dict):
            raise MinersFileError(path, f"must be a table of {', '.join(FIELDS)}, got {type(entry).__name__}",
                                  index=index)
        hotkey = entry.get("hotkey")

        def fail(field: str | None, message: str) -> MinersFileError:
            return MinersFileError(path, message, index=index, hotkey=hotkey, field=field)

        unknown = [k for k in entry if k not in FIELDS]
        if unknown:
            raise fail(str(unknown[0]), f"unknown key (known: {', '.join(FIELDS)})")
        for required in ("hotkey", "base_url", "model"):
            if entry.get(required) is None:
                raise fail(required, "missing")
        try:
            hotkey = _clean_text("hotkey", hotkey, MAX_HOTKEY_CHARS)
            base_url = _check_url(entry["base_url"])
            model = _clean_text("model", entry["model"], MAX_MODEL_CHARS)
            key_env = _check_env_name(entry.get("api_key_env"))
            timeout = _check_timeout(entry.get("timeout_s"))
        except _Invalid as exc:
            raise fail(exc.field, exc.message) from None
        if hotkey in first:
            raise fail("hotkey", f"duplicate hotkey, first used by entry #{first[hotkey] + 1}")
        first[hotkey] = index
        key = None
        if key_env is not None:
            raw = env.get(key_env)
            if raw is None or not raw.strip():
                state = "empty" if raw is not None else "not set"
                raise fail("api_key_env", f"environment variable {key_env} is {state} "
                                          f"(it should hold this miner's API key)")
            # the value itself is never shown, not even in this error
            if any(unicodedata.category(c) in _FORBIDDEN_CATEGORIES for c in raw.strip()):
                raise fail("api_key_env", f"environment variable {key_env} contains control characters")
            key = Secret(raw.strip())
        specs.append(MinerSpec(hotkey=hotkey, base_url=base_url, model=model, api_key_env=key_env,
                               timeout_s=timeout, api_key=key))
    return specs


# ---------------------------------------------------------------------------------------------
# Answers (pure)
# ---------------------------------------------------------------------------------------------

class FailureReason(str, enum.Enum):
    """Why a miner's answer is not usable (docs/miners.md has the table)."""

    TIMEOUT = "timeout"  # no complete answer within the miner's timeout after sending (or connecting took longer)
    CONNECTION_REFUSED = "connection_refused"  # could not connect, or the connection was reset/closed
    HTTP_ERROR = "http_error"  # a status other than 2xx (redirects are not followed)
    MALFORMED_PAYLOAD = "malformed_payload"  # not JSON, not UTF-8, not the chat completion shape
    EMPTY = "empty"  # the answer is empty or whitespace
    OVERSIZED = "oversized"  # the body or the answer is over its cap
    NON_TEXT = "non_text"  # the content is not a string (a list of parts, a number, only tool calls...)
    DEADLINE = "deadline"  # the round's deadline came first


@dataclass(frozen=True)
class MinerAnswer:
    """One miner's outcome in a round.

    ``text`` is the answer ("" when failed); ``latency_s`` runs from the request being
    written to the socket to the last body byte read (for failures: to the failure);
    ``confidence`` is ``logprob_confidence`` of the answer's tokens, None without them.
    ``detail`` is a short human note ("HTTP 500", "connection refused"); it never holds
    the key or text the miner chose.
    """

    hotkey: str
    text: str
    latency_s: float
    confidence: float | None = None
    failure: FailureReason | None = None
    detail: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


def logprob_confidence(logprobs: Any) -> float | None:
    """exp(mean token log-probability): the geometric mean of the answer's token probabilities.

    ``logprobs`` is ``choices[0].logprobs`` of an OpenAI chat completion (its ``content``
    list of ``{"token", "logprob"}``). The result is in [0, 1]: 1 when every token had
    probability 1, and it does not shrink with length the way a joint probability would.
    Returns None when there are no usable log-probabilities (absent, empty, a non-number,
    non-finite, or clearly positive); values up to 1e-6 above 0 are rounding and count as 0.
    """
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content:
        return None
    total = 0.0
    for item in content:
        value = item.get("logprob") if isinstance(item, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value > 1e-6:
            return None
        total += min(float(value), 0.0)
    return min(1.0, max(0.0, math.exp(total / len(content))))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse_chat_completion(hotkey: str, body: bytes, latency_s: float, *, max_answer_chars: int) -> MinerAnswer:
    """Validate one chat completion body into an answer (or a failure with its reason)."""

    def failed(reason: FailureReason, detail: str) -> MinerAnswer:
        return MinerAnswer(hotkey=hotkey, text="", latency_s=latency_s, failure=reason, detail=detail)

    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return failed(FailureReason.MALFORMED_PAYLOAD, "body is not UTF-8")
    except (json.JSONDecodeError, RecursionError):
        return failed(FailureReason.MALFORMED_PAYLOAD, "body is not valid JSON")
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return failed(FailureReason.MALFORMED_PAYLOAD, "no choices[0] object")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return failed(FailureReason.MALFORMED_PAYLOAD, "no choices[0].message object")
    if "content" not in message:
        return failed(FailureReason.MALFORMED_PAYLOAD, "choices[0].message has no content")
    content = message["content"]
    if content is None:
        others = sorted(k for k in ("tool_calls", "function_call", "refusal", "audio") if message.get(k))
        if others:
            return failed(FailureReason.NON_TEXT, f"no text content, only {', '.join(others)}")
        return failed(FailureReason.EMPTY, "content is null")
    if not isinstance(content, str):
        return failed(FailureReason.NON_TEXT, f"content is a {type(content).__name__}, not a string")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        return failed(FailureReason.MALFORMED_PAYLOAD, "content has an unpaired surrogate escape")
    if len(content) > max_answer_chars:
        return failed(FailureReason.OVERSIZED, f"answer of {len(content):,} characters, over the cap of "
                                               f"{max_answer_chars:,}")
    if not content.strip():
        return failed(FailureReason.EMPTY, "answer is empty" if not content else "answer is only whitespace")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return MinerAnswer(hotkey=hotkey, text=content, latency_s=latency_s,
                       confidence=logprob_confidence(choices[0].get("logprobs")),
                       prompt_tokens=_count(usage.get("prompt_tokens")),
                       completion_tokens=_count(usage.get("completion_tokens")))


def to_response(answer: MinerAnswer) -> Response:
    """The consensus core's view of an answer; a failure becomes ``error`` = its reason's value."""
    if answer.failure is not None:
        return Response(miner=answer.hotkey, text="", latency_s=answer.latency_s, error=answer.failure.value)
    return Response(miner=answer.hotkey, text=answer.text, latency_s=answer.latency_s, confidence=answer.confidence)


def outcome_counts(answers: Sequence[MinerAnswer]) -> dict[str, int]:
    """``{"ok": n, "timeout": n, ...}`` with every reason present (quorum reads "ok")."""
    counts = {"ok": 0, **{reason.value: 0 for reason in FailureReason}}
    for answer in answers:
        counts["ok" if answer.failure is None else answer.failure.value] += 1
    return counts


# ---------------------------------------------------------------------------------------------
# Querying (edge)
# ---------------------------------------------------------------------------------------------

def default_max_body_bytes(max_answer_chars: int) -> int:
    """The body cap implied by an answer cap: JSON escapes, log-probabilities and envelope included."""
    # a character costs up to 12 bytes escaped (\\ud83d\\ude00 for 2), and each token's
    # log-probability entry (~100 bytes for ~4 characters) adds ~25 bytes per character
    return 65_536 + 48 * max_answer_chars


class _Timing:
    """Per-request timestamps, filled by the aiohttp trace hooks (``trace_request_ctx``)."""

    __slots__ = ("started", "sent", "sent_loop", "sent_future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.started = time.perf_counter()
        self.sent: float | None = None  # perf_counter when the request went to the socket
        self.sent_loop: float | None = None  # the same moment on the loop's clock (for timers)
        self.sent_future: asyncio.Future[None] = loop.create_future()

    def mark_sent(self) -> None:
        if self.sent is None:
            self.sent = time.perf_counter()
            self.sent_loop = self.loop.time()
            self.sent_future.set_result(None)


async def _on_chunk_sent(session: Any, ctx: Any, params: Any) -> None:
    # aiohttp buffers the headers and writes them with the first body chunk, right after this
    # hook returns: this is the moment the request leaves, after any wait for a connection slot
    timing = ctx.trace_request_ctx
    if isinstance(timing, _Timing):
        timing.mark_sent()


@dataclass(frozen=True)
class _Raw:
    end: float
    body: bytes | None = None
    failure: FailureReason | None = None
    detail: str = ""


def _connect_detail(exc: BaseException) -> str:
    import aiohttp

    if isinstance(exc, getattr(aiohttp, "ClientConnectorDNSError", ())):
        return "cannot resolve the host"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return "TLS certificate rejected"
    if isinstance(exc, aiohttp.ClientSSLError):
        return "TLS error"
    code = getattr(exc, "errno", None)
    if code == errno.ECONNREFUSED:
        return "connection refused"
    if isinstance(code, int) and code in errno.errorcode:
        return f"cannot connect ({errno.errorcode[code]})"
    return "cannot connect"


async def _fetch(session: Any, spec: MinerSpec, body: bytes, timing: _Timing, *, connect_timeout_s: float,
                 max_body_bytes: int) -> _Raw:
    """POST one request and read at most ``max_body_bytes``; transport failures become a ``_Raw``.

    Exceptions are mapped by type only: aiohttp's exceptions carry the request headers
    (the key), so none is logged or kept.
    """
    import aiohttp

    headers = {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
    if spec.api_key is not None:
        headers["Authorization"] = f"Bearer {spec.api_key.get()}"
    try:
        async with session.post(spec.chat_url, data=body, headers=headers, allow_redirects=False,
                                timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s),
                                trace_request_ctx=timing) as resp:
            if not 200 <= resp.status < 300:
                end = time.perf_counter()
                resp.close()
                note = " (redirects are not followed)" if 300 <= resp.status < 400 else ""
                return _Raw(end, failure=FailureReason.HTTP_ERROR, detail=f"HTTP {resp.status}{note}")
            declared = resp.content_length
            if declared is not None and declared > max_body_bytes:
                end = time.perf_counter()
                resp.close()
                return _Raw(end, failure=FailureReason.OVERSIZED,
                            detail=f"declared body of {declared:,} bytes, over the cap of {max_body_bytes:,}")
            chunks: list[bytes] = []
            size = 0
            while True:
                chunk = await resp.content.readany()
                if not chunk:
                    break
                size += len(chunk)
                if size > max_body_bytes:
                    end = time.perf_counter()
                    resp.close()  # stop reading: the rest is never received into memory
                    return _Raw(end, failure=FailureReason.OVERSIZED,
                                detail=f"body over the cap of {max_body_bytes:,} bytes (stopped reading)")
                chunks.append(chunk)
            return _Raw(time.perf_counter(), body=b"".join(chunks))
    except asyncio.TimeoutError:
        return _Raw(time.perf_counter(), failure=FailureReason.TIMEOUT,
                    detail=f"could not connect within {connect_timeout_s:g} s")
    except aiohttp.ClientConnectorError as exc:
        return _Raw(time.perf_counter(), failure=FailureReason.CONNECTION_REFUSED, detail=_connect_detail(exc))
    except aiohttp.ServerDisconnectedError:
        return _Raw(time.perf_counter(), failure=FailureReason.CONNECTION_REFUSED,
                    detail="the miner closed the connection before answering")
    except aiohttp.ClientPayloadError:
        return _Raw(time.perf_counter(), failure=FailureReason.MALFORMED_PAYLOAD,
                    detail="broken body (truncated or bad transfer encoding)")
    except aiohttp.ClientResponseError:
        return _Raw(time.perf_counter(), failure=FailureReason.MALFORMED_PAYLOAD, detail="invalid HTTP response")
    except (aiohttp.ClientOSError, ConnectionError):
        return _Raw(time.perf_counter(), failure=FailureReason.CONNECTION_REFUSED, detail="connection reset")
    except aiohttp.ClientError as exc:
        return _Raw(time.perf_counter(), failure=FailureReason.CONNECTION_REFUSED,
                    detail=f"client error ({type(exc).__name__})")


async def _query_one(session: Any, spec: MinerSpec, body: bytes, *, timeout_s: float, deadline_s: float,
                     round_end: float, max_body_bytes: int) -> tuple[_Raw, _Timing]:
    """One miner under two clocks: its own timeout from the moment the request is sent, and the round's deadline.

    Waiting for a connection slot or a connect counts only against the deadline, so the
    validator's own queueing never makes a miner time out.
    """
    loop = asyncio.get_running_loop()
    timing = _Timing(loop)
    fetch = loop.create_task(_fetch(session, spec, body, timing, connect_timeout_s=timeout_s,
                                    max_body_bytes=max_body_bytes))
    try:
        await asyncio.wait((fetch, timing.sent_future), timeout=max(0.0, round_end - loop.time()),
                           return_when=asyncio.FIRST_COMPLETED)
        if not fetch.done() and timing.sent_loop is not None:
            limit = min(timing.sent_loop + timeout_s, round_end)
            await asyncio.wait((fetch,), timeout=max(0.0, limit - loop.time()))
        if fetch.done():
            try:
                return fetch.result(), timing
            except Exception as exc:  # one miner must never break the round; by type only (see _fetch)
                log.warning("miner %s: unexpected %s while querying", _show(spec.hotkey), type(exc).__name__)
                return _Raw(time.perf_counter(), failure=FailureReason.MALFORMED_PAYLOAD,
                            detail=f"unexpected client error ({type(exc).__name__})"), timing
        end = time.perf_counter()
        fetch.cancel()
        await asyncio.wait((fetch,))
        if timing.sent_loop is not None and timing.sent_loop + timeout_s <= round_end:
            return _Raw(end, failure=FailureReason.TIMEOUT,
                        detail=f"no complete answer within {timeout_s:g} s"), timing
        stage = "while waiting for the answer" if timing.sent is not None else "before the request was sent"
        return _Raw(end, failure=FailureReason.DEADLINE,
                    detail=f"round deadline of {deadline_s:g} s reached {stage}"), timing
    finally:
        if not fetch.done():
            fetch.cancel()


def _answer(spec: MinerSpec, raw: _Raw, timing: _Timing, max_answer_chars: int) -> MinerAnswer:
    latency = max(0.0, raw.end - (timing.sent if timing.sent is not None else timing.started))
    if raw.failure is not None or raw.body is None:
        return MinerAnswer(hotkey=spec.hotkey, text="", latency_s=latency,
                           failure=raw.failure or FailureReason.MALFORMED_PAYLOAD, detail=raw.detail)
    return parse_chat_completion(spec.hotkey, raw.body, latency, max_answer_chars=max_answer_chars)


def _check_query(miners: Sequence[MinerSpec], request_timeout_s: float, deadline_s: float, max_answer_chars: int,
                 max_tokens: int, max_connections: int | None, max_body_bytes: int | None) -> None:
    for name, value in (("request_timeout_s", request_timeout_s), ("deadline_s", deadline_s)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    for name, number in (("max_answer_chars", max_answer_chars), ("max_tokens", max_tokens),
                         ("max_connections", max_connections), ("max_body_bytes", max_body_bytes)):
        if number is None and name in ("max_connections", "max_body_bytes"):
            continue
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ValueError(f"{name} must be a positive integer, got {number!r}")
    seen: set[str] = set()
    for spec in miners:
        if not isinstance(spec, MinerSpec):
            raise TypeError(f"miners must be MinerSpec values, got {type(spec).__name__}")
        if spec.hotkey in seen:
            raise ValueError(f"duplicate hotkey {_show(spec.hotkey)} in the miners")
        seen.add(spec.hotkey)


async def query_miners_async(prompt: str, miners: Sequence[MinerSpec], *, request_timeout_s: float,
                             deadline_s: float, max_answer_chars: int, max_tokens: int,
                             system_prompt: str | None = None, logprobs: bool = True,
                             max_connections: int | None = None,
                             max_body_bytes: int | None = None) -> list[MinerAnswer]:
    """Ask every miner concurrently on the running loop; one answer per miner, in order.

    Prefer ``query_miners``: on a loop that also does other work, a blocked loop delays
    the moment a finished answer is read and inflates latencies; ``query_miners`` runs
    this on a loop of its own. ``max_connections`` defaults to one per miner; with fewer
    the extra requests wait for a slot, which counts against the deadline but neither
    against the miner's timeout nor in its latency.
    """
    import aiohttp

    _check_query(miners, request_timeout_s, deadline_s, max_answer_chars, max_tokens, max_connections,
                 max_body_bytes)
    if not miners:
        return []
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    round_end = loop.time() + deadline_s
    body_cap = max_body_bytes or default_max_body_bytes(max_answer_chars)
    messages = ([{"role": "system", "content": system_prompt}] if system_prompt is not None else []) + \
        [{"role": "user", "content": prompt}]
    bodies: dict[str, bytes] = {}
    for spec in miners:
        if spec.model not in bodies:
            request: dict[str, Any] = {"model": spec.model, "messages": messages, "max_tokens": max_tokens,
                                       "stream": False}
            if logprobs:
                request["logprobs"] = True
            bodies[spec.model] = json.dumps(request, ensure_ascii=False).encode("utf-8")
    trace = aiohttp.TraceConfig()
    trace.on_request_chunk_sent.append(_on_chunk_sent)
    connector = aiohttp.TCPConnector(limit=max_connections or len(miners), limit_per_host=0)
    # no cookies (one miner must not set what another receives), no proxies from the
    # environment, no transparent decompression (a small gzip body could unpack unbounded)
    async with aiohttp.ClientSession(connector=connector, trace_configs=[trace], trust_env=False,
                                     auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar()) as session:
        outcomes = await asyncio.gather(*(
            _query_one(session, spec, bodies[spec.model], timeout_s=spec.timeout_s or request_timeout_s,
                       deadline_s=deadline_s, round_end=round_end, max_body_bytes=body_cap)
            for spec in miners))
    answers = [_answer(spec, raw, timing, max_answer_chars) for spec, (raw, timing) in zip(miners, outcomes)]
    for answer in answers:
        log.debug("miner %s: %s in %.3f s%s", _show(answer.hotkey), answer.failure.value if answer.failure else "ok",
                  answer.latency_s, f" ({answer.detail})" if answer.detail else "")
    counts = outcome_counts(answers)
    log.info("queried %d miners in %.2f s: %s", len(miners), time.perf_counter() - started,
             ", ".join(f"{k} {v}" for k, v in counts.items() if v))
    return answers


def query_miners(prompt: str, miners: Sequence[MinerSpec], *, request_timeout_s: float, deadline_s: float,
                 max_answer_chars: int, max_tokens: int, system_prompt: str | None = None, logprobs: bool = True,
                 max_connections: int | None = None, max_body_bytes: int | None = None) -> list[MinerAnswer]:
    """Ask every miner concurrently and wait; one ``MinerAnswer`` per miner, in the miners' order.

    Runs ``query_miners_async`` on a fresh event loop in a dedicated thread, so nothing the
    caller does (its own event loop, blocking calls) sits between a miner's bytes arriving
    and their timestamp. Returns by the deadline (plus the time to cancel what is left).
    """
    _check_query(miners, request_timeout_s, deadline_s, max_answer_chars, max_tokens, max_connections,
                 max_body_bytes)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["answers"] = asyncio.run(query_miners_async(
                prompt, miners, request_timeout_s=request_timeout_s, deadline_s=deadline_s,
                max_answer_chars=max_answer_chars, max_tokens=max_tokens, system_prompt=system_prompt,
                logprobs=logprobs, max_connections=max_connections, max_body_bytes=max_body_bytes))
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="miner-query", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["answers"]
