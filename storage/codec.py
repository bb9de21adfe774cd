"""Canonical JSON for stored documents, and the mapping between frozen dataclasses and plain JSON values.

``dumps``/``loads`` are the bytes; ``to_plain``/``from_plain`` turn a tree of
frozen dataclasses (the evaluation record, ``validator.record``) into JSON
values and back, driven by the fields' type hints and ``field_spec`` options,
so a record type is declared once and both directions follow from it.
``from_plain`` checks every value's type and refuses unknown or missing keys
with a ``CodecError`` naming the path (``responses[3].score.alignment``).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import json
import math
import types
import typing
from typing import Any, Mapping


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

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"field {path!r}: {why}")
        self.path, self.why = path, why


def field_spec(default: Any = dataclasses.MISSING, *, key: str | None = None, only_if: str | None = None,
               omit_none: bool = False, since: int = 0) -> Any:
    """A dataclass field with JSON options.

    ``key``: the JSON name when it differs from the attribute. ``only_if``: the
    field exists only when that flag is set (``to_plain``/``from_plain`` take the
    flags): left out otherwise, required when set. ``omit_none``: left out when
    ``None``. ``since``: the schema minor that added it (documentation).
    """
    meta = {"key": key, "only_if": only_if, "omit_none": omit_none, "since": since}
    return dataclasses.field(metadata=meta) if default is dataclasses.MISSING else \
        dataclasses.field(default=default, metadata=meta)


def _key(f: dataclasses.Field) -> str:
    return f.metadata.get("key") or f.name


def to_plain(value: Any, flags: frozenset[str] = frozenset()) -> Any:
    """JSON values for a tree of dataclasses, tuples, mappings and scalars (field order kept)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            only_if = f.metadata.get("only_if")
            if (only_if is not None and only_if not in flags) or (f.metadata.get("omit_none") and item is None):
                continue
            out[_key(f)] = to_plain(item, flags)
        return out
    if isinstance(value, (tuple, list)):
        return [to_plain(v, flags) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_plain(v, flags) for k, v in value.items()}
    return value


def from_plain(tp: Any, value: Any, flags: frozenset[str] = frozenset(), path: str = "") -> Any:
    """The value of type ``tp`` (a dataclass, ``X | None``, ``tuple[X, ...]``, a mapping or a scalar).

    Floats accept JSON integers; integers refuse booleans; a mapping is kept as
    it was written. ``CodecError`` on the first value that does not fit.
    """
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return from_plain(inner, value, flags, path)
    if dataclasses.is_dataclass(tp):
        return _object(tp, value, flags, path)
    if origin is tuple:
        if not isinstance(value, list):
            raise CodecError(path, f"expected a list, got {_name(value)}")
        inner = typing.get_args(tp)[0]
        return tuple(from_plain(inner, v, flags, f"{path}[{i}]") for i, v in enumerate(value))
    if origin in (dict, collections.abc.Mapping) or tp in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise CodecError(path, f"expected an object, got {_name(value)}")
        return dict(value)
    if tp is Any:
        return value
    return _scalar(tp, value, path)


def _name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _scalar(tp: type, value: Any, path: str) -> Any:
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise CodecError(path, f"expected a finite number, got {value!r}")
        return float(value)
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if tp in (str, bool) and isinstance(value, tp):
        return value
    raise CodecError(path, f"expected {getattr(tp, '__name__', tp)}, got {_name(value)}")


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _object(cls: type, value: Any, flags: frozenset[str], path: str) -> Any:
    if not isinstance(value, Mapping):
        raise CodecError(path or "(top)", f"expected an object, got {_name(value)}")
    fields = {_key(f): f for f in dataclasses.fields(cls)}

    def at(key: str) -> str:
        return f"{path}.{key}" if path else key

    unknown = sorted(str(k) for k in value if k not in fields)
    if unknown:
        raise CodecError(at(unknown[0]), "unknown field")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for key, f in fields.items():
        if key in value:
            kwargs[f.name] = from_plain(hints[f.name], value[key], flags, at(key))
        elif f.metadata.get("only_if") in flags:
            raise CodecError(at(key), f"missing (every {f.metadata['only_if']} record has it)")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise CodecError(at(key), "missing")
    return cls(**kwargs)
