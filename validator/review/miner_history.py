"""Per-miner aggregates over a store's rounds: each miner's history, and the ledger rebuilt round by round.

``miner_histories`` regroups the rounds' ``ResponseRow``s by miner;
``ledger_trajectory`` replays the rounds through ``validator.records.ledger_entries.Ledger.apply``
exactly as the daemon does (each round's forgotten hotkeys dropped first, ``Ledger.without``), so for a daemon store its last entry equals the
stored ``ledger.json``; ``ledger_table`` shows one ledger as a ``Table``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from validator.records.ledger_entries import Ledger, MinerEntry, canary_accuracy, close_pairs, comparable, paid_share
from validator.review.display import Table
from validator.review.rounds import RoundRow

__all__ = ["MinerHistory", "MinerPoint", "ledger_table", "ledger_trajectory", "miner_histories"]


@dataclass(frozen=True)
class MinerPoint:
    """One miner in one round."""

    round_id: str
    order: int
    composite: float | None
    in_consensus: bool
    reason: str
    emission: int
    latency_s: float | None
    error: str | None


@dataclass(frozen=True)
class MinerHistory:
    """A miner's rounds, in store order, and its totals over them."""

    miner: str
    points: tuple[MinerPoint, ...]

    @property
    def rounds(self) -> int:
        return len(self.points)

    @property
    def answered(self) -> int:
        return sum(1 for p in self.points if p.error is None)

    @property
    def in_consensus(self) -> int:
        return sum(1 for p in self.points if p.in_consensus)

    @property
    def consensus_rate(self) -> float:
        return self.in_consensus / self.rounds if self.points else 0.0

    @property
    def emissions(self) -> int:
        return sum(p.emission for p in self.points)

    @property
    def mean_composite(self) -> float | None:
        scores = [p.composite for p in self.points if p.composite is not None]
        return sum(scores) / len(scores) if scores else None


def miner_histories(rounds: Sequence[RoundRow]) -> dict[str, MinerHistory]:
    """Each miner's history over ``rounds``, miners sorted by total emissions (highest first), then id."""
    points: dict[str, list[MinerPoint]] = {}
    for rnd in rounds:
        for r in rnd.responses:
            points.setdefault(r.miner, []).append(
                MinerPoint(
                    rnd.round_id, rnd.order, r.composite, r.in_consensus, r.reason, r.emission, r.latency_s, r.error
                )
            )
    histories = [MinerHistory(m, tuple(p)) for m, p in points.items()]
    histories.sort(key=lambda h: (-h.emissions, h.miner))
    return {h.miner: h for h in histories}


def ledger_trajectory(rounds: Sequence[RoundRow], *, alpha: float, canary_alpha: float) -> list[Ledger]:
    """The ledger after each of ``rounds``, starting from an empty one with these EMA alphas."""
    ledger = Ledger(alpha=alpha, canary_alpha=canary_alpha)
    out = []
    for i, rnd in enumerate(rounds, start=1):
        accuracy = canary_accuracy(rnd.canary)
        verified = {a.index: a.right for a in rnd.task.answers} if rnd.task is not None else None
        entries = [
            MinerEntry(
                miner=r.miner,
                share=paid_share(r.emission, rnd.pool, rnd.nominal_pool),
                emission=r.emission,
                in_consensus=r.in_consensus,
                failed=r.error is not None,
                canary=accuracy.get(r.index, 0.0) if accuracy else None,
                verified=None if verified is None else verified.get(r.index, False),
            )
            for r in rnd.responses
        ]
        ledger = ledger.without(rnd.forgotten).apply(  # the hotkeys the daemon dropped before the round first
            i,
            rnd.round_id,
            entries,
            no_quorum=rnd.status == "no_quorum",
            consensus_right=None if rnd.canary is None else rnd.canary.consensus_right,
            close=close_pairs(rnd.close_pairs),
            comparable=comparable(rnd.comparable),
            tick=rnd.tick,
        )
        out.append(ledger)
    return out


def ledger_table(ledger: Ledger, source: str) -> Table:
    """Per-miner totals of ``ledger`` (``source`` says where it came from), highest emissions first."""
    weights = ledger.weights()
    cols = ("miner", "rounds", "answered", "in_consensus", "consensus_rate", "emissions", "ema", "weight", "last_round")
    rows = []
    for miner, m in sorted(ledger.miners.items(), key=lambda kv: (-kv[1].emissions, kv[0])):
        rows.append(
            (
                miner,
                m.rounds,
                m.answered,
                m.in_consensus,
                m.in_consensus / m.rounds if m.rounds else 0.0,
                m.emissions,
                m.ema,
                weights.get(miner, 0.0),
                m.last_round,
            )
        )
    return Table(
        cols,
        tuple(rows),
        title=f"ledger ({source}): {ledger.rounds} round(s), "
        f"{ledger.no_quorum} without quorum, {ledger.emitted:,} emitted",
    )
