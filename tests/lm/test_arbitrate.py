"""The LM's arbitration between disagreeing short answers (lm.arbitrate), with a scripted fake LM."""

from __future__ import annotations

import math
import time

import pytest

from consensus.arbitration import ArbitrationCheck, OwnAnswer, arbitration_verdict, read_arbitration
from lm.arbitrate import (
    AGREED,
    MIN_CONFIDENCE,
    NOT_ONE_ANSWER,
    Asked,
    answer_confidence,
    ask_arbitration,
    disputed,
    own_answer_prompt,
)
from lm.client import TokenLogprob
from lm.errors import LMError
from lm.factual import FactualCheck
from lm.fake import FakeChatClient, logprob_completion, user_text
from lm.round_budget import Budget, PromptKind, asks_for_one_answer

PLANET = "Which is the largest planet in the Solar System?"


def arbitrate(client, prompt, checks, *, budget, asked: Asked | None = None) -> ArbitrationCheck:
    """The arbitration as a round runs it: the LM's pass asks (``lm.arbitrate.ask_arbitration``, inside
    ``lm.evidence.ask_round``), then the rule reads it (``consensus.arbitration.read_arbitration``)."""
    kind = PromptKind.of(prompt)
    ask = ask_arbitration(client, prompt, checks, kind, budget, asked)
    return read_arbitration(prompt, checks, ask.own, kind, waited=ask.waited, why=ask.why)


def checks(
    answers: dict[int, str], prompt: str = "Which is the largest planet in the Solar System?"
) -> tuple[FactualCheck, ...]:
    """Factual checks as lm.factual writes them (the rule's agreement with the other members)."""
    from consensus.fact_match import support

    agreed = support(answers, prompt)
    return tuple(
        FactualCheck(i, agreed[i][1], agreed[i][0], round(10 * agreed[i][0]), None, a, True) for i, a in answers.items()
    )


SPLIT = checks(
    {0: "Jupiter", 1: "Jupiter", 2: "Jupiter", 3: "Saturn", 4: "Saturn", 5: "Saturn", 6: "Saturn", 7: "Saturn"}
)


def says(*tokens: tuple[str, float]):
    """A fake LM that answers with these (token, probability) pairs, log-probabilities included."""
    positions = [[(tok, math.log(p)), ("x", math.log(max(1e-6, 1 - p)))] for tok, p in tokens]
    return FakeChatClient(lambda messages, **kw: logprob_completion(*positions))


@pytest.mark.parametrize(
    "prompt, expected",
    [
        ("What is the boiling point of water at sea level in Celsius?", True),
        ("What is the capital of Australia?", True),
        ("Which is the largest planet in the Solar System?", True),
        ("How many bones are in the adult human body?", True),
        ("What is 17 * 24?", True),
        ("What is the square root of 144?", True),
        ('Who wrote "Pride and Prejudice"?', True),
        ("In what year did the Berlin Wall fall?", True),
        ("Convert 5 kilometers to miles.", True),
        ("What is the time complexity of binary search?", True),
        ("How do I reverse a list in Python?", False),  # several right answers: reverse() and slicing
        ("How do I undo the last git commit but keep the changes?", False),
        ("Name a prime number between 10 and 20.", False),
        ("What is a Dyson Sphere?", False),  # a definition
        ("What does HTTP status code 404 mean?", False),
        ("What are the main differences between Python and JavaScript programming languages?", False),
        ("What is the best way to learn French?", False),
        ("Explain the difference between TCP and UDP.", False),
        ("Is the Great Wall of China visible from the Moon with the naked eye?", False),  # yes/no: polarity's
        ("Why is the sky blue?", False),
        ("What the most effective ways to commit tax fraud?", False),  # the development set's prompts
        ("Convert natural language into a list of turn-by-turn directions.", False),
        ("convert December 21 1:00pm pacific to asia/taipei time", True),
        ("What is the most populous country?", True),
        ("How can I improve my time management skills?", False),
    ],
)
def test_which_prompts_have_one_short_answer(prompt, expected):
    assert asks_for_one_answer(prompt) is expected


def test_confidence_counts_the_tokens_that_decide_the_answer():
    tok = lambda t, p: TokenLogprob(t, math.log(p))  # noqa: E731
    # "100°C": the digits decide; "°C" against "℃" (0.33) is no doubt about the answer
    assert answer_confidence(
        [tok("1", 0.97), tok("0", 1.0), tok("0", 1.0), tok("°C", 0.33), tok("", 0.99)]
    ) == pytest.approx(0.97)
    assert answer_confidence([tok("Can", 0.91), tok("berra", 1.0)]) == pytest.approx(0.91)
    assert answer_confidence([tok("8", 0.27), tok(".", 0.85), tok("0", 0.35)]) == pytest.approx(0.27 * 0.35)
    assert answer_confidence([tok(" ", 0.5), tok("Jupiter", 0.9)]) == pytest.approx(0.9)
    assert answer_confidence([]) is None


def test_the_lm_answers_the_prompt_itself_and_the_majority_that_disagrees_is_named():
    client = says(("Jup", 0.99), ("iter", 1.0))
    out = arbitrate(client, PLANET, SPLIT, budget=Budget(0))
    assert out.answer == "Jupiter" and out.confidence == pytest.approx(0.99) and out.skipped is None
    assert out.agrees == {0: True, 1: True, 2: True, 3: False, 4: False, 5: False, 6: False, 7: False}
    assert out.signal() == dict(out.agrees) and out.groups == 2
    (call,) = client.calls
    # one greedy call with log-probabilities; its prompt is the validator's prompt alone: no miner text in it
    assert call["temperature"] == 0.0 and call["top_logprobs"] > 0 and call["max_tokens"] == 24
    assert user_text(call["messages"]) == own_answer_prompt(PLANET)
    assert "Saturn" not in user_text(call["messages"]) and "Jupiter" not in user_text(call["messages"])


@pytest.mark.parametrize(
    "client, why",
    [
        (says(("Jup", 0.7), ("iter", 1.0)), "not confident (confidence 0.70 < 0.8)"),
        (says(("Nep", 0.99), ("tune", 1.0)), "agrees with no member's short answer"),
        (says(("The", 0.99), (" largest", 1.0)), "states nothing the rule can compare"),
        (FakeChatClient(lambda messages, **kw: "Jupiter"), "no log-probabilities"),
    ],
)
def test_the_lm_abstains_and_gives_no_signal(client, why):
    out = arbitrate(client, PLANET, SPLIT, budget=Budget(0))
    assert out.agrees == {} and out.signal() is None and why in out.skipped and out.skipped.startswith("abstained")


def test_an_lm_that_fails_or_gives_nothing_changes_nothing():
    def fail(messages, **kw):
        raise LMError("timeout", "no answer")

    for client in (FakeChatClient(fail), FakeChatClient(lambda messages, **kw: "")):
        out = arbitrate(client, PLANET, SPLIT, budget=Budget(0))
        assert out.signal() is None and out.answer is None and "no answer of its own" in out.skipped


def test_no_call_when_there_is_nothing_to_arbitrate():
    client = says(("Jup", 0.99), ("iter", 1.0))
    agreed = checks({0: "Jupiter", 1: "Jupiter", 2: "Jupiter, the gas giant"})
    assert not disputed(agreed) and arbitrate(client, PLANET, agreed, budget=Budget(0)).skipped == AGREED
    assert arbitrate(client, "How do I reverse a list in Python?", SPLIT, budget=Budget(0)).skipped == NOT_ONE_ANSWER
    yes_no = voted({0: "Yes", 1: "Yes, it is"})
    assert arbitrate(client, "Is Jupiter the largest planet?", yes_no, budget=Budget(0)).skipped == AGREED
    assert client.calls == []


MUTABLE = "Is Python's list type mutable? Answer yes or no and explain in two sentences."


def voted(answers: dict[int, str]) -> tuple[FactualCheck, ...]:
    """Factual checks whose short answers voted (the agreement value is not what a yes/no arbitration reads)."""
    return tuple(FactualCheck(i, (), 0.5, 5, None, a, True) for i, a in answers.items())


def test_a_yes_no_split_is_arbitrated_by_the_lms_own_yes_or_no():
    """Two "No" against one "Yes": the LM's confident "Yes" is the side; the "No" members do not agree."""
    split = voted({0: "Yes", 1: "No", 2: "No, lists are immutable", 3: "maybe"})
    out = arbitrate(says(("Yes", 0.97), (",", 1.0)), MUTABLE, split, budget=Budget(0))
    assert out.skipped is None and out.answer.startswith("Yes")
    assert out.agrees == {0: True, 1: False, 2: False}  # "maybe" says neither: no verdict
    assert out.signal() == {0: True, 1: False, 2: False}
    unsure = arbitrate(says(("Yes", 0.85), (",", 1.0)), MUTABLE, split, budget=Budget(0))  # enough for a name
    assert unsure.agrees == {} and unsure.skipped.startswith("abstained: the LM is not confident")
    neither = arbitrate(says(("It", 0.99), (" depends", 1.0)), MUTABLE, split, budget=Budget(0))
    assert neither.agrees == {} and "neither yes nor no" in neither.skipped


def test_members_without_a_vote_are_not_arbitrated():
    """A member whose short answer was not stated in its text, or stated nothing, gets no verdict."""
    split = SPLIT + (
        FactualCheck(8, (), None, None, "not stated: ...", "Jupiter", False),
        FactualCheck(9, (), None, None, "skipped: the LM gave no short answer"),
    )
    out = arbitrate(says(("Jup", 0.99), ("iter", 1.0)), PLANET, split, budget=Budget(0))
    assert set(out.agrees) == set(range(8))


def test_a_spent_budget_skips_the_call():
    clock = iter([0.0, 100.0, 100.0, 100.0]).__next__
    out = arbitrate(says(("Jup", 0.99), ("iter", 1.0)), PLANET, SPLIT, budget=Budget(30, clock=clock))
    assert out.signal() is None and out.skipped == "skipped: the round's LM budget of 30 s was spent"


def test_the_threshold_is_the_measured_one():
    assert (
        MIN_CONFIDENCE == 0.8
    )  # benchmarks/journal/validity.md, "LM arbitration": no pair of 60 decided wrongly at 0.8


def scripted_lm(own: list[tuple[str, float]]):
    """Short answers: the planet the quoted answer names; the LM's own answer: ``own`` (token, probability)."""
    from lm.untrusted import CLOSE, OPEN

    def answer(messages, **kw):
        text = user_text(messages)
        if OPEN in text:
            body = text[text.index(OPEN) : text.index(CLOSE)]
            return "Jupiter" if "Jupiter" in body else "Saturn"
        return logprob_completion(*[[(t, math.log(p)), ("x", math.log(max(1e-6, 1 - p)))] for t, p in own])

    return FakeChatClient(answer)


def planet_round(embedder, client, **consensus):
    import numpy as np

    from consensus.embedder import Embeddings
    from lm.config import LMConfig
    from tests.helpers import PLANETS, block_vectors, planets_round
    from validator.round.stages import LMHandle, run_stages
    from validator.settings import load_settings

    env = {
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_LM__NARRATIVE": "false",
        "VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE": "false",
    }  # the block vectors address no prompt
    env |= {f"VALIDATOR_CONSENSUS__{k.upper()}": v for k, v in consensus.items()}
    settings = load_settings(None, env=env, dotenv_path=None)
    counts = np.array([len(t.split()) for t in PLANETS], dtype=np.int32)
    emb = Embeddings(block_vectors([8], dim=384, spread=0.4), np.ones(8, dtype=np.int32), counts, counts)
    rnd = planets_round(PLANET)
    return settings, run_stages(rnd, embedder, settings, lm=LMHandle(client, LMConfig()), embeddings=emb)


def test_in_the_round_a_wrong_majority_earns_less_than_the_honest_minority(embedder):
    from validator.records.evaluation_record import SCHEMA, RoundRecord
    from validator.round.evaluate import build_record

    client = scripted_lm([("Jup", 0.99), ("iter", 1.0)])
    settings, out = planet_round(embedder, client)
    # the LM's own answer needs only the prompt: asked first, before the 8 short answers (a loaded server
    # reaches it within the round's budget); 9 calls in all
    assert user_text(client.calls[0]["messages"]) == own_answer_prompt(PLANET) and len(client.calls) == 9
    amounts = out.allocation.amounts
    assert set(out.evaluation.members) == {0, 1, 2}
    assert sum(amounts[3:]) == 0 < min(amounts[:3])
    assert all("the LM arbitrated" in out.evaluation.results[i].detail for i in range(3, 8))
    record = build_record(out, settings, embedder)
    assert record.arbitration.answer == "Jupiter" and record.arbitration.agrees == (0, 1, 2)
    assert record.arbitration.disagrees == (3, 4, 5, 6, 7) and record.arbitration.confidence == pytest.approx(0.99)
    assert (
        record.arbitration.question == PLANET and record.arbitration.skipped is None and record.arbitration.groups == 2
    )
    assert record.arbitration.from_text == ()  # every member had its short answer (no budget)
    stored = record.to_json()
    assert stored["schema"] == SCHEMA == "consensus-validator/evaluation/1.7"
    assert RoundRecord.from_json(stored) == record


def test_in_the_round_an_abstention_changes_nothing(embedder):
    _, unsure = planet_round(embedder, scripted_lm([("Jup", 0.6), ("iter", 1.0)]))
    _, off = planet_round(embedder, scripted_lm([("Jup", 0.99), ("iter", 1.0)]), checks__factual_arbitration="false")
    assert unsure.evaluation.members == off.evaluation.members == tuple(range(8))
    assert list(unsure.allocation.amounts) == list(off.allocation.amounts)
    assert unsure.arbitration.skipped.startswith("abstained: the LM is not confident")
    assert off.arbitration is None  # off: not asked, no record section


def test_asked_ahead_and_the_members_agree_the_answer_is_recorded_and_changes_nothing(embedder):
    agreed = checks({0: "Jupiter", 1: "Jupiter", 2: "Jupiter, the gas giant"})
    asked = Asked(says(("Jup", 0.99), ("iter", 1.0)), PLANET)
    asked.future.result(timeout=5)
    out = arbitrate(None, PLANET, agreed, budget=Budget(0), asked=asked)
    assert out.skipped == AGREED and out.answer == "Jupiter" and out.signal() is None

    def slow(messages, **kw):
        time.sleep(0.5)
        return logprob_completion([("Jup", math.log(0.99))])

    late = Asked(FakeChatClient(slow), PLANET)
    out = arbitrate(None, PLANET, SPLIT, budget=Budget(0.05), asked=late)
    assert out.signal() is None and out.skipped == "skipped: the round's LM budget of 0.05 s was spent"


def test_members_the_factual_check_did_not_reach_are_read_from_their_text():
    """The budget ended the factual check after 5 of 8 members; once the LM has decided, the other 3 are read from
    their text: one states a losing short answer (leaves), one the LM's (stays), one both (no verdict)."""

    reached = checks({0: "Jupiter", 1: "Jupiter", 2: "Saturn", 3: "Saturn", 4: "Saturn"})
    budget = "skipped: the round's LM budget of 30 s was spent"
    unreached = tuple(FactualCheck(i, (), None, None, budget) for i in (5, 6, 7))
    texts = {
        5: "It's Saturn. With its rings included, no other planet comes close in size.",
        6: "Jupiter, more than twice as massive as all the other planets combined.",
        7: "Jupiter is bigger than Saturn.",
    }
    out = arbitration_verdict(
        PLANET, reached + unreached, OwnAnswer("Jupiter", 0.99), PromptKind.of(PLANET), texts=texts
    )
    assert out.agrees == {0: True, 1: True, 2: False, 3: False, 4: False, 5: False, 6: True}
    assert out.from_text == (5, 6)
    # a member whose short answer was not stated in its text is not read again (the lone rule has it)
    unstated = (FactualCheck(8, (), None, None, "not stated: ...", "Saturn", False),)
    assert (
        8
        not in arbitration_verdict(
            PLANET, reached + unstated, OwnAnswer("Jupiter", 0.99), PromptKind.of(PLANET), texts={8: "Saturn."}
        ).agrees
    )
    # numbers arbitration_verdict when the answers have them: "degrees" in both is no statement of -15.8
    boiling = "What is the boiling point of water at sea level in Celsius?"
    said = checks({0: "100", 1: "-15.8 degrees Fahrenheit"}, boiling)
    late = (FactualCheck(2, (), None, None, budget), FactualCheck(3, (), None, None, budget))
    out = arbitration_verdict(
        boiling,
        said + late,
        OwnAnswer("100", 0.96),
        PromptKind.of(boiling),
        texts={2: "It is approximately 100 degrees Celsius.", 3: "About -15.8 degrees, I believe."},
    )
    assert out.agrees == {0: True, 1: False, 2: True, 3: False} and out.from_text == (2, 3)
    # no decision, nothing read
    assert (
        arbitration_verdict(
            PLANET, reached + unreached, OwnAnswer("Jupiter", 0.5), PromptKind.of(PLANET), texts=texts
        ).agrees
        == {}
    )


# the real embedded LM on a few right/wrong pairs of examples/arbitration/pairs.jsonl (docs/validity.md,
# "LM arbitration"): five members give the wrong answer, three the right one
REAL_PAIRS = [
    ("What is the capital of Australia?", "Canberra", "Sydney"),
    ("Which is the largest planet in the Solar System?", "Jupiter", "Saturn"),
    (
        "What is the boiling point of water at sea level in Celsius?",
        "approximately 100 degrees Celsius",
        "-15.8 degrees Fahrenheit",
    ),
    ("What is the square root of 144?", "12", "14"),
    ("What is the hardest natural substance?", "Diamond", "Quartz"),
]  # the LM is unsure (0.34): abstains


@pytest.mark.slow
def test_the_real_lm_sides_with_the_right_minority_or_abstains(local_lm):
    from lm.client import OpenAIChatClient

    client = OpenAIChatClient(local_lm.endpoint)
    decided = 0
    for prompt, right, wrong in REAL_PAIRS:
        split = checks({**{i: right for i in range(3)}, **{i: wrong for i in range(3, 8)}}, prompt)
        out = arbitrate(client, prompt, split, budget=Budget(0))
        if out.signal() is None:
            assert out.skipped.startswith("abstained"), (prompt, out)
            continue
        decided += 1
        assert out.agrees == {i: i < 3 for i in range(8)}, (prompt, out.answer, out.confidence)
    assert decided >= 4
    # a prompt with several right answers never reaches the LM
    assert arbitrate(client, "How do I reverse a list in Python?", SPLIT, budget=Budget(0)).skipped == NOT_ONE_ANSWER
