"""What the models of the validator's own JSON documents share: a frozen dataclass to JSON and back.

The reports the commands write (``summary.json``, ``replays/<replay>.json``, ``whatif.json``,
``committees.json``) each have one typed model (``validator.records.replay_summary``, ``validator.records.whatif_report``,
``validator.replaying.committees_report``) whose ``to_json`` gives the stored form and whose ``from_json`` reads it
back. A part whose JSON is its dataclass's fields in order goes through ``storage.codec`` (the record's
codec): ``plain`` writes it, ``decode`` reads it and checks every value's type. A reader's error is the
model's own ``ValueError`` subclass, one line naming the file and the field (``where: field 'x.y': why``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from storage.codec import CodecError, from_plain, to_plain

__all__ = ["FieldsJson", "decode", "object_part", "plain", "read_json", "schema_of"]

T = TypeVar("T")
F = TypeVar("F", bound="FieldsJson")


class FieldsJson:
    """For a frozen dataclass whose JSON is its fields in order: ``to_json`` and ``from_json`` through
    ``storage.codec``; ``from_json`` raises the model's error (``class Part(FieldsJson, error=ModelError)``)
    naming where and the field."""

    error: ClassVar[type[ValueError]] = ValueError

    def __init_subclass__(cls, error: type[ValueError] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if error is not None:
            cls.error = error

    def to_json(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_json(cls: type[F], doc: Any, where: str) -> F:
        return decode(cls, doc, where, cls.error)


def plain(value: Any) -> Any:
    """The JSON values of a dataclass (its fields in order), a tuple, a mapping or a scalar."""
    return to_plain(value)


def decode(cls: type[T], doc: Any, where: str, error: type[ValueError]) -> T:
    """``cls`` read from its JSON ``doc``; ``error`` naming ``where`` and the first field that is wrong."""
    try:
        return from_plain(cls, doc)
    except CodecError as exc:
        raise error(f"{where}: {exc}") from None


def schema_of(doc: Any, schema: str, where: str, error: type[ValueError], what: str) -> dict[str, Any]:
    """``doc`` if it is a JSON object with this ``schema``; else ``error`` saying it is not ``what``."""
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        found = doc.get("schema") if isinstance(doc, dict) else None
        raise error(f"{where}: not {what} (schema {found!r}, expected {schema!r})")
    return doc


def object_part(doc: dict[str, Any], name: str, where: str, error: type[ValueError]) -> dict[str, Any]:
    """``doc[name]``, an object (empty when absent); ``error`` naming ``where`` and ``name`` otherwise."""
    part = doc.get(name, {})
    if not isinstance(part, dict):
        raise error(f"{where}: {name}: expected an object")
    return part


def read_json(path: str | Path, error: type[ValueError]) -> Any:
    """The JSON document of the file ``path``; ``error`` naming the file when it is unreadable or not JSON."""

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise error(f"{path}: not JSON ({exc})") from None
