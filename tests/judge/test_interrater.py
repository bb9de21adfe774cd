"""Agreement statistics against values computed by hand (and scikit-learn for kappa)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judge.interrater import krippendorff_alpha, mean_kappa, pairwise_kappas, weighted_kappa

A = [1, 2, 3]
B = [1, 2, 2]


def test_weighted_kappa_by_hand():
    # quadratic weights w = (i - j)^2 / 16. Observed: only (3, 2) disagrees: (1/16) / 3 = 1/48.
    # Expected: marginals A = (1/3, 1/3, 1/3), B = (1/3, 2/3): sum p_i q_j (i - j)^2 = 9/9, / 16 = 1/16.
    # kappa = 1 - (1/48) / (1/16) = 2/3
    assert weighted_kappa(A, B) == pytest.approx(2 / 3)
    # linear weights |i - j| / 4: observed (1/4) / 3 = 1/12;
    # expected sum p_i q_j |i - j| = (1/3)(2/3)*1 + (1/3)(1/3)*1 + (1/3)(1/3)*2 + (1/3)(2/3)*1 = 7/9, / 4 = 7/36
    # kappa = 1 - (1/12) / (7/36) = 1 - 3/7 = 4/7
    assert weighted_kappa(A, B, weights="linear") == pytest.approx(4 / 7)


def test_krippendorff_alpha_by_hand():
    # values 1,1,2,2,3,2 (n = 6); frequencies n1 = 2, n2 = 3, n3 = 1.
    # ordinal: delta(2,3) = ((3 + 1) / 2)^2 = 4; D_o = 2 * 4 / 6 = 4/3.
    # delta(1,2) = 6.25, delta(1,3) = 20.25: D_e = (12 * 6.25 + 4 * 20.25 + 6 * 4) / 30 = 6; alpha = 1 - (4/3)/6 = 7/9
    ratings = np.array([A, B], dtype=float)
    assert krippendorff_alpha(ratings) == pytest.approx(7 / 9)
    # interval: D_o = 2 * 1 / 6 = 1/3; D_e = 34 / 30; alpha = 1 - 5/17 = 12/17
    assert krippendorff_alpha(ratings, level="interval") == pytest.approx(12 / 17)


def test_missing_ratings_are_left_out():
    with_gap = np.array([[1, 2, 3, 5], [1, 2, 2, np.nan]], dtype=float)  # the 4th answer has one verdict
    assert krippendorff_alpha(with_gap) == pytest.approx(7 / 9)
    assert weighted_kappa(with_gap[0], with_gap[1]) == pytest.approx(2 / 3)


def test_undefined_cases_are_none():
    assert krippendorff_alpha(np.array([[5, 5, 5], [5, 5, 5]], dtype=float)) is None  # no variation
    assert krippendorff_alpha(np.array([[1, np.nan], [np.nan, 2]], dtype=float)) is None  # nothing pairable
    assert krippendorff_alpha(np.array([[1, 2, 3]], dtype=float)) is None  # one judge
    assert weighted_kappa([4, 4], [4, 4]) is None
    assert weighted_kappa([np.nan], [3]) is None
    assert mean_kappa({("a", "b"): None}) is None


def test_perfect_agreement_is_one():
    assert weighted_kappa([1, 3, 5], [1, 3, 5]) == pytest.approx(1.0)
    assert krippendorff_alpha(np.array([[1, 3, 5], [1, 3, 5]], dtype=float)) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(20))
def test_kappa_matches_scikit_learn(seed):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, size=12)
    b = np.clip(a + rng.integers(-1, 2, size=12), 1, 5)
    ours = weighted_kappa(a, b)
    ref = cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])
    assert (ours is None and math.isnan(ref)) or ours == pytest.approx(ref)


def test_pairwise_over_three_judges_and_input_not_modified():
    ratings = np.array([A, B, A], dtype=float)
    before = ratings.copy()
    kappas = pairwise_kappas(ratings, ["j1", "j2", "j3"])
    assert kappas[("j1", "j2")] == pytest.approx(2 / 3) and kappas[("j1", "j3")] == pytest.approx(1.0)
    assert mean_kappa(kappas) == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert np.array_equal(ratings, before)
