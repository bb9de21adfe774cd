"""A round that was not evaluated, and why: one row type for the replay summary, the replay diff and what-if.

Each report writes its rows in the shape it always had (its JSON is read by
people and tools): ``line_row`` for ``summary.json``, ``store_row`` for
``replays/<id>.json``, ``whatif_row`` for ``whatif.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Failure:
    error: str
    round_id: str | None = None  # None: the input could not be read far enough to know it
    line: int | None = None  # a rounds file's line (file replay)
    key: str | None = None  # the stored input's key (store replay, what-if)

    def line_row(self) -> dict[str, Any]:
        """``{"line", "round_id" (when known), "error"}``."""
        return {
            "line": self.line,
            **({} if self.round_id is None else {"round_id": self.round_id}),
            "error": self.error,
        }

    def store_row(self) -> dict[str, Any]:
        """``{"round_id", "error"}``, or ``{"key", "error"}`` when the round is not known."""
        return (
            {"key": self.key, "error": self.error}
            if self.round_id is None
            else {"round_id": self.round_id, "error": self.error}
        )

    def whatif_row(self) -> dict[str, Any]:
        """``{"key", "round_id", "error"}``."""
        return {"key": self.key, "round_id": self.round_id, "error": self.error}
