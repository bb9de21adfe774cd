"""The chat client: one small interface over any OpenAI-compatible server.

``ChatClient.complete`` sends chat messages and returns the text, the
first tokens' log-probabilities when asked, and token usage. The real
implementation uses the ``openai`` library; ``CachedClient`` wraps any client
with a disk cache (replay); tests use a fake server on loopback.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lm.config import Endpoint
from lm.errors import BudgetSpent, LMError
from storage.files import write_atomic

log = logging.getLogger(__name__)

Message = dict[str, str]


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability and the top alternatives at that position."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    logprobs: tuple[TokenLogprob, ...] | None = None
    finish_reason: str | None = None
    cached: bool = False


@dataclass(frozen=True)
class CallParams:
    """The options of one ``ChatClient.complete`` call and their defaults, in one place for the clients that read
    them (the request to the server, the cache's key, the fake's log of calls)."""

    max_tokens: int
    temperature: float = 0.0
    seed: int | None = None
    top_logprobs: int = 0
    prefill: str | None = None


class ChatClient(Protocol):
    """What the LM layer needs from a server."""

    name: str  # "<url> <model>", used in cache keys and logs (never holds the token)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int | None = None,
        top_logprobs: int = 0,
        prefill: str | None = None,
    ) -> Completion:
        """One completion. ``prefill`` starts the assistant's turn with that text (see docs/lm.md)."""


@dataclass
class Meter:
    """Calls, failures and token usage, accumulated across threads."""

    calls: int = 0
    cached: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, completion: Completion | None) -> None:
        with self._lock:
            if completion is None:
                self.failures += 1
                return
            if completion.cached:
                self.cached += 1
                return
            self.calls += 1
            self.prompt_tokens += completion.usage.prompt_tokens
            self.completion_tokens += completion.usage.completion_tokens

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {
                "calls": self.calls,
                "cached": self.cached,
                "failures": self.failures,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
            }


def _messages_with_prefill(messages: Sequence[Message], prefill: str | None) -> list[Message]:
    out = [dict(m) for m in messages]
    if prefill:
        # llama.cpp's server continues a trailing assistant message (assistant
        # prefill) through the model's chat template.
        out.append({"role": "assistant", "content": prefill})
    return out


class OpenAIChatClient:
    """``ChatClient`` over the ``openai`` library: any OpenAI-compatible server."""

    def __init__(
        self, endpoint: Endpoint, *, timeout_s: float = 120.0, meter: Meter | None = None, stream: bool = False
    ) -> None:
        """``stream``: generations (calls without log-probabilities) are streamed, so a call given up
        after ``timeout_s`` closes its connection and a llama.cpp server stops generating for it;
        unstreamed, the server finishes an abandoned request and the next one queues behind it
        (measured: ``python -m benchmarks.lm_abandon``, docs/lm.md). On for the embedded server."""
        # lazy: start-up cost, openai takes 3.2 s to import
        import openai

        if endpoint.url is None:
            raise ValueError("OpenAIChatClient needs a server URL (the embedded LM provides one)")
        self.endpoint = endpoint
        self.model = endpoint.model or "default"
        self.name = endpoint.label or f"{endpoint.url} {self.model}"
        self.meter = meter or Meter()
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=endpoint.url,
            api_key=endpoint.token.get() if endpoint.token else "none",
            timeout=timeout_s,
            max_retries=0,
        )
        self.timeout_s = timeout_s
        self.stream = stream

    def with_timeout(self, seconds: float) -> OpenAIChatClient:
        """This client (same connections and meter) with a timeout of at most ``seconds``."""
        if seconds >= self.timeout_s:
            return self
        other = copy.copy(self)
        other.timeout_s = max(seconds, 0.001)
        other._client = self._client.with_options(timeout=other.timeout_s)
        return other

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        openai = self._openai
        call = CallParams(**params)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": _messages_with_prefill(messages, call.prefill),
            "max_tokens": call.max_tokens,
            "temperature": call.temperature,
        }
        if call.seed is not None:
            kwargs["seed"] = call.seed
        if call.top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = call.top_logprobs
        try:
            if self.stream and not call.top_logprobs:
                completion = self._streamed(kwargs)
                self.meter.record(completion)
                return completion
            resp = self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            self.meter.record(None)
            raise LMError("timeout", f"{self.endpoint.url}: no answer within the timeout") from exc
        except openai.APIConnectionError as exc:
            self.meter.record(None)
            raise LMError("connection", f"{self.endpoint.url}: {exc}") from exc
        except openai.APIStatusError as exc:
            self.meter.record(None)
            raise LMError("http", f"{self.endpoint.url}: HTTP {exc.status_code}") from exc
        except (openai.APIError, ValueError) as exc:  # malformed bodies (the library raises JSONDecodeError)
            self.meter.record(None)
            raise LMError("protocol", f"{self.endpoint.url}: malformed response: {type(exc).__name__}") from exc
        try:
            completion = _to_completion(resp)
        except (AttributeError, TypeError, ValueError) as exc:
            self.meter.record(None)
            raise LMError("protocol", f"{self.endpoint.url}: unexpected response shape: {exc}") from exc
        self.meter.record(completion)
        return completion

    def _streamed_chunks(self, kwargs: dict[str, Any]) -> tuple[list[str], Any, str | None]:
        """Text pieces, usage and finish reason of a streamed call, within ``timeout_s`` in total.

        Past the deadline the stream is closed: the server sees the connection go and cancels the
        generation, so an abandoned call does not hold its slot (the read timeout alone would only
        bound the gap between two chunks).
        """
        deadline = time.monotonic() + self.timeout_s
        pieces: list[str] = []
        usage, finish = None, None
        stream = self._client.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
        with stream:
            for chunk in stream:
                if time.monotonic() > deadline:
                    raise LMError(
                        "timeout",
                        f"{self.endpoint.url}: no complete answer within {self.timeout_s:.0f} s "
                        f"(the request was cancelled)",
                    )
                usage = getattr(chunk, "usage", None) or usage
                for choice in getattr(chunk, "choices", None) or ():
                    delta = getattr(choice, "delta", None)
                    if delta is not None and delta.content:
                        pieces.append(delta.content)
                    finish = choice.finish_reason or finish
        return pieces, usage, finish

    def _streamed(self, kwargs: dict[str, Any]) -> Completion:
        try:
            pieces, usage, finish = self._streamed_chunks(kwargs)
        except LMError:
            self.meter.record(None)
            raise
        tokens = (
            Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
            if usage is not None
            else Usage()
        )
        return Completion(text="".join(pieces), usage=tokens, finish_reason=finish)


def _to_completion(resp: Any) -> Completion:
    if not getattr(resp, "choices", None):
        raise LMError("protocol", "response has no choices")
    choice = resp.choices[0]
    text = (choice.message.content or "") if choice.message is not None else ""
    usage = (
        Usage(getattr(resp.usage, "prompt_tokens", 0) or 0, getattr(resp.usage, "completion_tokens", 0) or 0)
        if resp.usage is not None
        else Usage()
    )
    logprobs = None
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content:
        logprobs = tuple(
            TokenLogprob(
                token=item.token,
                logprob=float(item.logprob),
                top=tuple((alt.token, float(alt.logprob)) for alt in (item.top_logprobs or ())),
            )
            for item in content
        )
    return Completion(text=text, usage=usage, logprobs=logprobs, finish_reason=choice.finish_reason)


class LabelledClient:
    """``inner`` for one purpose: its failures say what the call was for (``polarity, miner honest-1``).

    A round makes many LM calls at once; a warning that reads "LM call failed: timeout" cannot be
    acted on, one that names the stage and the miner can. Everything else is ``inner``'s.
    """

    def __init__(self, inner: ChatClient, label: str) -> None:
        self.inner = inner
        self.label = label
        self.name = inner.name
        self.model = getattr(inner, "model", None)
        self.meter = getattr(inner, "meter", Meter())

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        try:
            return self.inner.complete(messages, **params)
        except LMError as exc:
            raise LMError(exc.kind, f"{self.label}: {str(exc).removeprefix(exc.kind + ': ')}") from exc


class DeadlineClient:
    """``inner`` within a time budget shared by all its calls (a stage's LM work, retries included).

    A call starts only while budget is left, and with at most what is left as its timeout
    (``inner.with_timeout``, when ``inner`` has it); past the deadline a call fails at once with
    ``LMError("timeout")``, so a checked generation's retries cannot run past the budget.
    ``spent`` tells afterwards whether the budget ran out.
    """

    def __init__(self, inner: ChatClient, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = getattr(inner, "model", None)
        self.meter = getattr(inner, "meter", Meter())
        self.seconds = seconds
        self.clock = clock
        self.deadline = clock() + seconds
        self.spent = False

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        left = self.deadline - self.clock()
        if left <= 0:
            self.spent = True
            raise BudgetSpent(f"the stage's LM budget of {self.seconds:.0f} s is spent")
        with_timeout = getattr(self.inner, "with_timeout", None)
        inner = with_timeout(left) if with_timeout is not None else self.inner
        try:
            return inner.complete(messages, **params)
        except LMError as exc:
            if exc.kind == "timeout" and self.deadline - self.clock() <= 0:
                self.spent = True
            raise


def labelled(client: ChatClient, stage: str, miner: str | None = None) -> LabelledClient:
    """``client`` whose failures name ``stage`` (polarity, factual, judging, narrative) and ``miner``."""
    # a miner id is untrusted: repr() escapes control characters, and it is cut to a readable length
    return LabelledClient(client, stage if miner is None else f"{stage}, miner {miner[:64]!r}")


class CachedClient:
    """A disk cache in front of a client, keyed by server, model, messages, parameters and sample index.

    Off for live scoring (the seed's reason: ensemble samples must be
    independent); on for replay, so a replayed round makes no LM call and
    reproduces the same numbers. Entries are JSON files written atomically.
    """

    def __init__(self, inner: ChatClient, directory: str | os.PathLike[str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = getattr(inner, "model", None)
        self.dir = Path(directory)
        self.meter = getattr(inner, "meter", Meter())

    def key(self, messages: Sequence[Message], params: dict[str, Any]) -> str:
        blob = json.dumps(
            {"server": self.name, "messages": list(messages), "params": params}, sort_keys=True, ensure_ascii=True
        )
        return hashlib.sha256(blob.encode("ascii")).hexdigest()

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        params = asdict(CallParams(**params))
        key = self.key(messages, params)
        path = self.dir / key[:2] / f"{key}.json"
        try:
            data = json.loads(path.read_text())
            completion = _completion_from_json(data)
            self.meter.record(completion)
            return completion
        except (OSError, ValueError, KeyError, TypeError):
            pass
        completion = self.inner.complete(messages, **params)
        write_atomic(path, json.dumps(asdict(completion), ensure_ascii=True).encode(), fsync=False)  # a cache
        return completion


def _completion_from_json(data: dict[str, Any]) -> Completion:
    logprobs = data.get("logprobs")
    return Completion(
        text=data["text"],
        usage=Usage(**data["usage"]),
        finish_reason=data.get("finish_reason"),
        cached=True,
        logprobs=None
        if logprobs is None
        else tuple(
            TokenLogprob(item["token"], item["logprob"], tuple((t, lp) for t, lp in item["top"])) for item in logprobs
        ),
    )
