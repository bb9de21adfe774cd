"""In-memory LM fakes for tests: a chat client that calls a function, and helpers to read its calls.

The fake server on loopback lives in ``tests.lm.fake_server`` (re-exported here).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from lm.client import Completion, TokenLogprob, Usage
from lm.errors import LMError
from tests.lm.fake_server import FakeServer, toy_detokenize, toy_tokenize  # noqa: F401  (re-exported)


def user_text(body_or_messages: Any) -> str:
    messages = body_or_messages["messages"] if isinstance(body_or_messages, dict) else body_or_messages
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


class FunctionClient:
    """A ``ChatClient`` in memory: ``fn(messages, **params)`` returns a Completion, a text, or raises LMError."""

    def __init__(self, fn: Callable[..., Any], name: str = "fake") -> None:
        from lm.client import Meter

        self.fn = fn
        self.name = name
        self.meter = Meter()
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.active = 0
        self.peak = 0  # most calls in flight at once

    def complete(self, messages, *, max_tokens, temperature=0.0, seed=None, top_logprobs=0, prefill=None):
        with self._lock:
            self.calls.append({"messages": list(messages), "max_tokens": max_tokens, "temperature": temperature,
                               "seed": seed, "top_logprobs": top_logprobs, "prefill": prefill})
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            out = self.fn(messages, max_tokens=max_tokens, temperature=temperature, seed=seed,
                          top_logprobs=top_logprobs, prefill=prefill)
        except LMError:
            self.meter.record(None)
            raise
        finally:
            with self._lock:
                self.active -= 1
        if isinstance(out, str):
            out = Completion(out, Usage(10, 2))
        self.meter.record(out)
        return out


def logprob_completion(*positions: list[tuple[str, float]]) -> Completion:
    """A completion whose generated tokens are the first entries of ``positions`` (each a top list)."""
    return Completion("".join(p[0][0] for p in positions), Usage(10, len(positions)),
                      tuple(TokenLogprob(p[0][0], p[0][1], tuple(p)) for p in positions))
