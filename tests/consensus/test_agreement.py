import math

import numpy as np
import pytest

from consensus.agreement import consensus_score, polarity_agreement
from consensus.types import Polarity

A, N, U = Polarity.AFFIRMATIVE, Polarity.NEGATIVE, Polarity.UNCLEAR
SIM = np.array([[1, 0.8, 0.6], [0.8, 1, 0.7], [0.6, 0.7, 1]])


def test_mu_plus_lambda_sigma_hand_checked():
    score, mu, sigma, pairs = consensus_score(SIM, np.arange(3), 1.0)
    assert pairs == 3 and mu == pytest.approx(0.7)
    assert sigma == pytest.approx(math.sqrt((0.01 + 0.01 + 0) / 3))
    assert score == pytest.approx(0.7 + sigma)
    assert consensus_score(SIM, np.arange(3), -1.0)[0] == pytest.approx(0.7 - sigma)


def test_fewer_than_two_members_score_zero():
    assert consensus_score(SIM, np.array([1]), 1.0) == (0.0, 0.0, 0.0, 0)
    assert consensus_score(SIM, np.array([], dtype=int), 1.0)[3] == 0


def test_polarity_majority_and_dissenters():
    out = polarity_agreement(np.arange(4), {0: A, 1: A, 2: N, 3: U}, 0.5)
    assert out.majority is A and out.agreed and out.dissenters == (2,)


def test_polarity_tie_is_no_agreement_and_removes_nobody():
    out = polarity_agreement(np.arange(2), {0: A, 1: N}, 0.5)
    assert out.majority is None and not out.agreed and out.dissenters == ()


def test_polarity_only_unclear_does_not_apply():
    out = polarity_agreement(np.arange(2), {0: U, 1: U}, 0.5)
    assert out.agreed is None and out.dissenters == ()


def test_polarity_quorum():
    labels = {0: A, 1: A, 2: N}
    assert polarity_agreement(np.arange(3), labels, 0.5).agreed
    assert not polarity_agreement(np.arange(3), labels, 0.7).agreed


def test_unclear_answer_leaning_against_the_majority_dissents():
    from consensus.agreement import polarity_agreement
    from consensus.types import Polarity as P

    members = np.array([0, 1, 2, 3])
    labels = {0: P.AFFIRMATIVE, 1: P.AFFIRMATIVE, 2: P.UNCLEAR, 3: P.UNCLEAR}
    out = polarity_agreement(members, labels, 0.5, leaning={0: 8.0, 1: 7.5, 2: 3.7, 3: 5.5})
    assert out.agreed and out.dissenters == (2,)  # 3.7 leans no; 5.5 leans yes and stays
    assert polarity_agreement(members, labels, 0.5).dissenters == ()  # without leaning values: unchanged
    assert polarity_agreement(members, {**labels, 2: P.UNCLEAR}, 0.5, leaning={2: 5.0}).dissenters == ()
