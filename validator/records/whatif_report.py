"""``whatif.json``, the report of ``validator whatif``, as a typed document: written and read through here.

``validator.replaying.whatif_run.WhatIf`` folds a what-if run and gives its ``WhatIfFile``; ``validator whatif`` writes
its ``to_json`` (schema ``consensus-validator/whatif/1``, unchanged; the same bytes whatever the engine)
and ``validator report --whatif`` reads it back with ``from_json``, which names the first field that is
not what it should be (``WhatIfError``, a ``ValueError``). Per miner old vs new total emissions, final
weight and rank (``MinerMove``); per round consensus reached and score old/new and the members gained
and lost (``WhatIfRow``); the settings that differ (``ConfigChange``); the failures; the config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.records.json_document import FieldsJson, object_part, schema_of

SCHEMA = "consensus-validator/whatif/1"


class WhatIfError(ValueError):
    """A document that is not a readable ``whatif.json``; the message names the field."""


@dataclass(frozen=True)
class WhatIfRow(FieldsJson, error=WhatIfError):
    """One re-evaluated round in ``whatif.json``: consensus reached and score, old and new; who moved."""

    round_id: str
    original: bool  # an original record existed
    reached_old: bool | None
    reached_new: bool
    score_old: float | None
    score_new: float | None
    members_gained: tuple[str, ...]
    members_lost: tuple[str, ...]
    embeddings_reused: bool

    @property
    def membership_changed(self) -> bool:
        return bool(self.members_gained or self.members_lost)


@dataclass(frozen=True)
class MinerMove(FieldsJson, error=WhatIfError):
    """One miner, old vs new: total emissions, final weight and rank (1 = highest weight)."""

    emissions_old: int
    emissions_new: int
    emissions_change: int
    weight_old: float
    weight_new: float
    weight_change: float
    rank_old: int
    rank_new: int
    rank_change: int  # positive: moved up


@dataclass(frozen=True)
class ConfigChange(FieldsJson, error=WhatIfError):
    """A recorded setting whose value differs between the originals' config and the new one."""

    setting: str  # "section.name"
    old: Any
    new: Any


@dataclass(frozen=True)
class WhatIfFile:
    """The stored ``whatif.json`` (module docstring)."""

    whatif_id: str
    source: str
    round_ids: tuple[str, ...] | None = None  # the selection: these rounds (None: all)
    since: str | None = None
    until: str | None = None
    failed: int = 0
    skipped: int = 0
    config_changes: tuple[ConfigChange, ...] = ()
    miners: Mapping[str, MinerMove] = field(default_factory=dict)
    rounds: tuple[WhatIfRow, ...] = ()
    failures: tuple[
        Mapping[str, Any], ...
    ] = ()  # ``validator.records.failed_round.Failure.whatif_row`` per failed round
    config: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "whatif_id": self.whatif_id,
            "source": self.source,
            "selection": {
                "round_ids": list(self.round_ids) if self.round_ids is not None else None,
                "since": self.since,
                "until": self.until,
            },
            "summary": {
                "rounds": len(self.rounds),
                "failed": self.failed,
                "skipped": self.skipped,
                "reached_old": sum(1 for r in self.rounds if r.reached_old),
                "reached_new": sum(1 for r in self.rounds if r.reached_new),
                "membership_changed": sum(1 for r in self.rounds if r.membership_changed),
                "embeddings_reused": sum(1 for r in self.rounds if r.embeddings_reused),
            },
            "config_changes": [c.to_json() for c in self.config_changes],
            "miners": {m: move.to_json() for m, move in self.miners.items()},
            "rounds": [r.to_json() for r in self.rounds],
            "failures": [dict(f) for f in self.failures],
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, doc: Any, where: str = "whatif.json") -> WhatIfFile:
        """A ``whatif.json`` document; ``WhatIfError`` naming ``where`` and the first field that is wrong."""
        doc = schema_of(doc, SCHEMA, where, WhatIfError, "a whatif.json")
        selection, summary = (object_part(doc, name, where, WhatIfError) for name in ("selection", "summary"))
        miners, config = (object_part(doc, name, where, WhatIfError) for name in ("miners", "config"))
        rounds, changes, failures = (_list(doc, name, where) for name in ("rounds", "config_changes", "failures"))
        ids = selection.get("round_ids")
        if ids is not None and not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
            raise WhatIfError(f"{where}: selection.round_ids: expected a list of round ids or null")
        return cls(
            whatif_id=str(doc.get("whatif_id", "")),
            source=str(doc.get("source", "")),
            round_ids=None if ids is None else tuple(ids),
            since=_opt_str(selection.get("since")),
            until=_opt_str(selection.get("until")),
            failed=_int(summary.get("failed", len(failures)), f"{where}: summary.failed"),
            skipped=_int(summary.get("skipped", 0), f"{where}: summary.skipped"),
            config_changes=tuple(
                ConfigChange.from_json(c, f"{where}: config_changes[{i}]") for i, c in enumerate(changes)
            ),
            miners={str(m): MinerMove.from_json(v, f"{where}: miners.{m}") for m, v in miners.items()},
            rounds=tuple(WhatIfRow.from_json(r, f"{where}: rounds[{i}]") for i, r in enumerate(rounds)),
            failures=tuple(f for f in failures if isinstance(f, dict)),
            config=config,
        )


def _list(doc: dict[str, Any], name: str, where: str) -> list[Any]:
    part = doc.get(name, [])
    if not isinstance(part, list):
        raise WhatIfError(f"{where}: {name}: expected a list")
    return part


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise WhatIfError(f"{where}: expected an integer")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
