"""Querying miners (edge): one prompt to every miner at once over aiohttp, each answer timed to its last byte.

``query_miners`` runs the round's query on an event loop of its own in a
thread of its own and returns one ``MinerAnswer`` per miner, in the miners'
order. A miner's failure is a value (``FailureReason`` and a short detail),
never an exception: the round goes on with the others. Exceptions from aiohttp
are mapped by type only, because they carry the request headers (the key).
Latency and the two clocks (the miner's timeout, the round's deadline) are
described in docs/miners.md. With a ``signer`` (the validator's hotkey) every
request carries Epistula v2 headers signed for the miner's hotkey over the
exact body sent (``chain.epistula``, docs/chain.md), and a 401 to a signed
request fails as ``refused`` with the miner's reason.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from chain.epistula import Signer, sign_request
from validator.miners.answers import FailureReason, MinerAnswer, outcome_counts, parse_chat_completion
from validator.miners.limits import QueryLimits
from validator.miners.spec import MinerSpec, show

log = logging.getLogger(__name__)


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


def _transport_failure(exc: BaseException, connect_timeout_s: float) -> _Raw:
    """A transport exception as a failure, by type only (see the module docstring)."""
    now = time.perf_counter()
    if isinstance(exc, asyncio.TimeoutError):
        return _Raw(now, failure=FailureReason.TIMEOUT, detail=f"could not connect within {connect_timeout_s:g} s")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return _Raw(now, failure=FailureReason.CONNECTION_REFUSED, detail=_connect_detail(exc))
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return _Raw(
            now, failure=FailureReason.CONNECTION_REFUSED, detail="the miner closed the connection before answering"
        )
    if isinstance(exc, aiohttp.ClientPayloadError):
        return _Raw(
            now, failure=FailureReason.MALFORMED_PAYLOAD, detail="broken body (truncated or bad transfer encoding)"
        )
    if isinstance(exc, aiohttp.ClientResponseError):
        return _Raw(now, failure=FailureReason.MALFORMED_PAYLOAD, detail="invalid HTTP response")
    if isinstance(exc, (aiohttp.ClientOSError, ConnectionError)):
        return _Raw(now, failure=FailureReason.CONNECTION_REFUSED, detail="connection reset")
    return _Raw(now, failure=FailureReason.CONNECTION_REFUSED, detail=f"client error ({type(exc).__name__})")


async def _read_body(resp: Any, max_body_bytes: int) -> _Raw:
    """The body of a 2xx response, or ``oversized`` as soon as it passes the cap."""
    declared = resp.content_length
    if declared is not None and declared > max_body_bytes:
        end = time.perf_counter()
        resp.close()
        return _Raw(
            end,
            failure=FailureReason.OVERSIZED,
            detail=f"declared body of {declared:,} bytes, over the cap of {max_body_bytes:,}",
        )
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
            return _Raw(
                end,
                failure=FailureReason.OVERSIZED,
                detail=f"body over the cap of {max_body_bytes:,} bytes (stopped reading)",
            )
        chunks.append(chunk)
    return _Raw(time.perf_counter(), body=b"".join(chunks))


# the reasons an Epistula verifier gives (chain.epistula): a refusal's detail names one of them, never the miner's
# own words (a detail holds no text the miner chose)
REFUSALS = (
    "unsigned request",
    "unsupported Epistula version",
    "missing header",
    "malformed timestamp",
    "stale request",
    "timestamp",
    "signed for another receiver",
    "unknown signer",
    "signer has no stake",
    "signer's stake is below the minimum",
    "malformed signature",
    "bad signature",
    "replayed request",
    "too many requests in the replay window",
)


async def _refusal(resp: Any) -> str:
    """``HTTP 401``, with the reason when the miner's JSON error gives one an Epistula verifier gives."""
    try:
        doc = json.loads(await resp.content.read(4096))
        error = doc.get("error") if isinstance(doc, dict) else None
        reason = error.get("message") if isinstance(error, dict) else error
    except (ValueError, aiohttp.ClientError, asyncio.TimeoutError):
        reason = None
    known = next((r for r in REFUSALS if isinstance(reason, str) and reason.startswith(r)), None)
    return f"HTTP 401: {'timestamp in the future' if known == 'timestamp' else known}" if known else "HTTP 401"


async def _fetch(
    session: aiohttp.ClientSession,
    spec: MinerSpec,
    body: bytes,
    timing: _Timing,
    *,
    connect_timeout_s: float,
    max_body_bytes: int,
    signer: Signer | None = None,
) -> _Raw:
    """POST one request (signed when there is a ``signer``) and read at most ``max_body_bytes``; transport
    failures become a ``_Raw``."""
    headers = {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
    if spec.api_key is not None:
        headers["Authorization"] = f"Bearer {spec.api_key.get()}"
    if signer is not None:  # signed now: the miner refuses a request older than about 8 s
        headers.update(sign_request(signer, body, spec.hotkey))
    try:
        async with session.post(
            spec.chat_url,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s),
            trace_request_ctx=timing,
        ) as resp:
            if resp.status == 401 and signer is not None:
                detail = await _refusal(resp)
                end = time.perf_counter()
                resp.close()
                return _Raw(end, failure=FailureReason.REFUSED, detail=detail)
            if not 200 <= resp.status < 300:
                end = time.perf_counter()
                resp.close()
                note = " (redirects are not followed)" if 300 <= resp.status < 400 else ""
                return _Raw(end, failure=FailureReason.HTTP_ERROR, detail=f"HTTP {resp.status}{note}")
            return await _read_body(resp, max_body_bytes)
    except (asyncio.TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
        return _transport_failure(exc, connect_timeout_s)


def _late(timing: _Timing, end: float, timeout_s: float, deadline_s: float, round_end: float) -> _Raw:
    """Why an unfinished request was given up: its own timeout, or the round's deadline."""
    if timing.sent_loop is not None and timing.sent_loop + timeout_s <= round_end:
        return _Raw(end, failure=FailureReason.TIMEOUT, detail=f"no complete answer within {timeout_s:g} s")
    stage = "while waiting for the answer" if timing.sent is not None else "before the request was sent"
    return _Raw(end, failure=FailureReason.DEADLINE, detail=f"round deadline of {deadline_s:g} s reached {stage}")


async def _query_one(
    session: aiohttp.ClientSession,
    spec: MinerSpec,
    body: bytes,
    *,
    timeout_s: float,
    deadline_s: float,
    round_end: float,
    max_body_bytes: int,
    signer: Signer | None = None,
) -> tuple[_Raw, _Timing]:
    """One miner under two clocks: its own timeout from the moment the request is sent, and the round's deadline.

    Waiting for a connection slot or a connect counts only against the deadline, so the
    validator's own queueing never makes a miner time out.
    """
    loop = asyncio.get_running_loop()
    timing = _Timing(loop)
    fetch = loop.create_task(
        _fetch(session, spec, body, timing, connect_timeout_s=timeout_s, max_body_bytes=max_body_bytes, signer=signer)
    )
    try:
        await asyncio.wait(
            (fetch, timing.sent_future), timeout=max(0.0, round_end - loop.time()), return_when=asyncio.FIRST_COMPLETED
        )
        if not fetch.done() and timing.sent_loop is not None:
            limit = min(timing.sent_loop + timeout_s, round_end)
            await asyncio.wait((fetch,), timeout=max(0.0, limit - loop.time()))
        if fetch.done():
            try:
                return fetch.result(), timing
            except Exception as exc:  # one miner must never break the round; by type only (see _fetch)
                log.warning("miner %s: unexpected %s while querying", show(spec.hotkey), type(exc).__name__)
                return _Raw(
                    time.perf_counter(),
                    failure=FailureReason.MALFORMED_PAYLOAD,
                    detail=f"unexpected client error ({type(exc).__name__})",
                ), timing
        end = time.perf_counter()
        fetch.cancel()
        await asyncio.wait((fetch,))
        return _late(timing, end, timeout_s, deadline_s, round_end), timing
    finally:
        if not fetch.done():
            fetch.cancel()


def _answer(spec: MinerSpec, raw: _Raw, timing: _Timing, max_answer_chars: int) -> MinerAnswer:
    latency = max(0.0, raw.end - (timing.sent if timing.sent is not None else timing.started))
    if raw.failure is not None or raw.body is None:
        return MinerAnswer(
            hotkey=spec.hotkey,
            text="",
            latency_s=latency,
            failure=raw.failure or FailureReason.MALFORMED_PAYLOAD,
            detail=raw.detail,
            entity=spec.entity,
        )
    return parse_chat_completion(spec.hotkey, raw.body, latency, max_answer_chars=max_answer_chars, entity=spec.entity)


def _check_query(miners: Sequence[MinerSpec], limits: QueryLimits) -> None:
    if not isinstance(limits, QueryLimits):
        raise TypeError(f"limits must be a QueryLimits value, got {type(limits).__name__}")
    seen: set[str] = set()
    for spec in miners:
        if not isinstance(spec, MinerSpec):
            raise TypeError(f"miners must be MinerSpec values, got {type(spec).__name__}")
        if spec.hotkey in seen:
            raise ValueError(f"duplicate hotkey {show(spec.hotkey)} in the miners")
        seen.add(spec.hotkey)


def _request_bodies(
    prompt: str, miners: Sequence[MinerSpec], limits: QueryLimits, system_prompt: str | None
) -> dict[str, bytes]:
    """One encoded request per model name (miners of one model get the same bytes)."""
    messages = ([{"role": "system", "content": system_prompt}] if system_prompt is not None else []) + [
        {"role": "user", "content": prompt}
    ]
    bodies: dict[str, bytes] = {}
    for spec in miners:
        if spec.model not in bodies:
            request: dict[str, Any] = {
                "model": spec.model,
                "messages": messages,
                "max_tokens": limits.max_tokens,
                "stream": False,
            }
            if limits.logprobs:
                request["logprobs"] = True
            bodies[spec.model] = json.dumps(request, ensure_ascii=False).encode("utf-8")
    return bodies


async def query_miners_async(
    prompt: str,
    miners: Sequence[MinerSpec],
    limits: QueryLimits,
    *,
    system_prompt: str | None = None,
    on_done: Callable[[int, int], None] | None = None,
    signer: Signer | None = None,
) -> list[MinerAnswer]:
    """Ask every miner concurrently on the running loop; one answer per miner, in order.

    Prefer ``query_miners``: on a loop that also does other work, a blocked loop delays
    the moment a finished answer is read and inflates latencies; ``query_miners`` runs
    this on a loop of its own. With ``limits.max_connections`` below the number of miners
    the extra requests wait for a slot, which counts against the deadline but neither
    against the miner's timeout nor in its latency. ``on_done(finished, total)`` is called
    as each miner finishes (answered or failed), on this loop: it must return at once.
    ``signer``: the validator's hotkey, signing every request (Epistula v2) for the miner's hotkey.
    """
    _check_query(miners, limits)
    if not miners:
        return []
    finished = 0

    async def counted(coro):
        nonlocal finished
        result = await coro  # the latency is already taken: the callback costs the miner nothing
        finished += 1
        if on_done is not None:
            on_done(finished, len(miners))
        return result

    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    round_end = loop.time() + limits.deadline_s
    bodies = _request_bodies(prompt, miners, limits, system_prompt)
    trace = aiohttp.TraceConfig()
    trace.on_request_chunk_sent.append(_on_chunk_sent)
    connector = aiohttp.TCPConnector(limit=limits.max_connections or len(miners), limit_per_host=0)
    # no cookies (one miner must not set what another receives), no proxies from the
    # environment, no transparent decompression (a small gzip body could unpack unbounded)
    async with aiohttp.ClientSession(
        connector=connector,
        trace_configs=[trace],
        trust_env=False,
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
    ) as session:
        outcomes = await asyncio.gather(
            *(
                counted(
                    _query_one(
                        session,
                        spec,
                        bodies[spec.model],
                        timeout_s=spec.timeout_s or limits.request_timeout_s,
                        deadline_s=limits.deadline_s,
                        round_end=round_end,
                        max_body_bytes=limits.body_cap,
                        signer=signer,
                    )
                )
                for spec in miners
            )
        )
    answers = [_answer(spec, raw, timing, limits.max_answer_chars) for spec, (raw, timing) in zip(miners, outcomes)]
    for answer in answers:
        log.debug(
            "miner %s: %s in %.3f s%s",
            show(answer.hotkey),
            answer.failure.value if answer.failure else "ok",
            answer.latency_s,
            f" ({answer.detail})" if answer.detail else "",
        )
    counts = outcome_counts(answers)
    log.info(
        "queried %d miners in %.2f s: %s",
        len(miners),
        time.perf_counter() - started,
        ", ".join(f"{k} {v}" for k, v in counts.items() if v),
    )
    return answers


def query_miners(
    prompt: str,
    miners: Sequence[MinerSpec],
    limits: QueryLimits,
    *,
    system_prompt: str | None = None,
    on_done: Callable[[int, int], None] | None = None,
    signer: Signer | None = None,
) -> list[MinerAnswer]:
    """Ask every miner concurrently and wait; one ``MinerAnswer`` per miner, in the miners' order.

    Runs ``query_miners_async`` on a fresh event loop in a dedicated thread, so nothing the
    caller does (its own event loop, blocking calls) sits between a miner's bytes arriving
    and their timestamp. Returns by the deadline (plus the time to cancel what is left).
    """
    _check_query(miners, limits)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["answers"] = asyncio.run(
                query_miners_async(prompt, miners, limits, system_prompt=system_prompt, on_done=on_done, signer=signer)
            )
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="miner-query", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["answers"]
