"""``StoreReview``: every readable round of a store, in order, with the stored ledger and what was skipped.

``load.load_store`` builds it; its methods are the store-wide tables the
index page and ``notebooks/miners_over_time.ipynb`` show (per-miner work is
in ``miners``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from consensus.identity import LEAD, MIN_ROUNDS, SHARE
from validator.records.ledger_entries import Ledger
from validator.review.display import Table, excerpt
from validator.review.miner_history import MinerHistory, ledger_table, ledger_trajectory, miner_histories
from validator.review.rounds import RoundRow

__all__ = ["Skipped", "StoreReview"]


@dataclass(frozen=True)
class Skipped:
    """A stored object that could not be shown, and why."""

    key: str
    reason: str


@dataclass(frozen=True)
class StoreReview:
    """Every readable round of a store, in order, with the stored ledger (daemon stores) if any."""

    rounds: tuple[RoundRow, ...]
    ledger: Ledger | None = None
    skipped: tuple[Skipped, ...] = ()
    pending: tuple[str, ...] = ()  # rounds with an input but no evaluation yet (a daemon mid-round)
    config_alpha: float | None = field(default=None, repr=False)  # the records' moving_average_alpha

    def round(self, round_id: str) -> RoundRow:
        for r in self.rounds:
            if r.round_id == round_id:
                return r
        raise KeyError(round_id)

    def miners(self) -> dict[str, MinerHistory]:
        """Each miner's history, miners sorted by total emissions (highest first), then id."""
        return miner_histories(self.rounds)

    def rounds_table(self) -> Table:
        """One row per round: place, id, time, prompt, consensus score, reached, status, miners, failures, pay."""
        cols = (
            "order",
            "round_id",
            "started_at",
            "prompt",
            "score",
            "reached",
            "status",
            "miners",
            "failures",
            "emitted",
        )
        rows = tuple(
            (
                r.order,
                r.round_id,
                r.started_at,
                excerpt(r.prompt, 80),
                r.score,
                r.reached,
                r.status,
                r.miners,
                r.failures,
                r.emitted,
            )
            for r in self.rounds
        )
        return Table(
            cols,
            rows,
            title=f"{len(self.rounds)} round(s), {sum(1 for r in self.rounds if r.reached)} reached consensus",
        )

    def miners_table(self) -> Table:
        """One row per miner over the store's rounds, highest total emissions first."""
        cols = ("miner", "rounds", "answered", "in_consensus", "consensus_rate", "mean_composite", "emissions")
        rows = tuple(
            (h.miner, h.rounds, h.answered, h.in_consensus, h.consensus_rate, h.mean_composite, h.emissions)
            for h in self.miners().values()
        )
        return Table(cols, rows, title=f"{len(rows)} miner(s)")

    def ledger_trajectory(self) -> list[Ledger]:
        """The ledger after each round, rebuilt from the records (the EMA alpha of the stored ledger,
        else of the first record's configuration, else 0.1)."""
        return ledger_trajectory(
            self.rounds, alpha=self._alpha(), canary_alpha=self.ledger.canary_alpha if self.ledger is not None else 0.3
        )

    def _alpha(self) -> float:
        if self.ledger is not None:
            return self.ledger.alpha
        return self.config_alpha if self.config_alpha is not None else 0.1

    def current_ledger(self) -> Ledger:
        """The stored ledger, else the one rebuilt from the records (an empty one without rounds)."""
        if self.ledger is not None:
            return self.ledger
        trajectory = self.ledger_trajectory()
        return trajectory[-1] if trajectory else Ledger()

    def pairs_table(self) -> Table:
        """The ledger's identity evidence (``consensus.identity``): every pair of miners that was far more alike
        than its round at least once, with the rounds both answered, the close rounds, who arrived later, and
        whether the records' identity rule links them (a follower copies the other; no follower: one entity)."""
        ledger = self.current_ledger()
        linked = {(k.first, k.second): k for k in ledger.links(min_rounds=MIN_ROUNDS, share=SHARE, lead=LEAD)}
        cols = ("first", "second", "together", "close", "close_share", "later", "linked", "follower")
        rows = []
        for key, p in sorted(ledger.pairs.items(), key=lambda kv: (-kv[1].close, kv[0])):
            if p.close <= 0:
                continue
            first, second = key.split("\t")
            later = first if p.first_later > p.second_later else second if p.second_later > p.first_later else None
            link = linked.get((first, second))
            rows.append(
                (
                    first,
                    second,
                    p.together,
                    p.close,
                    p.close / p.together if p.together else 0.0,
                    later,
                    link is not None,
                    None if link is None else link.follower,
                )
            )
        return Table(
            cols,
            tuple(rows),
            title=f"{len(rows)} pair(s) of miners far more alike than their rounds, "
            f"{len(linked)} linked (close in at least {MIN_ROUNDS} rounds and "
            f"{SHARE:.0%} of those both answered)",
        )

    def ledger_table(self) -> Table:
        """Per-miner totals: the stored ledger when there is one, else rebuilt from the records."""
        if self.ledger is not None:
            return ledger_table(self.ledger, "stored ledger.json")
        trajectory = self.ledger_trajectory()
        return ledger_table(trajectory[-1] if trajectory else Ledger(), "rebuilt from the round records")
