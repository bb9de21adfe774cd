"""The factual stage of the pure core: a member contradicting the central answer leaves consensus."""

from __future__ import annotations

import pytest

from consensus import ConsensusConfig
from consensus.pipeline import evaluate
from consensus.signals import Signals
from consensus.types import Reason
from tests.helpers import block_vectors, make_round

TEXTS = ["Water boils at 100 degrees Celsius when the pressure is one atmosphere.",
         "At sea level the boiling point is 100 degrees, as the old Celsius scale defined it.",
         "It boils at roughly 90 degrees, lower than most people think.",
         "Pure water reaches its boiling point, 100 C, at standard pressure.",
         "The boiling point of water at sea level is one hundred degrees Celsius."]


def run(factual, **config):
    rnd = make_round(TEXTS, latencies=[0.5, 0.6, 0.7, 0.8, 0.9])
    return evaluate(rnd, block_vectors([5], spread=0.4), ConsensusConfig(**config), Signals(factual_agreement=factual))


def test_without_the_signal_everyone_agrees():
    assert run(None).members == (0, 1, 2, 3, 4)


def test_a_contradicting_member_leaves_and_earns_nothing():
    from emissions import allocate

    ev = run({0: 1.0, 1: 0.9, 2: 0.1, 3: 0.8, 4: 0.45})
    assert ev.members == (0, 1, 3)
    assert ev.results[2].reason is Reason.FACTUAL and "0.10 < 0.5" in ev.results[2].detail
    assert ev.results[4].reason is Reason.FACTUAL
    rnd = make_round(TEXTS, latencies=[0.5, 0.6, 0.7, 0.8, 0.9])
    amounts = allocate(rnd, ev).amounts
    assert amounts[2] == amounts[4] == 0 and min(amounts[i] for i in (0, 1, 3)) > 0


@pytest.mark.parametrize("factual", [{0: 1.0, 1: 0.2, 2: 0.1, 3: 0.3, 4: 0.9},  # most differ: no common answer
                                     {0: 1.0, 1: 0.2}])  # one of two checked: half is not a minority
def test_nobody_leaves_when_the_centre_is_in_doubt(factual):
    ev = run(factual)
    assert ev.members == (0, 1, 2, 3, 4) and any("no common answer" in n for n in ev.notes)


def test_unchecked_members_stay_and_the_check_can_be_off():
    assert run({0: 1.0, 1: 0.9, 3: 0.1, 4: 0.8}).members == (0, 1, 2, 4)  # 2 unchecked (budget): stays
    assert run({0: 1.0, 1: 0.9, 2: 0.1}, factual_check=False).members == (0, 1, 2, 3, 4)
    assert run({0: 1.0, 1: 0.9, 2: 0.3}, factual_min_agreement=0.25).members == (0, 1, 2, 3, 4)
