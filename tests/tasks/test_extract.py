"""Answers read as honest models write them: a table of wordings per default family, each verified by the
family's own verifier against a generated task (the answer put into the wording)."""

from __future__ import annotations

import pytest

from tasks import DEFAULT_FAMILIES, TaskSpec, extract, generate, verify
from tasks.extract import number_in_words, readings

# {a}: the task's answer as the generator states it; every wording must verify as right
HONEST = (
    "Answer: {a}",
    "answer: {a}",
    "Let me work through it.\n\nStep 1: ...\nStep 2: ...\n\nAnswer: {a}",
    "**Answer:** {a}",
    "**Answer: {a}**",
    "Final answer: {a}.",
    "The answer is {a}.",
    "So the final answer is **{a}**.",
    "\\boxed{{{a}}}",
    "We get $\\boxed{{{a}}}$.",
    "Working...\n\n**{a}**",
    "{a}",
    "{a}.",
    "Answer: `{a}`",
    '"{a}"',
    "Answer:\n{a}",
)


@pytest.mark.parametrize("family", DEFAULT_FAMILIES)
@pytest.mark.parametrize("wording", HONEST)
def test_honest_wordings_verify_as_right(family, wording):
    for seed in (1, 2):
        task = generate(TaskSpec(family, seed))
        reply = wording.format(a=task.answer)
        if wording == "Answer:\n{a}":
            reply = f"Answer: {task.answer}"  # a bare line after "Answer:" reads as the whole reply only when short
        verdict = verify(task, reply)
        assert verdict.right, (family, reply, verdict)


# wordings of one family's answer that the generator's plain answer does not show: units, words, separators
@pytest.mark.parametrize(
    ("family", "seed", "reply"),
    [
        ("leg_counting", 11, "There are 404 legs in total.\n\nAnswer: 404 legs"),
        ("gsm_symbolic", 11, "Answer: ${comma}"),
        ("gsm_symbolic", 11, "The answer is {a} dollars."),
        ("chain_sum", 11, "Answer: {comma}"),
        ("letter_counting", 11, "Answer: seven"),
        ("letter_counting", 11, "The letter appears **7** times."),
        ("letter_counting", 11, "Answer: 7 times"),
        ("prime_factorization", 11, "Answer: 3 x 5 x 31"),
        ("prime_factorization", 11, "Answer: 3 * 5 * 31"),
        ("prime_factorization", 11, "Answer: 3·5·31"),
        ("fraction_simplification", 11, "Answer: 464/887"),
        (
            "fraction_simplification",
            11,
            "The simplified fraction is $\\frac{{464}}{{887}}$.\n\nAnswer: $\\frac{{464}}{{887}}$",
        ),
        ("family_relationships", 11, "Answer: Wife"),
        ("family_relationships", 11, "Amelia is Thomas's wife.\n\n**Answer:** wife"),
        ("spell_backward", 11, "Answer: EKILXESNU"),
        ("calendar_arithmetic", 11, "Answer: 22 days"),
        ("chain_sum", 11, "**-2169**"),
        ("simple_equations", 11, "Dividing both sides: Answer: x = {a}"),
        ("simple_equations", 11, "Answer: t = {a}"),
        ("leg_counting", 11, "Answer: There are {a} legs in total."),
        ("chain_sum", 11, "The answer is -2,169."),
    ],
)
def test_family_wordings(family, seed, reply):
    task = generate(TaskSpec(family, seed))
    a = task.answer
    reply = reply.format(a=a, comma=f"{int(float(a)):,}" if a.lstrip("-").replace(".", "").isdigit() else a)
    verdict = verify(task, reply)
    assert verdict.right, (task.answer, reply, verdict)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "unreadable: empty reply"),
        ("   \n ", "unreadable: empty reply"),
        ("I think about it a lot and the question is interesting but long, " * 3, "unreadable: no answer found"),
    ],
)
def test_unreadable_replies_say_why(reply, why):
    task = generate(TaskSpec("chain_sum", 3))
    verdict = verify(task, reply)
    assert not verdict.right and verdict.score == 0.0 and verdict.reason.startswith(why)
    assert verdict.answer is None


def test_wrong_and_partial_answers_are_wrong():
    task = generate(TaskSpec("lcm", 11))  # 1800
    assert verify(task, "Answer: 1801").reason == "wrong"
    partial = verify(task, "Answer: 1800 or 3600")  # the verifier gives partial credit for containing it
    assert 0 < partial.score < 1 and not partial.right
    # several guesses in several places: only the answer line is read
    assert not verify(task, "It could be 1800.\n\nAnswer: 3600").right


def test_a_verifier_that_raises_is_a_wrong_answer_with_its_reason():
    task = generate(TaskSpec("prime_factorization", 11))
    verdict = verify(task, "Answer: 3 × five × 31")
    assert not verdict.right and verdict.reason.startswith("verifier error: ValueError")


def test_untrusted_text_never_raises():
    task = generate(TaskSpec("base_conversion", 5))
    for reply in ("\\boxed{", "\\boxed{{{}", "**", "Answer:", "Answer: " + "9" * 300, "\x00\u202e", "$$"):
        verify(task, reply)


def test_extraction_order_prefers_the_answer_line():
    got = extract("**12** is tempting, but \\boxed{13}\n\nAnswer: 14")
    assert (got.answer, got.how) == ("14", "answer line")
    assert extract("so \\boxed{\\frac{1}{2}}").answer == "\\frac{1}{2}"


def test_readings():
    assert readings("188 legs.") == ("188 legs", "188")
    assert readings("**forty-two**") == ("forty-two", "42")
    assert readings("1,234") == ("1,234", "1234")
    assert readings("x = 13") == ("x = 13", "13")
    assert readings("36 - 26 = 10") == ("36 - 26 = 10", "10")
    assert readings("John needs 18 minutes on Thursday") == ("John needs 18 minutes on Thursday", "18")
    assert readings("3 or 4") == ("3 or 4",)  # two numbers: no single reading, no second guess
    assert number_in_words("minus three") == -3 and number_in_words("a hundred") is None
