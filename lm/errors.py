"""Errors of the LM layer.

RuntimeError
 +-- LMError              a call to the LM server failed (HTTP, timeout, connection)
 +-- LocalServerError     the embedded local LM could not be prepared or started
"""

from __future__ import annotations


class LMError(RuntimeError):
    """A call to the LM failed; ``kind`` is one of http, timeout, connection, protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


class BudgetSpent(LMError):
    """The call was not made: its stage's time budget is spent (``lm.client.DeadlineClient``). Never retried."""

    def __init__(self, message: str) -> None:
        super().__init__("timeout", message)


class LocalServerError(RuntimeError):
    """The embedded local LM server could not be prepared or started."""
