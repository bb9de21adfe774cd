"""The settings a round was evaluated with, as its record keeps them: the settings' own section types.

``RecordedConfig`` is ``validator.settings.sections.Recorded`` (the recorded sections: consensus,
emissions, input, embedding, lm, daemon, declared once there) read back from a record, so a reader asks
``record.config.daemon.moving_average_alpha`` instead of walking dictionaries. Its JSON form is
``Settings.as_dict()``'s, byte for byte: section -> setting -> value, the consensus settings in one flat
table by their own names (``consensus.params.plain``; the form records have always had).

A record written before a setting existed does not hold it: reading it fills in today's default (the section
types need every field) and remembers that it was absent (``absent``), so ``as_plain``, ``value`` and the
what-if's config comparison still say "not recorded" rather than today's default. A record written before a
setting was renamed holds its old name (``quality_sensitivity``): it reads as today's
(``ConsensusConfig.DEPRECATED``), and a setting since retired into a constant or moved out of the recorded
sections (``copy_cosine``, ``heatmap``) is left out of ``as_plain``. A record read and written again keeps
the JSON it was read from (``written``), byte for byte: a record says what it was evaluated with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from consensus.errors import ConfigError
from consensus.params import build, from_plain, leaves
from storage.codec import CodecError
from validator.settings.sections import RECORDED, SECTIONS, Recorded


@dataclass(frozen=True)
class RecordedConfig(Recorded):
    """The recorded settings sections (module docstring); ``absent`` names what an older record did not hold."""

    absent: frozenset[str] = frozenset()  # "section" or "section.field" (a consensus setting by its own name)
    written: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)  # the JSON it was read from

    @classmethod
    def of(cls, settings: Any) -> RecordedConfig:
        """The recorded sections of ``settings`` (``validator.settings.Settings``)."""
        return cls(**{name: getattr(settings, name) for name in RECORDED})

    def recorded(self, section: str, name: str) -> bool:
        return section not in self.absent and f"{section}.{name}" not in self.absent

    def value(self, section: str, name: str) -> Any:
        """One setting as recorded (a consensus setting by its own name); None when the record does not hold it."""
        if not self.recorded(section, name):
            return None
        found: Any = getattr(self, section)
        dotted = next(n for n in leaves(type(found)) if n.rpartition(".")[2] == name)
        for part in dotted.split("."):
            found = getattr(found, part)
        return found

    def as_plain(self) -> dict[str, dict[str, Any]]:
        """The JSON form: section -> setting -> value, in the settings' order, what was absent left out."""
        return {
            section: {k: v for k, v in values.items() if f"{section}.{k}" not in self.absent}
            for section, values in self.as_dict().items()
            if section not in self.absent
        }

    def __to_plain__(self) -> Mapping[str, Any]:
        """The JSON form a record is written with: as it was read (older names and all), else ``as_plain``."""
        return self.written if self.written is not None else self.as_plain()

    @classmethod
    def __from_plain__(cls, value: Any, path: str) -> RecordedConfig:
        """Read the JSON form (``storage.codec``); ``CodecError`` names the section or setting."""
        where = path or "config"
        if not isinstance(value, Mapping):
            raise CodecError(where, f"expected an object, got {'null' if value is None else type(value).__name__}")
        unknown = sorted(str(k) for k in value if k not in RECORDED)
        if unknown:
            raise CodecError(f"{where}.{unknown[0]}", "unknown field")
        sections: dict[str, Any] = {}
        absent: set[str] = set()
        for section in RECORDED:
            if section not in value:
                absent.add(section)
                continue
            data = value[section]
            if not isinstance(data, Mapping):
                raise CodecError(f"{where}.{section}", "expected an object")
            values, missing, extra = from_plain(SECTIONS[section], data)
            if extra:
                raise CodecError(f"{where}.{section}.{sorted(extra)[0]}", "unknown field")
            absent |= {f"{section}.{k}" for k in missing}
            try:
                sections[section] = build(SECTIONS[section], values, section)
            except ConfigError as exc:
                raise CodecError(f"{where}.{section}", str(exc)) from None
        return cls(**sections, absent=frozenset(absent), written=value)
