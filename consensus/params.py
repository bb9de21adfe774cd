"""Declared settings: one table of limits per frozen config dataclass, checked once.

Every config section (``consensus.config``, ``emissions.config``, the
validator's settings, the judge's) declares its fields with ``param``: a
default, a one-line doc and its limits (``lo``/``hi``, ``choices``). The
dataclass's ``__post_init__`` calls ``check_fields``, which validates types
and limits once, at construction, and raises ``ConfigError`` naming the
offending ``section.field``. ``from_mapping`` builds a section from parsed
input, rejecting unknown keys by name; ``describe`` lists (name, default,
doc) for ``--help`` and for docs/configuration.md (``scripts/gen_config_docs.py``).
Public: other packages import it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from consensus.errors import ConfigError


def param(
    default: Any,
    doc: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple[Any, ...] | None = None,
    lo_open: bool = False,
) -> Any:
    """A dataclass field with a one-line doc and its limits."""
    return dataclasses.field(
        default=default,
        metadata={"doc": doc, "lo": lo, "hi": hi, "choices": choices, "lo_open": lo_open},
    )


def check_fields(obj: Any, section: str) -> None:
    """Check every field of ``obj`` against its declared type and limits; ``ConfigError`` names the first bad one."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        name = f"{section}.{f.name}"
        meta = f.metadata
        default = f.default
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(name, f"expected true/false, got {value!r}")
            continue
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(name, f"expected a number, got {value!r}")
            if isinstance(default, int) and not isinstance(value, int):
                raise ConfigError(name, f"expected an integer, got {value!r}")
            if not math.isfinite(value):
                raise ConfigError(name, f"must be finite, got {value!r}")
            lo, hi = meta.get("lo"), meta.get("hi")
            if lo is not None and (value < lo or (meta.get("lo_open") and value == lo)):
                op = ">" if meta.get("lo_open") else ">="
                raise ConfigError(name, f"must be {op} {lo}, got {value!r}")
            if hi is not None and value > hi:
                raise ConfigError(name, f"must be <= {hi}, got {value!r}")
        if isinstance(default, str) and not isinstance(value, str):
            raise ConfigError(name, f"expected a string, got {value!r}")
        choices = meta.get("choices")
        if choices is not None and value not in choices:
            raise ConfigError(name, f"must be one of {', '.join(map(str, choices))}; got {value!r}")


def from_mapping(cls: type, data: dict[str, Any], section: str) -> Any:
    """Build ``cls`` from a mapping, rejecting unknown keys by name."""
    known = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in known:
            raise ConfigError(f"{section}.{key}", f"unknown setting (known: {', '.join(sorted(known))})")
    return cls(**data)


def describe(cls: type) -> list[tuple[str, Any, str]]:
    """(name, default, doc) for every field: used by docs and --help."""
    return [(f.name, f.default, f.metadata.get("doc", "")) for f in dataclasses.fields(cls)]
