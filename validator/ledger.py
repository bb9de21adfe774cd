"""The daemon's ledger: cumulative emissions and an EMA score per miner (hotkey), as plain data.

Round ``n`` is applied only on top of round ``n - 1`` (``Ledger.apply``
refuses anything else), and the ledger records the last applied sequence, so
a restart that finds a round's record already stored applies it exactly once.

EMA: ``ema <- alpha * s + (1 - alpha) * ema`` with ``s`` the round's
composite score / 100 (0 for a failed miner); a miner seen for the first time
starts from ``alpha * s`` (its EMA before it existed is 0). No-quorum rounds
pay nobody and leave every EMA unchanged. Weights are the EMAs normalised to
sum to 1 (uniform when every EMA is 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

SCHEMA = "consensus-validator/ledger/1"


class LedgerError(ValueError):
    pass


@dataclass(frozen=True)
class MinerEntry:
    """One miner's part of one round, as the ledger needs it."""

    miner: str
    composite: float  # 0..100
    in_consensus: bool
    emission: int
    failed: bool


@dataclass(frozen=True)
class MinerTotals:
    rounds: int = 0
    answered: int = 0
    in_consensus: int = 0
    emissions: int = 0
    ema: float = 0.0
    last_round: str | None = None


@dataclass(frozen=True)
class Ledger:
    alpha: float = 0.1
    last_sequence: int = 0
    last_round_id: str | None = None
    rounds: int = 0
    no_quorum: int = 0
    emitted: int = 0
    miners: Mapping[str, MinerTotals] = field(default_factory=dict)

    def apply(self, sequence: int, round_id: str, entries: Sequence[MinerEntry], *, no_quorum: bool) -> "Ledger":
        if sequence != self.last_sequence + 1:
            raise LedgerError(f"round {round_id!r} has sequence {sequence}; the ledger expects {self.last_sequence + 1}")
        miners = dict(self.miners)
        for e in entries:
            old = miners.get(e.miner, MinerTotals())
            score = 0.0 if e.failed else max(0.0, min(1.0, e.composite / 100.0))
            ema = old.ema if no_quorum else self.alpha * score + (1.0 - self.alpha) * old.ema
            miners[e.miner] = MinerTotals(
                rounds=old.rounds + 1, answered=old.answered + int(not e.failed),
                in_consensus=old.in_consensus + int(e.in_consensus and not no_quorum),
                emissions=old.emissions + (0 if no_quorum else e.emission), ema=ema, last_round=round_id)
        paid = 0 if no_quorum else sum(e.emission for e in entries)
        return replace(self, last_sequence=sequence, last_round_id=round_id, rounds=self.rounds + 1,
                       no_quorum=self.no_quorum + int(no_quorum), emitted=self.emitted + paid, miners=miners)

    def weights(self) -> dict[str, float]:
        """EMA scores normalised to sum to 1 (uniform when all are 0); empty without miners."""
        if not self.miners:
            return {}
        total = sum(m.ema for m in self.miners.values())
        if total <= 0:
            return {k: 1.0 / len(self.miners) for k in sorted(self.miners)}
        return {k: self.miners[k].ema / total for k in sorted(self.miners)}

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "alpha": self.alpha, "last_sequence": self.last_sequence,
                "last_round_id": self.last_round_id, "rounds": self.rounds, "no_quorum": self.no_quorum,
                "emitted": self.emitted,
                "miners": {k: {"rounds": m.rounds, "answered": m.answered, "in_consensus": m.in_consensus,
                               "emissions": m.emissions, "ema": m.ema, "last_round": m.last_round}
                           for k, m in sorted(self.miners.items())},
                "weights": self.weights()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Ledger":
        if data.get("schema") != SCHEMA:
            raise LedgerError(f"not a ledger (schema {data.get('schema')!r}, expected {SCHEMA!r})")
        try:
            miners = {str(k): MinerTotals(**v) for k, v in data["miners"].items()}
            return cls(alpha=float(data["alpha"]), last_sequence=int(data["last_sequence"]),
                       last_round_id=data["last_round_id"], rounds=int(data["rounds"]),
                       no_quorum=int(data["no_quorum"]), emitted=int(data["emitted"]), miners=miners)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LedgerError(f"malformed ledger: {exc}") from exc


def entries_from_record(record: Mapping[str, Any]) -> list[MinerEntry]:
    """The ledger's view of a stored evaluation record (``validator.round.build_record``)."""
    return [MinerEntry(miner=r["miner"], composite=float(r["score"]["composite"]), in_consensus=bool(r["in_consensus"]),
                       emission=int(r["emissions"]["amount"]), failed=r.get("error") is not None)
            for r in record["responses"]]
