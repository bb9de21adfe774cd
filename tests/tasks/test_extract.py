"""Answers read as honest models write them: a table of wordings per default family, each verified by the
family's own verifier against a generated task (the answer put into the wording)."""

from __future__ import annotations

import re

import pytest

from tasks import DEFAULT_FAMILIES, TaskSpec, extract, generate, verify
from tasks.extract import number_in_words, readings, stated

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


# answer lines that restate the question and state the value, as the recorded models wrote them
# (benchmarks/results/tasks/: the family, seed and config of the recorded task, the reply's last line)
SMALL = {
    "lcm": {"max_value": 15},
    "prime_factorization": {"max_value": 100},
    "fraction_simplification": {"max_value": 20, "max_factor": 5, "styles": ["plain"]},
    "leg_counting": {"min_animals": 1, "max_animals": 2, "max_instances": 3},
}


@pytest.mark.parametrize(
    ("family", "seed", "reply"),
    [
        ("lcm", 2672403758743502415, "Answer: The LCM of 4 and 6 is 12."),  # qwen05-hot
        ("prime_factorization", 3595302218174742407, "Answer: The prime factorization of 52 is: 2 × 2 × 13."),
        ("prime_factorization", 10658076761157675449, "The prime factorization of 18 is 2 × 3 × 3."),  # qwen15-hot
        ("prime_factorization", 4858911889739493723, "Answer: \\(7 \\times 11\\)"),  # qwen15
        ("fraction_simplification", 13699100091735860765, "Answer: simplest fraction: 1/5."),  # qwen05-hot
        ("basic_arithmetic", 1390903825286751194, "Answer: -30 / 3 evaluates to -10."),  # qwen05-hot, defaults
    ],
)
def test_a_sentence_stating_the_value_is_read_for_its_value(family, seed, reply):
    task = generate(TaskSpec(family, seed, SMALL.get(family, {})))
    verdict = verify(task, reply)
    assert verdict.right, (task.answer, reply, verdict)


@pytest.mark.parametrize(
    "wording",
    [
        "Answer: The Least Common Multiple (LCM) of {q} is {a}.",
        "Answer: The LCM of {q} is equal to {a}",
        "So, the LCM of {q} equals **{a}**.",
        "Answer: LCM({q}) = {a}",
    ],
)
def test_sentences_of_the_lcm_family(wording):
    for seed in (1, 2, 3):
        task = generate(TaskSpec("lcm", seed, SMALL["lcm"]))
        reply = wording.format(q=" and ".join(re.findall(r"\d+", task.question)), a=task.answer)
        assert verify(task, reply).right, (task.question, reply)


@pytest.mark.parametrize(
    ("family", "seed", "reply"),
    [
        ("lcm", 17940184846437898813, "Answer: LCM of 5, 15 is 25."),  # recorded, wrong: stays wrong
        ("lcm", 11688686593216605811, "Answer: LCM of 15 & 32 should equal 7."),  # recorded, wrong
        ("leg_counting", 4690152749720735885, "Answer: 2 Answer: 4"),  # recorded: two candidates, 4 is right
        ("leg_counting", 4690152749720735885, "Answer: 2 legs, or the total is 4"),
        ("leg_counting", 4690152749720735885, "Answer: 6 is not right, it is 4"),
        ("leg_counting", 4690152749720735885, "Answer: The total is not 4"),
        ("leg_counting", 4690152749720735885, "Answer: The total isn't 4"),
        ("leg_counting", 4690152749720735885, "Answer: The total is 4 or 6"),
        ("leg_counting", 4690152749720735885, "Answer: The total is 4, maybe 6"),
        ("leg_counting", 4690152749720735885, "Answer: x = 3 and the total is 4"),
        ("leg_counting", 4690152749720735885, "Answer: If each has 2 legs, the total is 4"),
        ("leg_counting", 4690152749720735885, "Answer: 2 cats have 8 legs, the total is 4"),  # 2, 8: not the question's
        ("leg_counting", 4690152749720735885, "Answer: The total is 4? No"),
    ],
)
def test_a_sentence_never_pays_a_hedged_or_listed_value(family, seed, reply):
    task = generate(TaskSpec(family, seed, SMALL.get(family, {})))
    verdict = verify(task, reply)
    assert not verdict.right, (task.answer, task.question, reply, verdict)


# a wrong value offered beside the right one, or the right one denied: never right, in any default family
HEDGED = (
    "Answer: {a} is not right, it is {w}",
    "Answer: The answer is {a} or {w}",
    "Answer: x = {w} and y is {a}",
    "Answer: y is {a} and x = {w}",
    "Answer: {w}, or the total is {a}",
    "Answer: The total is not {a}",
    "Answer: It isn't {a}",
    "Answer: {w} Answer: {a}",
    "Answer: The result is {a}? It is {w}",
)


@pytest.mark.parametrize("family", DEFAULT_FAMILIES)
@pytest.mark.parametrize("wording", HEDGED)
def test_hedged_answers_stay_wrong_in_every_default_family(family, wording):
    for seed in (1, 2, 3):
        task = generate(TaskSpec(family, seed))
        if not task.answer.lstrip("-").isdigit():
            continue  # the wordings put a second number beside the answer
        reply = wording.format(a=task.answer, w=int(task.answer) + 7)
        assert not verify(task, reply).right, (task.question, reply)


def test_stated_reads_one_value_or_none():
    q = "Find the Least Common Multiple (LCM) of these numbers: 9, 2"
    assert stated("The Least Common Multiple (LCM) of 9 and 2 is 18", q) == "18"
    assert stated("The Least Common Multiple (LCM) of 9 and 2 is eighteen", q) == "18"
    assert stated("The LCM of 9 and 2 is 18 legs", q) == "18"
    assert stated("The LCM of 9 and 2 is 1,800", q) == "1800"
    assert stated("The prime factorization of 18 is 2 \\times 3 \\times 3") == "2 × 3 × 3"
    assert stated("The simplified fraction is 3 / 5") == "3/5"
    assert stated("18 is not right, it is 36", q) is None  # two statements
    assert stated("The LCM of 9 and 2 is 18, not 36", q) is None
    assert stated("The LCM of 9 and 2 is 18 not", q) is None
    assert stated("The LCM of 7 and 2 is 18", q) is None  # 7 is not the question's
    assert stated("The LCM of 7 and 2 is 18") == "18"  # without the question no bound on its numbers
    assert stated("x = 3 and y is 5") is None
    assert stated("12, or rather the LCM is 24") is None
    assert stated("12: 14") is None
    assert stated("The LCM is the product") is None
    assert readings("The LCM of 9 and 2 is 18.", q) == ("The LCM of 9 and 2 is 18", "18")


def test_a_statement_followed_by_its_explanation_on_the_answer_line():
    # the default daemon's honest-teacher (Qwen2.5-Coder-0.5B), round 59 of its 200 rounds, with the right value
    q = "Find the Greatest Common Divisor (GCD) of these numbers: 6, 20"
    line = (
        "The Greatest Common Divisor (GCD) of 6 and 20 is 2. The GCD is the largest positive integer that divides "
        "both 6 and 20 without leaving a remainder"
    )
    assert stated(line, q) == "2"
    assert stated(line) is None  # several sentences: only with the question's numbers to check them against
    assert stated("The GCD of 6 and 20 is 2. Or maybe 4", q) is None
    assert stated("The GCD of 6 and 20 is 2. It is 4", q) is None
    assert stated("6 is not right. It is 2", q) is None
    assert stated("The GCD of 6 and 20 is 2. A GCD of 4 would divide 20", q) is None  # 4: not the question's
    task = generate(TaskSpec("gcd", 5, {"max_value": 30}))
    a, b = re.findall(r"\d+", task.question)
    reply = f"Answer: The GCD of {a} and {b} is {task.answer}. The GCD is the largest integer dividing {a} and {b}."
    assert verify(task, reply).right, (task.question, reply)
