"""Canonical JSON for stored documents, and the mapping between frozen dataclasses and plain JSON values.

``dumps``/``loads`` are the bytes; ``to_plain``/``from_plain`` turn a tree of
frozen dataclasses (the evaluation record, ``validator.records.evaluation_record``) into JSON
values and back, driven by the fields' type hints and ``field_spec`` options,
so a record type is declared once and both directions follow from it.
``from_plain`` checks every value's type and refuses unknown or missing keys
with a ``CodecError`` naming the path (``responses[3].score.alignment``).

A type with a JSON form of its own (a record's settings, whose sections are
the settings' own classes) defines ``__to_plain__(self)`` and the class
method ``__from_plain__(value, path)``; both directions then call it.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import json
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, cast


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` so the same value always gives the same bytes.

    ASCII-only (every non-ASCII character escaped, so lone surrogates in
    untrusted ids cannot break the encoding), 2-space indent, NaN/inf refused.
    """
    return (json.dumps(obj, ensure_ascii=True, indent=2, allow_nan=False) + "\n").encode("ascii")


def loads(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


class CodecError(ValueError):
    """A JSON value that does not fit its declared type: ``path`` is where, ``why`` what is wrong."""

    def __init__(self, path: Any, why: str) -> None:
        path = _render(path)
        super().__init__(f"field {path!r}: {why}")
        self.path, self.why = path, why


def _render(path: DecodePath) -> str:
    """A decoding path as text: ``path`` is "" (the top), a string, or a chain ``(parent, key or index)``
    built while decoding and turned into text only when an error names it."""
    if not isinstance(path, tuple):
        return path
    parent, step = path
    head = _render(parent)
    if isinstance(step, int):
        return f"{head}[{step}]"
    return f"{head}.{step}" if head else step


def field_spec(
    default: Any = dataclasses.MISSING,
    *,
    key: str | None = None,
    only_if: str | None = None,
    omit_none: bool = False,
    since: int = 0,
) -> Any:
    """A dataclass field with JSON options.

    ``key``: the JSON name when it differs from the attribute. ``only_if``: the
    field exists only when that flag is set (``to_plain``/``from_plain`` take the
    flags): left out otherwise, required when set. ``omit_none``: left out when
    ``None``. ``since``: the schema minor that added it (documentation).
    """
    meta = {"key": key, "only_if": only_if, "omit_none": omit_none, "since": since}
    return (
        dataclasses.field(metadata=meta)
        if default is dataclasses.MISSING
        else dataclasses.field(default=default, metadata=meta)
    )


def _key(f: dataclasses.Field[Any]) -> str:
    return f.metadata.get("key") or f.name


@functools.cache
def _plan(cls: type) -> tuple[tuple[str, str, str | None, bool], ...]:
    """Per dataclass, once: (attribute, JSON key, only_if, omit_none) of each field, in order."""
    return tuple(
        (f.name, _key(f), f.metadata.get("only_if"), bool(f.metadata.get("omit_none"))) for f in dataclasses.fields(cls)
    )


def to_plain(value: Any, flags: frozenset[str] = frozenset()) -> Any:
    """JSON values for a tree of dataclasses, tuples, mappings and scalars (field order kept)."""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return value
    own = getattr(type(value), "__to_plain__", None)
    if own is not None:
        return own(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name, key, only_if, omit_none in _plan(type(value)):
            item = getattr(value, name)
            if (only_if is not None and only_if not in flags) or (omit_none and item is None):
                continue
            out[key] = to_plain(item, flags)
        return out
    if isinstance(value, (tuple, list)):
        return [to_plain(v, flags) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_plain(v, flags) for k, v in value.items()}
    return value


# where a value is: "" (the top), a key, or (parent, key or index); text only when an error names it (_render)
DecodePath: TypeAlias = "str | tuple[DecodePath, str | int]"
Decoder: TypeAlias = "Callable[[Any, frozenset[str], DecodePath], Any]"


def from_plain(tp: Any, value: Any, flags: frozenset[str] = frozenset(), path: str = "") -> Any:
    """The value of type ``tp`` (a dataclass, ``X | None``, ``tuple[X, ...]``, a mapping or a scalar).

    Floats accept JSON integers; integers refuse booleans; a mapping is kept as
    it was written. ``CodecError`` on the first value that does not fit.
    """
    return _decoder(tp)(value, flags, path)


@functools.cache
def _decoder(tp: Any) -> Decoder:
    """The decoding function of ``tp``, built once per type from its hints (a record has thousands of values)."""
    origin = typing.get_origin(tp)
    own = getattr(tp, "__from_plain__", None) if isinstance(tp, type) else None
    if own is not None:
        return lambda value, flags, path: own(value, _render(path))
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        (inner_tp,) = [a for a in args if a is not type(None)]
        inner, nullable = _decoder(inner_tp), type(None) in args

        def union(value: Any, flags: frozenset[str], path: DecodePath) -> Any:
            return None if value is None and nullable else inner(value, flags, path)

        return union
    if dataclasses.is_dataclass(tp):
        return functools.partial(_object, cast(type, tp))  # a type hint: a dataclass, never an instance
    if origin is tuple:
        item = _decoder(typing.get_args(tp)[0])

        def sequence(value: Any, flags: frozenset[str], path: DecodePath) -> Any:
            if not isinstance(value, list):
                raise CodecError(path, f"expected a list, got {_name(value)}")
            return tuple(item(v, flags, (path, i)) for i, v in enumerate(value))

        return sequence
    if origin in (dict, collections.abc.Mapping) or tp in (dict, Mapping):

        def mapping(value: Any, flags: frozenset[str], path: DecodePath) -> Any:
            if not isinstance(value, Mapping):
                raise CodecError(path, f"expected an object, got {_name(value)}")
            return dict(value)

        return mapping
    if tp is Any:
        return lambda value, flags, path: value
    if tp is float:
        return lambda value, flags, path: (
            value if type(value) is float and math.isfinite(value) else _scalar(tp, value, path)
        )
    if tp in (int, str, bool):
        return lambda value, flags, path: value if type(value) is tp else _scalar(tp, value, path)
    return lambda value, flags, path: _scalar(tp, value, path)


def _name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _scalar(tp: type, value: Any, path: DecodePath) -> Any:
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise CodecError(path, f"expected a finite number, got {value!r}")
        return float(value)
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if tp in (str, bool) and isinstance(value, tp):
        return value
    raise CodecError(path, f"expected {getattr(tp, '__name__', tp)}, got {_name(value)}")


@functools.cache
def _fields(cls: type) -> dict[str, tuple[str, Decoder, str | None, bool]]:
    """Per dataclass, once: JSON key -> (attribute, decoder, only_if, required)."""
    hints = typing.get_type_hints(cls)
    return {
        _key(f): (
            f.name,
            _decoder(hints[f.name]),
            f.metadata.get("only_if"),
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    }


def _object(cls: type, value: Any, flags: frozenset[str], path: DecodePath) -> Any:
    if not isinstance(value, dict) and not isinstance(value, Mapping):
        raise CodecError(path or "(top)", f"expected an object, got {_name(value)}")
    fields = _fields(cls)
    unknown = sorted(str(k) for k in value if k not in fields)
    if unknown:
        raise CodecError((path, unknown[0]), "unknown field")
    kwargs: dict[str, Any] = {}
    for key, (name, decode, only_if, required) in fields.items():
        if key in value:
            kwargs[name] = decode(value[key], flags, (path, key))
        elif only_if in flags:
            raise CodecError((path, key), f"missing (every {only_if} record has it)")
        elif required:
            raise CodecError((path, key), "missing")
    return cls(**kwargs)
