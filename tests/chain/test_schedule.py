"""chain.schedule: at most once per tempo, never faster than the rate limit; backoff while the chain is silent."""

from __future__ import annotations

import pytest

from chain.schedule import Backoff, blocks_until_inactive, weights_due


def test_first_submission_is_due_at_once():
    due = weights_due(block=1000, tempo=360, weights_rate_limit=100, last_update=0)
    assert due.due and due.next_block == 1000 and due.interval == 360


@pytest.mark.parametrize("block, expected", [(1359, False), (1360, True), (2000, True)])
def test_once_per_tempo(block, expected):
    due = weights_due(block=block, tempo=360, weights_rate_limit=100, last_update=1000)
    assert due.due is expected and due.next_block == 1360


def test_the_rate_limit_wins_when_it_is_longer_than_the_tempo():
    assert not weights_due(block=1500, tempo=360, weights_rate_limit=1000, last_update=1000).due
    assert weights_due(block=2000, tempo=360, weights_rate_limit=1000, last_update=1000).due  # since >= limit


def test_our_own_last_submission_counts_when_the_chain_lags_behind_it():
    # a commit (commit-reveal) does not move last_update until the chain reveals it
    due = weights_due(block=1300, tempo=360, weights_rate_limit=100, last_update=500, last_submitted=1000)
    assert not due.due and due.next_block == 1360


def test_a_subnet_without_epochs_still_waits_for_the_rate_limit():
    assert weights_due(block=10, tempo=0, weights_rate_limit=0, last_update=9).interval == 1
    with pytest.raises(ValueError):
        weights_due(block=-1, tempo=1, weights_rate_limit=1, last_update=None)


def test_inactivity_countdown():
    assert blocks_until_inactive(block=6000, last_update=1000, activity_cutoff=5000) == 0
    assert blocks_until_inactive(block=1200, last_update=1000, activity_cutoff=5000) == 4800
    assert blocks_until_inactive(block=1200, last_update=1000, activity_cutoff=0) is None


def test_backoff_doubles_to_a_ceiling():
    b = Backoff(initial_s=12, factor=2, max_s=100)
    assert [b.delay(n) for n in range(6)] == [0.0, 12, 24, 48, 96, 100]
    assert b.delay(10_000) == 100
    assert b.next_attempt(2, 1000.0) == 1024.0
    with pytest.raises(ValueError):
        Backoff(initial_s=0)
