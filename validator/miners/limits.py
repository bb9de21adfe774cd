"""``QueryLimits``: how long a round's query may take and how much it may read, as one checked value.

The daemon builds it from its settings (``QueryLimits.from_settings``); tests
and benchmarks build it directly. Every field is checked once, when the value
is made, so ``query_miners`` never starts a round with a nonsensical limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


def default_max_body_bytes(max_answer_chars: int) -> int:
    """The body cap implied by an answer cap: JSON escapes, log-probabilities and envelope included."""
    # a character costs up to 12 bytes escaped (\\ud83d\\ude00 for 2), and each token's
    # log-probability entry (~100 bytes for ~4 characters) adds ~25 bytes per character
    return 65_536 + 48 * max_answer_chars


def _seconds(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")


def _count(name: str, value: Any, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class QueryLimits:
    """The limits of one round's query (docs/miners.md, "Timeouts and the deadline").

    ``request_timeout_s``: a miner's own clock, from its request being sent (a spec's
    ``timeout_s`` overrides it); ``deadline_s``: the whole query's clock;
    ``max_answer_chars``: longer answers fail as ``oversized``; ``max_tokens``: asked of
    every miner; ``logprobs``: ask for token log-probabilities (the confidence);
    ``max_connections``: concurrent connections (None: one per miner);
    ``max_body_bytes``: the body cap (None: ``default_max_body_bytes(max_answer_chars)``).
    """

    request_timeout_s: float
    deadline_s: float
    max_answer_chars: int
    max_tokens: int
    logprobs: bool = True
    max_connections: int | None = None
    max_body_bytes: int | None = None

    def __post_init__(self) -> None:
        _seconds("request_timeout_s", self.request_timeout_s)
        _seconds("deadline_s", self.deadline_s)
        _count("max_answer_chars", self.max_answer_chars)
        _count("max_tokens", self.max_tokens)
        _count("max_connections", self.max_connections, optional=True)
        _count("max_body_bytes", self.max_body_bytes, optional=True)
        if not isinstance(self.logprobs, bool):
            raise ValueError(f"logprobs must be true or false, got {self.logprobs!r}")

    @property
    def body_cap(self) -> int:
        """The number of body bytes read before a miner fails as ``oversized``."""
        return self.max_body_bytes or default_max_body_bytes(self.max_answer_chars)

    @classmethod
    def from_settings(cls, daemon: Any) -> "QueryLimits":
        """The limits in a ``validator.settings`` daemon section."""
        return cls(request_timeout_s=daemon.request_timeout_s, deadline_s=daemon.round_deadline_s,
                   max_answer_chars=daemon.max_answer_chars, max_tokens=daemon.max_tokens)
