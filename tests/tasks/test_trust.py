"""Earned trust: the Beta posterior of verified accuracy, checked by hand."""

from __future__ import annotations

import pytest

from tasks import Trust


def test_a_new_identity_starts_at_the_prior_with_a_wide_interval():
    t = Trust(0, 0)
    assert t.mean == 0.5 and t.accuracy is None
    lo, hi = t.interval()
    assert lo == pytest.approx(0.025) and hi == pytest.approx(0.975)  # Beta(1, 1) is uniform
    assert t.describe() == "prior 0.50 (no task yet)"


def test_posterior_by_hand():
    t = Trust(8, 10)  # Beta(9, 3)
    assert t.mean == pytest.approx(0.75)
    lo, hi = t.interval()
    assert 0.45 < lo < 0.5 and 0.93 < hi < 0.95  # scipy.stats.beta(9, 3).ppf([0.025, 0.975]) = [0.4822, 0.9398]
    assert lo == pytest.approx(0.4822, abs=1e-3) and hi == pytest.approx(0.9398, abs=1e-3)
    assert t.describe() == "0.75 [0.48, 0.94] (8/10)"


def test_more_evidence_narrows_the_interval_and_orders_the_means():
    few, many = Trust(4, 5), Trust(80, 100)
    assert many.interval()[1] - many.interval()[0] < few.interval()[1] - few.interval()[0]
    assert Trust(0, 20).mean < Trust(0, 0).mean < Trust(20, 20).mean


@pytest.mark.parametrize(("right", "tasks"), [(-1, 3), (4, 3), (0, -1)])
def test_impossible_counts_are_refused(right, tasks):
    with pytest.raises(ValueError, match="trust"):
        Trust(right, tasks)
