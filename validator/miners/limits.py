"""``QueryLimits``: how long a round's query may take and how much it may read, as one checked value.

The daemon builds it from its settings (``QueryLimits.from_settings``); tests
and benchmarks build it directly. Its fields are declared with ``param`` (the
ones the daemon's settings also hold are taken over from them, defaults and
limits included) and checked once, when the value is made, so
``query_miners`` never starts a round with a nonsensical limit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from consensus.params import check_fields, param
from validator.settings.sections import DaemonSettings, like


def _daemon(setting: str) -> Any:
    """A field declared as the daemon's ``setting`` is (``like``), remembered for ``QueryLimits.from_settings``."""
    f = like(DaemonSettings, setting)
    return dataclasses.field(default=f.default, repr=f.repr, metadata={**f.metadata, "setting": setting})


def default_max_body_bytes(max_answer_chars: int) -> int:
    """The body cap implied by an answer cap: JSON escapes, log-probabilities and envelope included."""
    # a character costs up to 12 bytes escaped (\\ud83d\\ude00 for 2), and each token's
    # log-probability entry (~100 bytes for ~4 characters) adds ~25 bytes per character
    return 65_536 + 48 * max_answer_chars


@dataclass(frozen=True)
class QueryLimits:
    """The limits of one round's query (docs/miners.md, "Timeouts and the deadline").

    The first four are the daemon's settings of the same meaning, declared once there
    (``validator.settings.DaemonSettings``): ``request_timeout_s`` is a miner's own clock, from
    its request being sent (a spec's ``timeout_s`` overrides it); ``deadline_s`` the whole
    query's clock; ``max_answer_chars``: longer answers fail as ``oversized``; ``max_tokens``:
    asked of every miner. Every field is checked once, when the value is made (``ConfigError``,
    a ``ValueError``, naming ``query.<field>``).
    """

    request_timeout_s: float = _daemon("request_timeout_s")
    deadline_s: float = _daemon("round_deadline_s")
    max_answer_chars: int = _daemon("max_answer_chars")
    max_tokens: int = _daemon("max_tokens")
    logprobs: bool = param(True, "Ask for token log-probabilities (the confidence).")
    max_connections: int = param(0, "Concurrent connections; 0 = one per miner.", lo=0)
    max_body_bytes: int = param(
        0, "Body bytes read before a miner fails as oversized; 0 = default_max_body_bytes(max_answer_chars).", lo=0
    )

    def __post_init__(self) -> None:
        check_fields(self, "query")

    @property
    def body_cap(self) -> int:
        """The number of body bytes read before a miner fails as ``oversized``."""
        return self.max_body_bytes or default_max_body_bytes(self.max_answer_chars)

    @classmethod
    def from_settings(cls, daemon: Any) -> QueryLimits:
        """The limits in a ``validator.settings`` daemon section: each field declared with ``_daemon``."""
        taken = (f for f in dataclasses.fields(cls) if "setting" in f.metadata)
        return cls(**{f.name: getattr(daemon, f.metadata["setting"]) for f in taken})
