"""Errors of the judging package.

Every error derives from a standard library type::

    ValueError
     +-- consensus.errors.ConfigError
     |    +-- JudgeConfigError     a setting (YAML key, flag, environment variable) is invalid; names it
     +-- InputError           an input file cannot be used (missing column, empty, malformed); names file and line
    RuntimeError
     +-- RatingTokenError     the model's tokenizer cannot express a rating as one token (SelectIT needs that)

Calls to a server fail with ``lm.errors.LMError`` (HTTP, timeout, connection);
judging and scoring turn those into per-row errors rather than raising, so no
row is lost.
"""

from __future__ import annotations

from consensus.errors import ConfigError


class JudgeConfigError(ConfigError):
    """A configuration value is invalid; ``where`` names the key, flag or variable.

    The field-range checks shared with the rest of the project raise the parent
    ``ConfigError``; catch that to get both.
    """

    def __init__(self, where: str, message: str) -> None:
        super().__init__(where, message)
        self.where = where


class InputError(ValueError):
    """An input file is unusable; ``where`` is the file, with the line or row when one is at fault."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


class RatingTokenError(RuntimeError):
    """A rating ("1".."5") is not a single token of the model's tokenizer."""
