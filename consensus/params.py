"""Declared settings: each field declared once with its constraint, checked by one function.

Every config section (``consensus.config``, ``emissions.config``, the validator's settings, the judge's)
declares each field once: its type, its default, its constraint (``param``, as scikit-learn declares
``_parameter_constraints``: an ``Interval`` with ``lo``/``hi``, ``Options`` for ``choices``; a field with a plain
default has its type's constraint alone) and its doc (the docstring under the field, or ``param``'s ``doc``).
``check_fields`` (called by each dataclass's ``__post_init__``) is the one validation path: it reads the
constraints and raises ``ConfigError`` naming the offending ``section.field``.

A config made of sections (``consensus.config.ConsensusConfig``: one frozen dataclass per stage) is
addressed by dotted names (``quality.coverage_pooled``): ``leaves``, ``flatten`` and ``build`` walk it. A key
that no longer names a field is declared in the class's ``DEPRECATED`` table with a ``Deprecated`` marker:
renamed (``new`` names the key that replaces it), moved out of the section, or retired into a module
constant (``value`` is the constant, ``note`` where it lives), or retired with its behaviour (``retired`` names
when; ``value`` is the product's behaviour, the old default, still accepted with a warning; ``note`` says where
the behaviour went). An option retired from a field's choices is declared with it (``param(..., retired=...)``):
a settings file asking for it gets one line saying so; a record holding it reads it as not recorded.
``resolve`` turns an old key into today's and says why, for the settings reader's one-line warning and the
reader of older records. scripts/gen_config_docs.py writes docs/configuration.md from the declarations.
Public: other packages import it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from consensus.errors import ConfigError


class ConfigDeprecationWarning(FutureWarning):
    """A settings key that still reads but is deprecated (renamed, moved to a section); shown to operators."""


@dataclass(frozen=True)
class Interval:
    """A number between ``lo`` and ``hi`` (None: unbounded); ``lo_open``: ``lo`` itself is excluded."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False

    def check(self, value: float) -> str | None:
        if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
            return f"must be {'>' if self.lo_open else '>='} {self.lo}, got {value!r}"
        if self.hi is not None and value > self.hi:
            return f"must be <= {self.hi}, got {value!r}"
        return None

    def __str__(self) -> str:
        left = "-inf" if self.lo is None else f"{self.lo:g}"
        right = "inf" if self.hi is None else f"{self.hi:g}"
        return f"{'(' if self.lo_open or self.lo is None else '['}{left}, {right}{')' if self.hi is None else ']'}"


@dataclass(frozen=True)
class Options:
    """One of ``values``; ``retired``: (option, why) of options no longer offered, refused with their why."""

    values: tuple[Any, ...]
    retired: tuple[tuple[Any, str], ...] = ()

    def check(self, value: Any) -> str | None:
        if value in self.values:
            return None
        why = self.why_retired(value)
        if why is not None:
            return f"{value!r} {why}; use one of {', '.join(map(str, self.values))}"
        close = (
            difflib.get_close_matches(str(value), list(map(str, self.values)), n=1) if isinstance(value, str) else []
        )
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"must be one of {', '.join(map(str, self.values))}; got {value!r}{hint}"

    def why_retired(self, value: Any) -> str | None:
        return next((why for option, why in self.retired if option == value and isinstance(value, str)), None)

    def __str__(self) -> str:
        return " | ".join(map(str, self.values))


@dataclass(frozen=True)
class Deprecated:
    """A key that no longer names a field of its section (see the module docstring).

    ``new``: the dotted name that replaces it (``filters.length_tolerance``; a name whose first part is another
    settings section, ``output.heatmap``, when it left the config); None when it became a module constant, whose
    value is ``value`` and place ``note``, or when its behaviour was retired (``retired``: when, "commit 663e260 (2026-11-26)";
    ``value``: what the product does, the old default; ``note``: where the behaviour went and what to do).
    ``aliases``: other variable names it was read from (the seed's ``ENSEMBLE``), refused or warned about alike.
    """

    new: str | None = None
    note: str = ""
    value: Any = None
    retired: str = ""
    aliases: tuple[str, ...] = ()

    def refusal(self, name: str) -> str:
        """The one line refusing ``name`` (``section.key``) set to anything but ``value``."""
        if self.retired:
            return f"{name} was retired in {self.retired}: {self.note}; remove the setting"
        return f"no longer a setting: the constant {self.note} = {self.value!r}; remove the setting"

    def warning(self, name: str) -> str:
        """The one line accepting ``name`` set to ``value`` (what the product does anyway)."""
        if self.retired:
            shown = str(self.value).lower() if isinstance(self.value, bool) else repr(self.value)
            return f"{name} = {shown} is ignored: {name} was retired in {self.retired}: {self.note}; remove the setting"
        return f"no longer a setting (the constant {self.note} = {self.value!r}): ignored; remove the setting"


SHARE = Interval(0.0, 1.0)  # a share or a weight
Constraint = Interval | Options


def param(
    default: Any,
    doc: str = "",
    *,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple[Any, ...] | None = None,
    lo_open: bool = False,
    within: Constraint | None = None,
    retired: Mapping[Any, str] | None = None,
) -> Any:
    """A dataclass field with its constraint: ``within``, else ``Options`` from ``choices`` (``retired``: options no
    longer offered -> why, "was retired in commit 663e260 (2026-11-26): ..."), else an ``Interval`` from ``lo``/``hi``, else the
    default's type alone. Its doc is the docstring under the field (or ``doc``)."""
    constraint = within
    if constraint is None and choices is not None:
        constraint = Options(tuple(choices), tuple((retired or {}).items()))
    elif constraint is None and (lo is not None or hi is not None):
        constraint = Interval(lo, hi, lo_open)
    return dataclasses.field(default=default, metadata={"doc": doc, "constraint": constraint})


def section(cls: type) -> Any:
    """A field holding a whole section (a frozen dataclass of ``param`` fields), default-constructed."""
    return dataclasses.field(default_factory=cls, metadata={"doc": (cls.__doc__ or "").strip()})


def constraint_of(f: dataclasses.Field[Any]) -> Constraint | None:
    return f.metadata.get("constraint")


def choices_of(f: dataclasses.Field[Any]) -> tuple[Any, ...] | None:
    c = constraint_of(f)
    return c.values if isinstance(c, Options) else None


def _type_error(default: Any, value: Any) -> str | None:
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"expected true/false, got {value!r}"
    if isinstance(default, (int, float)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected a number, got {value!r}"
        if isinstance(default, int) and not isinstance(value, int):
            return f"expected an integer, got {value!r}"
        return None if math.isfinite(value) else f"must be finite, got {value!r}"
    if isinstance(default, str) and not isinstance(value, str):
        return f"expected a string, got {value!r}"
    return None


def check_fields(obj: Any, section: str) -> None:
    """Check every field of ``obj`` against its type and constraint; ``ConfigError`` names the first bad one.

    A field holding a section is left to that section's own check (it ran when the section was made)."""
    for f in dataclasses.fields(obj):
        if _is_section(f):
            continue
        value = getattr(obj, f.name)
        why = _type_error(f.default, value)
        constraint = constraint_of(f)
        if why is None and constraint is not None and not isinstance(f.default, bool):
            why = constraint.check(value)
        if why is not None:
            raise ConfigError(f"{section}.{f.name}", why)


def section_type(f: dataclasses.Field[Any]) -> type | None:
    """The class of a field that holds a whole section (its default is one, or makes one); None otherwise."""
    made = f.default_factory if f.default is dataclasses.MISSING else type(f.default)
    return made if isinstance(made, type) and dataclasses.is_dataclass(made) else None


def _is_section(f: dataclasses.Field[Any]) -> bool:
    return section_type(f) is not None


def leaves(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """Every setting of ``cls`` by its dotted name (``quality.coverage_pooled``; a plain section's are bare)."""
    out: dict[str, dataclasses.Field[Any]] = {}
    for f in dataclasses.fields(cls):
        if _is_section(f):
            out |= {f"{f.name}.{k}": v for k, v in leaves(section_type(f)).items()}  # type: ignore[arg-type]
        else:
            out[f.name] = f
    return out


def flatten(obj: Any) -> dict[str, Any]:
    """Every setting's value by its dotted name, in declaration order."""
    return {name: _get(obj, name) for name in leaves(type(obj))}


def _get(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def build(cls: type, values: Mapping[str, Any], where: str, base: Any = None) -> Any:
    """``cls`` (or ``base`` with these changes) from dotted names; an unknown name is a ``ConfigError``."""
    known = leaves(cls)
    for key in values:
        if key not in known:
            raise ConfigError(f"{where}.{key}", "unknown setting")
    return _build(cls, values, base)


def _build(cls: type, values: Mapping[str, Any], base: Any) -> Any:
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if _is_section(f):
            inner = {k.partition(".")[2]: v for k, v in values.items() if k.partition(".")[0] == f.name}
            if inner or base is not None:
                kwargs[f.name] = _build(section_type(f), inner, None if base is None else getattr(base, f.name))  # type: ignore[arg-type]
        elif f.name in values:
            kwargs[f.name] = values[f.name]
    return cls(**kwargs) if base is None else dataclasses.replace(base, **kwargs)


def resolve(cls: type, key: str) -> tuple[str | None, Deprecated | None, str]:
    """Today's dotted name of ``key`` for ``cls``, the marker if it is deprecated, and a one-line reason.

    A dotted name of today is itself (no marker). A bare name of a setting that moved into a section (the
    flat ``[consensus]`` keys) is its dotted name, with an implicit marker; a key of the class's
    ``DEPRECATED`` table is its ``new`` (None: retired or moved out). An unknown key gives (None, None, "").
    """
    known = leaves(cls)
    if key in known:
        return key, None, ""
    table: Mapping[str, Deprecated] = getattr(cls, "DEPRECATED", {})
    if key in table:
        mark = table[key]
        if mark.new is None:
            return None, mark, mark.refusal(key).removesuffix("; remove the setting")
        if mark.new not in known:
            return None, mark, f"moved: now {mark.new}" + (f" ({mark.note})" if mark.note else "")
        return mark.new, mark, f"renamed: now {mark.new}" + (f" ({mark.note})" if mark.note else "")
    by_leaf = [name for name in known if name.rpartition(".")[2] == key]
    if len(by_leaf) == 1:
        return by_leaf[0], Deprecated(by_leaf[0]), f"a flat key: now {by_leaf[0]} (its section's table)"
    return None, None, ""


def plain(obj: Any) -> dict[str, Any]:
    """A section's JSON form, field -> value; a config of sections lists its sections' settings by their own
    names, one flat table (the form records have always kept: names are unique across a config's sections)."""
    return {name.rpartition(".")[2]: value for name, value in flatten(obj).items()}


def from_plain(cls: type, data: Mapping[str, Any]) -> tuple[dict[str, Any], set[str], list[str]]:
    """Read ``plain``'s form, of today or older: (dotted name -> value, the leaf names it did not hold, keys that
    are not settings of ``cls``). A deprecated key is read as its replacement; a retired or moved one is dropped,
    and so is a retired option (``Options.retired``): that setting reads as not recorded."""
    values: dict[str, Any] = {}
    unknown: list[str] = []
    known = leaves(cls)
    for key, value in data.items():
        name, mark, _ = resolve(cls, str(key))
        constraint = constraint_of(known[name]) if name is not None else None
        if isinstance(constraint, Options) and constraint.why_retired(value) is not None:
            continue
        if name is not None and mark is None:
            values[name] = value
        elif name is not None:
            values.setdefault(name, value)  # a key of today wins over an older name of it
        elif mark is None:
            unknown.append(str(key))
    absent = {n.rpartition(".")[2] for n in leaves(cls) if n not in values}
    return values, absent, unknown


def from_mapping(cls: type, data: dict[str, Any], section: str) -> Any:
    """Build ``cls`` from a mapping, rejecting unknown keys by name."""
    known = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in known:
            raise ConfigError(f"{section}.{key}", f"unknown setting (known: {', '.join(sorted(known))})")
    return cls(**data)
