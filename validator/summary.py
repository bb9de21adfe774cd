"""The summaries of a replay as typed documents, written and read through here: ``summary.json`` (a rounds
file's replay) and ``replays/<replay>.json`` (a store replay's diff against the originals).

``validator replay FILE`` writes it at the store's root (``storage.keys.summary``) after every round:
how many rounds were evaluated, failed and reached consensus, the rounds in file order (the review reads
the order from it), each failed line, per-miner totals, the embedding model and the config. ``to_json``
gives the stored form (schema ``consensus-validator/replay-summary/1``, unchanged); ``from_json`` reads
it back and names the first field that is not what it should be (``SummaryError``, a ``ValueError``).

``validator replay STORE`` writes ``StoreReplayFile`` (schema ``consensus-validator/replay-diff/1``,
unchanged) at ``storage.keys.replay_report``: per re-evaluated round who joined or left consensus, whose
pay changed and the consensus score before and after (``RoundDiffRow``), each failure, the total change
of every miner's emissions, the embedding model and the config. ``validator.reader.RoundReader`` reads both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = "consensus-validator/replay-summary/1"
DIFF_SCHEMA = "consensus-validator/replay-diff/1"


class SummaryError(ValueError):
    """A stored ``summary.json`` that is not a replay summary; the message names the field."""


@dataclass(frozen=True)
class MinerTotals:
    """One miner over the replayed rounds."""

    rounds: int
    in_consensus: int
    in_consensus_rate: float
    mean_composite: float
    emissions: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReplaySummaryFile:
    """The stored summary of a rounds file's replay (module docstring)."""

    source: str
    evaluated: tuple[str, ...]
    failed: int
    consensus_reached: int
    failures: tuple[Mapping[str, Any], ...] = ()  # ``validator.failures.Failure.line_row`` per failed line
    miners: Mapping[str, MinerTotals] = field(default_factory=dict)
    model: str = ""
    checksum_sha256: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "source": self.source,
            "rounds": {
                "evaluated": len(self.evaluated),
                "failed": self.failed,
                "consensus_reached": self.consensus_reached,
            },
            "evaluated": list(self.evaluated),
            "failures": [dict(f) for f in self.failures],
            "miners": {m: t.to_json() for m, t in sorted(self.miners.items())},
            "embedding": {"model": self.model, "checksum_sha256": self.checksum_sha256},
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, doc: Any, key: str = "summary.json") -> ReplaySummaryFile:
        """The summary stored under ``key``; ``SummaryError`` naming the first field that is wrong."""
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise SummaryError(f"{key}: not a replay summary (schema {SCHEMA!r} expected)")
        rounds, embedding = _part(doc, "rounds", key), _part(doc, "embedding", key)
        evaluated = doc.get("evaluated")
        if not isinstance(evaluated, list) or not all(isinstance(r, str) for r in evaluated):
            raise SummaryError(f"{key}: evaluated: expected a list of round ids")
        miners = _part(doc, "miners", key)
        try:
            totals = {str(m): MinerTotals(**t) for m, t in miners.items()}
        except TypeError as exc:
            raise SummaryError(f"{key}: miners: {exc}") from None
        return cls(
            source=str(doc.get("source", "")),
            evaluated=tuple(evaluated),
            failed=int(rounds.get("failed", 0)),
            consensus_reached=int(rounds.get("consensus_reached", 0)),
            failures=tuple(f for f in doc.get("failures") or () if isinstance(f, dict)),
            miners=totals,
            model=str(embedding.get("model", "")),
            checksum_sha256=str(embedding.get("checksum_sha256", "")),
            config=_part(doc, "config", key),
        )


@dataclass(frozen=True)
class RoundDiffRow:
    """One re-evaluated round of a store replay against its original (``validator.replaying.diff``)."""

    round_id: str
    joined: tuple[str, ...] = ()  # moved into consensus
    left: tuple[str, ...] = ()  # moved out of consensus
    emissions: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # miner -> (before, after), changed only
    consensus_before: float | None = None
    consensus_after: float | None = None
    embeddings_reused: bool = False
    original: bool = True  # an original evaluation existed

    def to_json(self) -> dict[str, Any]:
        return {
            "round_id": self.round_id,
            "joined": list(self.joined),
            "left": list(self.left),
            "emissions": {m: {"before": b, "after": a, "change": a - b} for m, (b, a) in self.emissions.items()},
            "consensus_before": self.consensus_before,
            "consensus_after": self.consensus_after,
            "embeddings_reused": self.embeddings_reused,
            "original": self.original,
        }

    @classmethod
    def from_json(cls, doc: Any, where: str) -> RoundDiffRow:
        if not isinstance(doc, dict):
            raise SummaryError(f"{where}: expected an object")
        try:
            return cls(
                round_id=str(doc["round_id"]),
                joined=tuple(str(m) for m in doc["joined"]),
                left=tuple(str(m) for m in doc["left"]),
                emissions={str(m): (int(e["before"]), int(e["after"])) for m, e in doc["emissions"].items()},
                consensus_before=_opt_float(doc["consensus_before"]),
                consensus_after=_opt_float(doc["consensus_after"]),
                embeddings_reused=bool(doc["embeddings_reused"]),
                original=bool(doc.get("original", True)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SummaryError(f"{where}: {type(exc).__name__}: {exc}") from None


@dataclass(frozen=True)
class StoreReplayFile:
    """The stored report of a store replay, ``replays/<replay>.json`` (module docstring)."""

    replay_id: str
    rounds: tuple[RoundDiffRow, ...] = ()
    failures: tuple[Mapping[str, Any], ...] = ()  # ``validator.failures.Failure.store_row`` per failed round
    emission_changes: Mapping[str, int] = field(default_factory=dict)  # miner -> total change of its emissions
    model: str = ""
    checksum_sha256: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": DIFF_SCHEMA,
            "replay_id": self.replay_id,
            "rounds": [r.to_json() for r in self.rounds],
            "failures": [dict(f) for f in self.failures],
            "emission_changes": dict(self.emission_changes),
            "embedding": {"model": self.model, "checksum_sha256": self.checksum_sha256},
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, doc: Any, key: str) -> StoreReplayFile:
        """The report stored under ``key``; ``SummaryError`` naming the first field that is wrong."""
        if not isinstance(doc, dict) or doc.get("schema") != DIFF_SCHEMA:
            raise SummaryError(f"{key}: not a store replay's report (schema {DIFF_SCHEMA!r} expected)")
        rounds, changes = doc.get("rounds"), _part(doc, "emission_changes", key)
        if not isinstance(rounds, list):
            raise SummaryError(f"{key}: rounds: expected a list")
        embedding = _part(doc, "embedding", key)
        try:
            emission_changes = {str(m): int(v) for m, v in changes.items()}
        except (TypeError, ValueError) as exc:
            raise SummaryError(f"{key}: emission_changes: {exc}") from None
        return cls(
            replay_id=str(doc.get("replay_id", "")),
            rounds=tuple(RoundDiffRow.from_json(r, f"{key}: rounds[{i}]") for i, r in enumerate(rounds)),
            failures=tuple(f for f in doc.get("failures") or () if isinstance(f, dict)),
            emission_changes=emission_changes,
            model=str(embedding.get("model", "")),
            checksum_sha256=str(embedding.get("checksum_sha256", "")),
            config=_part(doc, "config", key),
        )


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _part(doc: dict[str, Any], name: str, key: str) -> dict[str, Any]:
    part = doc.get(name, {})
    if not isinstance(part, dict):
        raise SummaryError(f"{key}: {name}: expected an object")
    return part
