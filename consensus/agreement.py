"""Consensus score (mu + lambda * sigma) and polarity agreement among the dominant cluster."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from consensus.similarity import pair_values
from consensus.types import Polarity


def consensus_score(sim: np.ndarray, members: np.ndarray, lambda_factor: float) -> tuple[float, float, float, int]:
    """(score, mu, sigma, pairs) over the pairwise similarities of ``members``.

    sigma is the population standard deviation of the pair similarities. With
    fewer than two members there is no pair and no evidence of agreement: the
    score is 0.0.
    """
    pairs = pair_values(sim, members)
    if len(pairs) == 0:
        return 0.0, 0.0, 0.0, 0
    mu = float(pairs.mean())
    sigma = float(pairs.std())
    return mu + lambda_factor * sigma, mu, sigma, int(len(pairs))


@dataclass(frozen=True)
class PolarityOutcome:
    majority: Polarity | None  # None on a tie or with no decided labels
    agreed: bool | None  # None: no decided label at all (not a yes/no matter), no constraint
    dissenters: tuple[int, ...]  # members whose decided label differs from the majority


def polarity_agreement(members: np.ndarray, labels: dict[int, Polarity], quorum: float) -> PolarityOutcome:
    """Do the members agree on affirmative / negative?

    Only members with a decided label (affirmative or negative) vote; unclear
    and unlabelled members neither vote nor dissent. The majority label must
    hold strictly more than ``quorum`` of the votes; its opponents are
    dissenters and leave consensus. A tie, or no votes at all when labels were
    asked for, is no agreement: nobody is removed and consensus is not reached.
    """
    votes = {int(i): labels[int(i)] for i in members if labels.get(int(i)) in (Polarity.AFFIRMATIVE, Polarity.NEGATIVE)}
    if not votes:
        return PolarityOutcome(None, None, ())
    yes = sum(1 for v in votes.values() if v is Polarity.AFFIRMATIVE)
    no = len(votes) - yes
    if yes == no:
        return PolarityOutcome(None, False, ())
    majority = Polarity.AFFIRMATIVE if yes > no else Polarity.NEGATIVE
    share = max(yes, no) / len(votes)
    dissenters = tuple(sorted(i for i, v in votes.items() if v is not majority))
    return PolarityOutcome(majority, share > quorum, dissenters)
