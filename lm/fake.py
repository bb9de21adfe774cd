"""A chat client in memory, as httpx ships ``MockTransport``: scripted answers and log-probabilities, no server.

``FakeChatClient`` is a ``lm.client.ChatClient``: hand it wherever a client
goes (``validator.round.stages.LMHandle``, the judge, SelectIT, the narrative). Its
answers come from a function of the request, a fixed text, or a script (one
answer per call, the last repeated); ``logprob_completion`` builds a
completion with the per-token top log-probabilities that yes/no scoring and
SelectIT read. Every call is kept (``calls``) and metered (``meter``), and
``peak`` is the most calls that were in flight at once. For wire-level cases
(HTTP errors, malformed bodies, llama.cpp's tokenizer) a test serves a fake
server on loopback instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from lm.client import CallParams, Completion, Message, Meter, TokenLogprob, Usage
from lm.errors import LMError

Reply = Completion | str
Answer = Callable[..., Reply] | Reply | Sequence[Reply]


def user_text(body_or_messages: Any) -> str:
    """The user turns of a request (a chat body or its messages), joined: what a scripted answer reads."""
    messages = body_or_messages["messages"] if isinstance(body_or_messages, dict) else body_or_messages
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


def logprob_completion(*positions: list[tuple[str, float]]) -> Completion:
    """A completion whose generated tokens are the first entries of ``positions`` (each a top list)."""
    return Completion(
        "".join(p[0][0] for p in positions),
        Usage(10, len(positions)),
        tuple(TokenLogprob(p[0][0], p[0][1], tuple(p)) for p in positions),
    )


class FakeChatClient:
    """A ``ChatClient`` in memory (module docstring).

    ``answer``: ``fn(messages, **params)`` returning a ``Completion`` or a text (or raising
    ``LMError``), a text or ``Completion`` for every call, or a sequence of them, one per call.
    A text is returned as a completion with usage (10 prompt tokens, 2 completion tokens).
    """

    def __init__(self, answer: Answer, name: str = "fake", model: str = "fake") -> None:
        self.answer = answer
        self.name = name
        self.model = model  # the yes/no calibration is looked up by model name
        self.meter = Meter()
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.active = 0
        self.peak = 0  # most calls in flight at once

    def _reply(self, messages: Sequence[Message], index: int, **params: Any) -> Reply:
        if callable(self.answer):
            return self.answer(messages, **params)
        if isinstance(self.answer, (str, Completion)):
            return self.answer
        script = list(self.answer)
        return script[min(index, len(script) - 1)]

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        call = asdict(CallParams(**params))
        with self._lock:
            index = len(self.calls)
            self.calls.append({"messages": list(messages), **call})
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            out = self._reply(messages, index, **call)
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
