"""The LM's questions about a round asked in one pass (lm.evidence.ask_round), with a scripted fake LM: it asks,
it decides nothing (the verdicts are read afterwards by the pure rules)."""

from __future__ import annotations

import math

import numpy as np

from consensus.arbitration import arbitration_verdict, needed
from consensus.types import Response, Round
from lm.config import LMConfig
from lm.evidence import Questions, ask_round
from lm.fake import FakeChatClient, logprob_completion, user_text
from lm.round_budget import Budget, PromptKind

PLANET = "Which is the largest planet in the Solar System?"


def planet_lm(messages, **params):
    """Each member's short answer is the planet its text names; the LM's own answer is Jupiter (confidence 0.99)."""
    text = user_text(messages)
    if "respondent" not in text:  # the LM's own answer: the prompt only, no miner text
        return logprob_completion([("Jupiter", math.log(0.99))])
    answer = text.split("Short answer:")[0]
    return "Saturn" if "Saturn" in answer.split(PLANET)[-1] else "Jupiter"


def planet_round(*names: str) -> Round:
    return Round(
        "r",
        PLANET,
        tuple(Response(f"m{i}", f"The largest planet is {n}.", 1.0) for i, n in enumerate(names)),
    )


def questions(round_: Round, members: tuple[int, ...]) -> Questions:
    return Questions(
        seen=tuple(r.text for r in round_.responses),
        members=members,
        answered=members,
        workers=1,
        polarity=False,
        derived=False,
        judge=None,
        factual=True,
        arbitrating=True,
        reference_short=False,
    )


def test_one_pass_asks_every_question_and_decides_nothing():
    round_ = planet_round("Jupiter", "Jupiter", "Saturn")
    client = FakeChatClient(planet_lm)
    sim = np.eye(3)
    out = ask_round(client, LMConfig(), round_, sim, questions(round_, (0, 1, 2)), Budget(0))
    # three short answers and the LM's own answer, asked ahead: four calls, no more
    assert len(client.calls) == 4
    assert [c.answer for c in out.factual or ()] == ["Jupiter", "Jupiter", "Saturn"]
    assert out.arbitration is not None and out.arbitration.waited and out.arbitration.own is not None
    assert out.arbitration.own.text == "Jupiter" and out.polarity is None and out.judged is None
    # the verdict is read from the answers by the pure rule, with no further call
    kind = PromptKind.of(PLANET)
    assert needed(PLANET, out.factual or (), kind).skipped is None
    verdict = arbitration_verdict(PLANET, out.factual or (), out.arbitration.own, kind)
    assert dict(verdict.agrees) == {0: True, 1: True, 2: False} and len(client.calls) == 4


def test_agreeing_short_answers_do_not_wait_for_the_lms_own_answer():
    round_ = planet_round("Jupiter", "Jupiter", "Jupiter")
    out = ask_round(FakeChatClient(planet_lm), LMConfig(), round_, np.eye(3), questions(round_, (0, 1, 2)), Budget(0))
    assert out.arbitration is not None and not out.arbitration.waited
    assert set(out.timings) == {"polarity", "factual", "arbitration"}


def test_nothing_is_asked_of_a_lone_member():
    client = FakeChatClient(planet_lm)
    lone = planet_round("Jupiter")
    out = ask_round(client, LMConfig(), lone, np.eye(1), questions(lone, (0,)), Budget(0))
    assert out.factual is None and out.arbitration is None and client.calls == []
