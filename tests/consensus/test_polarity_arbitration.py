"""Issue 25, yes/no prompts: when the LM arbitrated between yes and no, its side is the majority (pure core)."""

from __future__ import annotations

from consensus import ConsensusConfig, Polarity, Reason
from consensus.pipeline import decide
from consensus.signals import Signals
from tests.helpers import block_vectors, make_round

YES, NO = Polarity.AFFIRMATIVE, Polarity.NEGATIVE
TEXTS = [
    "Yes, Python's list type is mutable: you can add, remove or change its elements in place.",
    "No, Python's list type is not mutable. Once a list is created its elements cannot change.",
    "No, lists are immutable in Python, so a list cannot be changed after it is created.",
    "No. A list in Python is immutable; you must build a new one to change it.",
    "Yes. Lists are mutable objects, unlike tuples and strings.",
]
LABELS = {0: YES, 1: NO, 2: NO, 3: NO, 4: YES}


def _evaluate(arbitration, config=None):
    round_ = make_round(TEXTS, prompt="Is Python's list type mutable? Answer yes or no.")
    signals = Signals(prompt_similarity=dict.fromkeys(range(5), 0.6), polarity=LABELS, arbitration=arbitration)
    return decide(round_, block_vectors([5], dim=16, spread=0.3), config or ConsensusConfig(), signals=signals)


def test_without_the_lm_the_wrong_majority_takes_the_round():
    ev = _evaluate(None)
    assert ev.consensus.majority_polarity is NO
    assert [r.reason for r in ev.results if r.index in (0, 4)] == [Reason.POLARITY, Reason.POLARITY]


def test_the_lms_side_is_the_majority_however_many_say_the_other():
    ev = _evaluate({0: True, 1: False, 2: False, 3: False, 4: True})
    assert ev.consensus.majority_polarity is YES and ev.consensus.polarity_agreed is True
    assert {r.index for r in ev.results if r.reason is Reason.POLARITY} == {1, 2, 3}
    assert "the LM arbitrated: its own answer is affirmative" in ev.results[1].detail
    assert ev.results[0].reason is Reason.IN_CONSENSUS and ev.results[4].reason is Reason.IN_CONSENSUS
    assert ev.results[0].score.composite > 0 and ev.results[1].score.composite < ev.results[0].score.composite


def test_a_verdict_that_does_not_match_the_labels_or_the_setting_off_leaves_the_headcount():
    mixed = _evaluate({0: True, 1: True, 2: False, 3: False, 4: True})  # it agreed with a "no" and two "yes"
    assert mixed.consensus.majority_polarity is NO
    off = _evaluate(
        {0: True, 1: False, 2: False, 3: False, 4: True},
        ConsensusConfig().changed({"checks.factual_arbitration": False}),
    )
    assert off.consensus.majority_polarity is NO
