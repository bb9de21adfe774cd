"""The one line a daemon prints per round: status, who answered, consensus, what was paid of the pool, time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from validator.terminal import safe


def unreached_why(consensus) -> str | None:
    """Why a record's consensus (``validator.records.evaluation_record`` consensus section) was not reached; None when it was."""
    if consensus.reached or consensus.score is None:
        return None
    if consensus.polarity_agreed is False:
        return "the yes/no answers split"
    if consensus.threshold is not None and consensus.score < consensus.threshold:
        return f"below {consensus.threshold:g}"
    return "fewer than two members"


@dataclass(frozen=True)
class RoundLine:
    sequence: int
    round_id: str
    status: str  # "ok" or "no_quorum"
    recovered: str | None  # None, "evaluation" (step 2) or "input" (step 3)
    miners: int
    usable: int
    failures: dict[str, int]
    consensus_score: float | None
    reached: bool
    top_miner: str | None
    paid: int
    seconds: float
    stages: dict[str, float]
    latencies: tuple[float, ...] = ()
    pool: int = 0  # the nominal pool (emissions.pool_units); a round pays less when consensus is low
    unreached_why: str | None = None  # why consensus was not reached (``unreached_why``)
    tick: int | None = None  # the tick (validator.daemon.committee_draw) and this round's committee of how many
    committee: int | None = None
    committees: int | None = None
    # miner -> reason word of each response paid nothing (``validator.review.unpaid.unpaid_reasons``)
    unpaid: Mapping[str, str] = field(default_factory=dict)
    members: tuple[str, ...] = ()  # every miner the round asked (its committee's members): the rounds each sat in
    task: str | None = None  # a task round: "task <family>: <right> of <answers> right" (its verifier decided)

    def judged(self) -> dict[str, int]:
        """Counts of the reasons answers that did not fail were paid nothing (copy, offtopic, injection...)."""
        out: dict[str, int] = {}
        for reason in self.unpaid.values():
            if reason not in self.failures:
                out[reason] = out.get(reason, 0) + 1
        return dict(sorted(out.items()))

    def line(self) -> str:
        """The one log line of a round."""
        failed = sum(self.failures.values())
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.failures.items()))
        parts = [self.round_id, self.status, f"miners {self.miners}", f"answered {self.usable}"]
        if self.tick is not None and self.committees and self.committees > 1:
            parts.insert(1, f"tick {self.tick} committee {(self.committee or 0) + 1}/{self.committees}")
        if failed:
            parts.append(f"failed {failed} ({reasons})")
        judged = self.judged()
        if judged:
            parts.append(f"unpaid {sum(judged.values())} ({', '.join(f'{k} {v}' for k, v in judged.items())})")
        if self.task is not None:
            parts.append(self.task)
        elif self.consensus_score is not None:
            parts.append(
                f"consensus {self.consensus_score:.3f} {'reached' if self.reached else 'not reached'}"
                + (f" ({self.unreached_why})" if not self.reached and self.unreached_why else "")
            )
        if self.top_miner is not None:
            parts.append(f"top {safe(self.top_miner, 32)}")
        else:
            parts.append(f"no top: {self._no_top()}")
        parts.append(f"paid {self.paid:,} of {self.pool:,}" if self.pool else f"paid {self.paid:,}")
        parts.append(f"{self.seconds:.1f}s")
        if self.recovered:
            parts.append(f"(resumed from stored {self.recovered})")
        return "  ".join(parts)

    def _no_top(self) -> str:
        """Why a round has no top miner (no top bonus), in words."""
        if self.status == "no_quorum":
            return "no quorum, nobody paid"
        if self.paid == 0 and self.task is not None:
            return "no answer right, nobody paid"
        if self.paid == 0:
            why = (
                f"consensus not reached ({self.unreached_why or 'too low'})"
                if not self.reached
                else "no answer eligible"
            )
            return f"{why}, nobody paid"
        if self.miners - len(self.unpaid) >= 2:
            return "the best composite score is tied (identical answers score alike), no top bonus"
        return "one answer paid, no top bonus"
