"""``summary.json``, the summary of a rounds file's replay, as a typed document: written and read through here.

``validator replay FILE`` writes it at the store's root (``storage.keys.summary``) after every round:
how many rounds were evaluated, failed and reached consensus, the rounds in file order (the review reads
the order from it), each failed line, per-miner totals, the embedding model and the config. ``to_json``
gives the stored form (schema ``consensus-validator/replay-summary/1``, unchanged); ``from_json`` reads
it back and names the first field that is not what it should be (``SummaryError``, a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = "consensus-validator/replay-summary/1"


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


def _part(doc: dict[str, Any], name: str, key: str) -> dict[str, Any]:
    part = doc.get(name, {})
    if not isinstance(part, dict):
        raise SummaryError(f"{key}: {name}: expected an object")
    return part
