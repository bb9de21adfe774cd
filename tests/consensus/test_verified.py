"""consensus.verified: on a task round the verifier's verdicts decide membership and composites (toy rounds)."""

from __future__ import annotations

import numpy as np
import pytest

from consensus.config import ConsensusConfig
from consensus.fake import FakeEmbedder
from consensus.pipeline import decide
from consensus.types import Reason, Response, Round
from consensus.verified import Verdicts, verified_evaluation
from emissions.allocate import allocate

WRONG = "Working it out carefully, the result follows.\n\nAnswer: 999999"


def _round(texts, errors=()):
    responses = tuple(
        Response(f"m{i}", t, 1.0 + 0.1 * i, error="timeout" if i in errors else None) for i, t in enumerate(texts)
    )
    return Round("r1", "What is 17 + 25?", responses)


def _evaluate(round_):
    emb = FakeEmbedder().embed([r.text for r in round_.responses])
    return decide(round_, np.asarray(emb.vectors), ConsensusConfig())


def test_a_wrong_majority_earns_nothing_and_a_lone_right_answer_is_paid():
    texts = [WRONG] * 5 + ["Adding them: 17 + 25 = 42.\n\nAnswer: 42"]
    round_ = _round(texts)
    plain = _evaluate(round_)
    assert 5 not in plain.members  # by agreement the lone right answer is out
    right = (False,) * 5 + (True,)
    decided = verified_evaluation(plain, Verdicts(right, (True,) * 6, ("wrong",) * 5 + ("right",)))
    assert decided.members == (5,) and decided.consensus.reached and decided.consensus.score == 1.0
    assert [r.reason for r in decided.results] == [Reason.WRONG] * 5 + [Reason.IN_CONSENSUS]
    assert [r.score.composite for r in decided.results] == [0.0] * 5 + [100.0]
    allocation = allocate(round_, decided)
    assert allocation.amounts[5] == allocation.pool > 0 and sum(allocation.amounts[:5]) == 0
    assert "verified task: 1 of 6 answers right" in decided.consensus.note


def test_failures_and_copies_keep_their_reason_and_nobody_right_pays_nobody():
    texts = ["", "Answer: 41", "The sum is 41, so the answer is 41.", "I cannot say."]
    round_ = _round(texts, errors=(0,))
    plain = _evaluate(round_)
    decided = verified_evaluation(
        plain, Verdicts((False,) * 4, (True, True, True, False), ("failed", "wrong", "wrong", "unreadable: ..."))
    )
    assert decided.results[0].reason is Reason.ERROR  # kept
    assert decided.results[3].reason is Reason.UNREADABLE and decided.results[3].detail == "unreadable: ..."
    assert not decided.members and not decided.consensus.reached
    assert allocate(round_, decided).pool == 0


def test_input_not_modified_and_lengths_checked():
    round_ = _round(["Answer: 42", "Answer: 42", "Answer: 43"])
    plain = _evaluate(round_)
    before = plain.results
    verified_evaluation(plain, Verdicts((True, True, False), (True,) * 3, ("", "", "wrong")))
    assert plain.results == before
    with pytest.raises(ValueError, match="2 verdicts for 3 responses"):
        verified_evaluation(plain, Verdicts((True, True), (True, True), ("", "")))
    with pytest.raises(ValueError, match="differ in length"):
        Verdicts((True,), (True, True), ("",))


LONG = (
    "First add the tens: seventeen plus twenty-five gives thirty-seven plus five more units, carried over "
    "carefully to reach the final total.\n\nAnswer: 42"
)


def test_task_rounds_apply_the_copy_rule_as_free_form_rounds_do():
    """A verbatim copy of a reply long enough to be a source (copies.copy_min_words distinct words that are not
    the prompt's), received after it, is a copy on a task round as on a free-form round: it keeps its reason and
    earns nothing. Identical short answers are agreement on both, whatever their order: all right, all paid."""
    texts = [LONG, "Answer: 42", "Answer: 42", LONG, "Answer: 42"]
    round_ = _round(texts)
    plain = _evaluate(round_)
    assert [r.reason is Reason.COPY for r in plain.results] == [False, False, False, True, False]
    assert plain.results[3].copy_of == 0
    decided = verified_evaluation(plain, Verdicts((True,) * 5, (True,) * 5, ("right",) * 5))
    assert [r.reason for r in decided.results] == [Reason.IN_CONSENSUS] * 3 + [Reason.COPY, Reason.IN_CONSENSUS]
    amounts = allocate(round_, decided).amounts
    assert amounts[3] == 0 and all(amounts[i] > 0 for i in (0, 1, 2, 4))
    # the copy's source is the first received: the same texts, the copy received first, swap who is paid
    swapped = Round(
        "r2",
        round_.prompt,
        tuple(
            Response(r.miner, r.text, r.latency_s, received_s=0.5 if i == 3 else 1.0 + i)
            for i, r in enumerate(round_.responses)
        ),
    )
    again = verified_evaluation(_evaluate(swapped), Verdicts((True,) * 5, (True,) * 5, ("right",) * 5))
    assert again.results[0].reason is Reason.COPY and again.results[3].reason is Reason.IN_CONSENSUS


TEACHER = (
    "Answer: The Greatest Common Divisor (GCD) of 6 and 20 is 4. The GCD is the largest positive integer that "
    "divides both 6 and 20 without leaving a remainder."
)
ANALYST = (
    "Answer: 20\nExplanation: The GCD of 6 and 20 is 20, as it is the largest positive integer that divides both "
    "numbers without leaving a remainder."
)


def test_a_restatement_that_gives_another_answer_is_judged_not_a_copy():
    """The default daemon's round 59 (2026-11-29): two honest miners of one model explain the GCD in the same
    words; the later restates the earlier's text (a copy by the text alone) but answers 4 where the earlier
    answered 20. With the readings known, the later is judged by the verifier (here wrong), not removed as a copy;
    a copy that keeps its source's answer stays a copy, and without readings nothing changes."""
    round_ = Round(
        "r59",
        "Find the Greatest Common Divisor (GCD) of these numbers: 6, 20.",
        (Response("analyst", ANALYST, 8.7), Response("teacher", TEACHER, 17.0), Response("copycat", ANALYST, 9.2)),
    )
    plain = _evaluate(round_)
    assert [r.reason is Reason.COPY for r in plain.results] == [False, True, True]  # by the text alone
    assert plain.results[1].copy_of == 0 and plain.results[2].copy_of == 0
    right = (False, False, False)
    details = ("wrong: read '20'", "wrong: read 'The GCD of 6 and 20 is 4'", "wrong: read '20'")
    read = ("20", "The Greatest Common Divisor (GCD) of 6 and 20 is 4", "20")
    decided = verified_evaluation(plain, Verdicts(right, (True,) * 3, details, answers=read))
    assert [r.reason for r in decided.results] == [Reason.WRONG, Reason.WRONG, Reason.COPY]
    assert decided.results[1].copy_of is None and "another answer: not its copy" in decided.results[1].detail
    assert decided.results[2].copy_of == 0  # the verbatim copy keeps its source's answer: still a copy
    # had the teacher been right, it would be paid
    paid = verified_evaluation(plain, Verdicts((False, True, False), (True,) * 3, details, answers=read))
    assert paid.members == (1,) and allocate(round_, paid).amounts[1] == allocate(round_, paid).pool
    # the same answer written otherwise ("20" and " 20 ") is one answer; without readings the copy stays
    same = verified_evaluation(plain, Verdicts(right, (True,) * 3, details, answers=("20", " 20 ", "20")))
    assert same.results[1].reason is Reason.COPY
    assert verified_evaluation(plain, Verdicts(right, (True,) * 3, details)).results[1].reason is Reason.COPY
    with pytest.raises(ValueError, match="answers and right differ"):
        Verdicts(right, (True,) * 3, details, answers=("20",))
