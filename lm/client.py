"""The chat client: one small interface over any OpenAI-compatible server.

``ChatClient.complete`` sends chat messages and returns the text, the
first tokens' log-probabilities when asked, and token usage. The real
implementation uses the ``openai`` library; ``CachedClient`` wraps any client
with a disk cache (replay); tests use a fake server on loopback.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from lm.config import Endpoint
from lm.errors import LMError

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


class ChatClient(Protocol):
    """What the LM layer needs from a server."""

    name: str  # "<url> <model>", used in cache keys and logs (never holds the token)

    def complete(self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0,
                 seed: int | None = None, top_logprobs: int = 0, prefill: str | None = None) -> Completion:
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
            return {"calls": self.calls, "cached": self.cached, "failures": self.failures,
                    "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


def _messages_with_prefill(messages: Sequence[Message], prefill: str | None) -> list[Message]:
    out = [dict(m) for m in messages]
    if prefill:
        # llama.cpp's server continues a trailing assistant message (assistant
        # prefill) through the model's chat template.
        out.append({"role": "assistant", "content": prefill})
    return out


class OpenAIChatClient:
    """``ChatClient`` over the ``openai`` library: any OpenAI-compatible server."""

    def __init__(self, endpoint: Endpoint, *, timeout_s: float = 120.0, meter: Meter | None = None) -> None:
        import openai

        if endpoint.url is None:
            raise ValueError("OpenAIChatClient needs a server URL (the embedded LM provides one)")
        self.endpoint = endpoint
        self.model = endpoint.model or "default"
        self.name = endpoint.label or f"{endpoint.url} {self.model}"
        self.meter = meter or Meter()
        self._openai = openai
        self._client = openai.OpenAI(base_url=endpoint.url,
                                     api_key=endpoint.token.get() if endpoint.token else "none",
                                     timeout=timeout_s, max_retries=0)

    def complete(self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0,
                 seed: int | None = None, top_logprobs: int = 0, prefill: str | None = None) -> Completion:
        openai = self._openai
        kwargs: dict[str, Any] = {"model": self.model, "messages": _messages_with_prefill(messages, prefill),
                                  "max_tokens": max_tokens, "temperature": temperature}
        if seed is not None:
            kwargs["seed"] = seed
        if top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = top_logprobs
        try:
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


def _to_completion(resp: Any) -> Completion:
    if not getattr(resp, "choices", None):
        raise LMError("protocol", "response has no choices")
    choice = resp.choices[0]
    text = (choice.message.content or "") if choice.message is not None else ""
    usage = Usage(getattr(resp.usage, "prompt_tokens", 0) or 0, getattr(resp.usage, "completion_tokens", 0) or 0) \
        if resp.usage is not None else Usage()
    logprobs = None
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content:
        logprobs = tuple(
            TokenLogprob(token=item.token, logprob=float(item.logprob),
                         top=tuple((alt.token, float(alt.logprob)) for alt in (item.top_logprobs or ())))
            for item in content)
    return Completion(text=text, usage=usage, logprobs=logprobs, finish_reason=choice.finish_reason)


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
        blob = json.dumps({"server": self.name, "messages": list(messages), "params": params},
                          sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(blob.encode("ascii")).hexdigest()

    def complete(self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0,
                 seed: int | None = None, top_logprobs: int = 0, prefill: str | None = None) -> Completion:
        params = {"max_tokens": max_tokens, "temperature": temperature, "seed": seed,
                  "top_logprobs": top_logprobs, "prefill": prefill}
        key = self.key(messages, params)
        path = self.dir / key[:2] / f"{key}.json"
        try:
            data = json.loads(path.read_text())
            completion = _completion_from_json(data)
            self.meter.record(completion)
            return completion
        except (OSError, ValueError, KeyError, TypeError):
            pass
        completion = self.inner.complete(messages, max_tokens=max_tokens, temperature=temperature, seed=seed,
                                         top_logprobs=top_logprobs, prefill=prefill)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(asdict(completion), ensure_ascii=True))
        os.replace(tmp, path)
        return completion


def _completion_from_json(data: dict[str, Any]) -> Completion:
    logprobs = data.get("logprobs")
    return Completion(
        text=data["text"], usage=Usage(**data["usage"]), finish_reason=data.get("finish_reason"), cached=True,
        logprobs=None if logprobs is None else tuple(
            TokenLogprob(item["token"], item["logprob"], tuple((t, lp) for t, lp in item["top"])) for item in logprobs))
