"""Errors raised by the consensus core.

Every error derives from a standard library type so callers can catch broadly::

    ValueError
     +-- ConfigError            a configuration field is out of range or of the wrong type
     +-- RoundError             a round cannot be evaluated (names the round and the field)
    RuntimeError
     +-- EmbeddingError         the embedding model could not be loaded or run
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class RoundError(ValueError):
    """A round is malformed; the message names the round (or line) and the field."""

    def __init__(self, where: str, field: str | None, message: str) -> None:
        location = where if field is None else f"{where}, field {field!r}"
        super().__init__(f"{location}: {message}")
        self.where = where
        self.field = field


class EmbeddingError(RuntimeError):
    """The embedding model could not be prepared or run."""
