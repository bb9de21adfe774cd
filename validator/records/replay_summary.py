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
of every miner's emissions, the embedding model and the config. ``validator.records.reader.RoundReader`` reads both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from validator.records.json_document import FieldsJson, object_part, schema_of

SCHEMA = "consensus-validator/replay-summary/1"
DIFF_SCHEMA = "consensus-validator/replay-diff/1"


class SummaryError(ValueError):
    """A stored ``summary.json`` that is not a replay summary; the message names the field."""


@dataclass(frozen=True)
class MinerTotals(FieldsJson, error=SummaryError):
    """One miner over the replayed rounds."""

    rounds: int  # rounds it answered in
    in_consensus: int  # of them, rounds it was in the consensus
    in_consensus_rate: float  # in_consensus / rounds (0 without rounds)
    mean_composite: float  # its mean composite score, 0..100
    emissions: int  # emission units paid to it

    @classmethod
    def of(cls, answers: Sequence[tuple[bool, float, int]]) -> MinerTotals:
        """The totals of a miner's answers, one (in consensus, composite, emission units) per round, in order."""
        rounds = len(answers)
        in_consensus = sum(int(inside) for inside, _, _ in answers)
        composite = sum((c for _, c, _ in answers), 0.0)
        return cls(
            rounds=rounds,
            in_consensus=in_consensus,
            in_consensus_rate=in_consensus / rounds if rounds else 0.0,
            mean_composite=composite / rounds if rounds else 0.0,
            emissions=sum(amount for _, _, amount in answers),
        )


@dataclass(frozen=True)
class EmbeddingModel:
    """The embedding model a replay ran with: its name and checksum (an engine's ``model``, ``validator.replaying.engine``)."""

    model: str = ""
    checksum_sha256: str = ""


@dataclass(frozen=True)
class RunSetup(FieldsJson, error=SummaryError):
    """What a replay ran with, the two keys that end its document: the embedding model and the settings."""

    embedding: EmbeddingModel = EmbeddingModel()
    config: Mapping[str, Any] = field(default_factory=dict)  # ``Settings.as_dict``

    @classmethod
    def of(cls, doc: dict[str, Any], key: str) -> RunSetup:
        """The setup in a replay's document ``doc`` (each part may be absent); ``SummaryError`` naming ``key``."""
        return cls.from_json({k: doc[k] for k in ("embedding", "config") if k in doc}, key)


@dataclass(frozen=True)
class ReplaySummaryFile:
    """The stored summary of a rounds file's replay (module docstring)."""

    source: str  # the rounds file's name
    evaluated: tuple[str, ...]  # ids of the rounds evaluated, in file order (the review's order)
    failed: int  # lines or rounds that could not be evaluated (``failures``)
    consensus_reached: int  # evaluated rounds that reached consensus
    failures: tuple[Mapping[str, Any], ...] = ()  # ``validator.records.failed_round.Failure.line_row`` per failed line
    miners: Mapping[str, MinerTotals] = field(default_factory=dict)
    run: RunSetup = RunSetup()

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
            **self.run.to_json(),
        }

    @classmethod
    def from_json(cls, doc: Any, key: str = "summary.json") -> ReplaySummaryFile:
        """The summary stored under ``key``; ``SummaryError`` naming the first field that is wrong."""
        doc = schema_of(doc, SCHEMA, key, SummaryError, "a replay summary")
        rounds, miners = object_part(doc, "rounds", key, SummaryError), object_part(doc, "miners", key, SummaryError)
        evaluated = doc.get("evaluated")
        if not isinstance(evaluated, list) or not all(isinstance(r, str) for r in evaluated):
            raise SummaryError(f"{key}: evaluated: expected a list of round ids")
        return cls(
            source=str(doc.get("source", "")),
            evaluated=tuple(evaluated),
            failed=int(rounds.get("failed", 0)),
            consensus_reached=int(rounds.get("consensus_reached", 0)),
            failures=tuple(f for f in doc.get("failures") or () if isinstance(f, dict)),
            miners={str(m): MinerTotals.from_json(t, f"{key}: miners.{m}") for m, t in miners.items()},
            run=RunSetup.of(doc, key),
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
    failures: tuple[
        Mapping[str, Any], ...
    ] = ()  # ``validator.records.failed_round.Failure.store_row`` per failed round
    emission_changes: Mapping[str, int] = field(default_factory=dict)  # miner -> total change of its emissions
    run: RunSetup = RunSetup()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": DIFF_SCHEMA,
            "replay_id": self.replay_id,
            "rounds": [r.to_json() for r in self.rounds],
            "failures": [dict(f) for f in self.failures],
            "emission_changes": dict(self.emission_changes),
            **self.run.to_json(),
        }

    @classmethod
    def from_json(cls, doc: Any, key: str) -> StoreReplayFile:
        """The report stored under ``key``; ``SummaryError`` naming the first field that is wrong."""
        doc = schema_of(doc, DIFF_SCHEMA, key, SummaryError, "a store replay's report")
        rounds, changes = doc.get("rounds"), object_part(doc, "emission_changes", key, SummaryError)
        if not isinstance(rounds, list):
            raise SummaryError(f"{key}: rounds: expected a list")
        try:
            emission_changes = {str(m): int(v) for m, v in changes.items()}
        except (TypeError, ValueError) as exc:
            raise SummaryError(f"{key}: emission_changes: {exc}") from None
        return cls(
            replay_id=str(doc.get("replay_id", "")),
            rounds=tuple(RoundDiffRow.from_json(r, f"{key}: rounds[{i}]") for i, r in enumerate(rounds)),
            failures=tuple(f for f in doc.get("failures") or () if isinstance(f, dict)),
            emission_changes=emission_changes,
            run=RunSetup.of(doc, key),
        )


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)
