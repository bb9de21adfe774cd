"""The settings a round was evaluated with, as its record keeps them: the settings' own section types.

``RecordedConfig`` holds the recorded sections (``validator.settings.RECORDED``:
consensus, emissions, input, embedding, lm, daemon) as the classes the
settings are made of, so a reader asks ``record.config.daemon.moving_average_alpha``
instead of walking dictionaries. Its JSON form is ``Settings.as_dict()``'s,
byte for byte.

A record written before a setting existed does not hold it: reading it fills
in today's default (the section types need every field) and remembers that it
was absent (``absent``), so the record's JSON form, ``value`` and the what-if's
config comparison still say "not recorded" rather than today's default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from consensus.config import ConsensusConfig
from consensus.errors import ConfigError
from emissions.config import EmissionsConfig
from storage.codec import CodecError
from validator.round_input import InputLimits
from validator.settings.sections import RECORDED, SECTIONS, DaemonSettings, EmbeddingSettings, LMRoundSettings


@dataclass(frozen=True)
class RecordedConfig:
    """The recorded settings sections (module docstring); ``absent`` names what an older record did not hold."""

    consensus: ConsensusConfig = field(default_factory=ConsensusConfig)
    emissions: EmissionsConfig = field(default_factory=EmissionsConfig)
    input: InputLimits = field(default_factory=InputLimits)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    lm: LMRoundSettings = field(default_factory=LMRoundSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    absent: frozenset[str] = frozenset()  # "section" or "section.field"

    @classmethod
    def of(cls, settings: Any) -> RecordedConfig:
        """The recorded sections of ``settings`` (``validator.settings.Settings``)."""
        return cls(**{name: getattr(settings, name) for name in RECORDED})

    def recorded(self, section: str, name: str) -> bool:
        return section not in self.absent and f"{section}.{name}" not in self.absent

    def value(self, section: str, name: str) -> Any:
        """One setting as recorded; None when the record does not hold it."""
        return getattr(getattr(self, section), name) if self.recorded(section, name) else None

    def as_plain(self) -> dict[str, dict[str, Any]]:
        """The JSON form: section -> setting -> value, in the settings' order, what was absent left out."""
        out: dict[str, dict[str, Any]] = {}
        for section in RECORDED:
            if section in self.absent:
                continue
            values = dataclasses.asdict(getattr(self, section))
            out[section] = {k: v for k, v in values.items() if f"{section}.{k}" not in self.absent}
        return out

    __to_plain__ = as_plain

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
            known = {f.name for f in dataclasses.fields(SECTIONS[section])}
            extra = sorted(str(k) for k in data if k not in known)
            if extra:
                raise CodecError(f"{where}.{section}.{extra[0]}", "unknown field")
            absent |= {f"{section}.{k}" for k in known if k not in data}
            try:
                sections[section] = SECTIONS[section](**data)
            except ConfigError as exc:
                raise CodecError(f"{where}.{section}", str(exc)) from None
        return cls(**sections, absent=frozenset(absent))
