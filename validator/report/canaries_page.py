"""The report's canary view: per canary round, was the dominant cluster right, and how often so far.

Canary rounds (``validator.round.canaries``) carry a known answer; their records say
whether the dominant cluster gave it (``canary.consensus_right``). This module
turns the store's rounds into the rows of ``canaries.html``: one per canary
round in store order, with the running share of canary rounds whose
consensus was right ("how often consensus was right", over time). Pure: it
reads the review's parsed rounds only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from validator.review import RoundRow


@dataclass(frozen=True)
class CanaryRow:
    order: int  # the round's place in the store
    round_id: str
    started_at: str | None
    prompt: str
    consensus_right: bool | None  # None: nobody was in consensus (or no quorum)
    consensus_accuracy: float | None
    answers_right: int
    answers: int
    right_so_far: int  # canary rounds with a right consensus up to and including this one
    judged_so_far: int  # canary rounds with a verdict (consensus_right not None) so far

    @property
    def rate_so_far(self) -> float | None:
        return self.right_so_far / self.judged_so_far if self.judged_so_far else None


def canary_rows(rounds: Sequence[RoundRow]) -> list[CanaryRow]:
    rows: list[CanaryRow] = []
    right = judged = 0
    for rnd in rounds:
        c = rnd.canary
        if c is None or not c.canary:
            continue
        judged += c.consensus_right is not None
        right += c.consensus_right is True
        rows.append(
            CanaryRow(
                rnd.order,
                rnd.round_id,
                rnd.started_at,
                rnd.prompt,
                c.consensus_right,
                c.consensus_accuracy,
                sum(1 for a in c.answers if a.right),
                len(c.answers),
                right,
                judged,
            )
        )
    return rows
