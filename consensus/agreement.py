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


def polarity_agreement(
    members: np.ndarray, labels: dict[int, Polarity], quorum: float, leaning: dict[int, float] | None = None
) -> PolarityOutcome:
    """Do the members agree on affirmative / negative?

    Only members with a decided label (affirmative or negative) vote; unlabelled
    members neither vote nor dissent. The majority label must hold strictly
    more than ``quorum`` of the votes; its opponents are dissenters and leave
    consensus. An unclear member whose ``leaning`` (the 0..10 score behind its
    label) is on the other side of 5 from an agreed majority dissents too: an
    answer that leans "no" is not part of a "yes" consensus (a prompt-injection
    answer that restates the question landed there in a real round). A tie, or
    no votes at all when labels were asked for, is no agreement: nobody is
    removed and consensus is not reached.
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
    dissenters = {i for i, v in votes.items() if v is not majority}
    if share > quorum and leaning:
        for i in members:
            i = int(i)
            if (
                labels.get(i) is Polarity.UNCLEAR
                and i in leaning
                and leaning[i] != 5.0
                and (leaning[i] < 5.0) == (majority is Polarity.AFFIRMATIVE)
            ):
                dissenters.add(i)
    return PolarityOutcome(majority, share > quorum, tuple(sorted(dissenters)))
