"""A round with a reference answer: the judge's verdicts enter the composite; SelectIT as confidence."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from consensus.score import with_reference
from consensus.types import Response, Round, ScoreParts
from lm.config import LMConfig
from lm.fake import FakeChatClient, logprob_completion
from validator.round.evaluate import build_record
from validator.round.stages import LMHandle, run_stages
from validator.settings import load_settings

ANSWERS = (
    "Canberra is the capital city of Australia.",
    "The capital of Australia is Canberra, not Sydney.",
    "Australia's capital is Canberra, in the Australian Capital Territory.",
    "The capital of Australia is Sydney, its largest city.",
)


def judged(messages, *, top_logprobs=0, **_):
    """Grades an answer 5 when it says Canberra, 1 otherwise, and rates SelectIT prompts."""
    text = messages[-1]["content"]
    if top_logprobs:  # SelectIT: a rating distribution at the answer position
        return logprob_completion([("4", math.log(0.7)), ("5", math.log(0.3))])
    answer = text.rsplit("<<<ANSWER", 1)[1].split("ANSWER>>>", 1)[0]  # the last marker pair fences it
    quality = 5 if "Canberra" in answer else 1
    return json.dumps({"reasoning": "compared with the reference", "answer_quality": quality})


def ScriptedJudge() -> FakeChatClient:
    return FakeChatClient(judged, name="scripted", model="scripted")


def settings(**lm):
    env = {f"VALIDATOR_LM__{k.upper()}": str(v).lower() for k, v in lm.items()}
    env.update(
        {"VALIDATOR_LM__POLARITY": "false", "VALIDATOR_LM__NARRATIVE": "false", "VALIDATOR_LM__FACTUAL": "false"}
    )
    return load_settings(None, env=env, dotenv_path=None)


def make_round(reference="Canberra."):
    return Round(
        "r",
        "What is the capital of Australia?",
        tuple(Response(f"m{i}", t, 1.0 + i / 10) for i, t in enumerate(ANSWERS)),
        reference,
    )


def test_reference_verdicts_move_the_composite(embedder):
    client = ScriptedJudge()
    s = settings()
    # the consensus composite before any reference signal: without the judge, the reference's embedding
    # similarity would be blended in instead (consensus.weights.weight_reference_similarity)
    unblended = load_settings(
        None, env={"VALIDATOR_CONSENSUS__WEIGHTS__WEIGHT_REFERENCE_SIMILARITY": "0"}, dotenv_path=None
    )
    plain = run_stages(make_round(), embedder, unblended)
    judged = run_stages(make_round(), embedder, s, lm=LMHandle(client, LMConfig()))
    assert len(client.calls) == 4 and [j.quality for j in judged.reference_checks] == [5, 5, 5, 1]
    w = s.consensus.weights.weight_reference
    for before, after, check in zip(plain.evaluation.results, judged.evaluation.results, judged.reference_checks):
        expected = with_reference(before.score, check.score, w).composite
        assert after.score.composite == pytest.approx(expected) and after.score.reference == check.score
    sydney = judged.evaluation.results[3].score
    assert sydney.composite < plain.evaluation.results[3].score.composite  # the wrong answer loses
    record = build_record(judged, s, embedder).to_json()
    assert record["reference_checks"][3] == {"index": 3, "quality": 1, "score": 0.0, "error": None}
    assert record["responses"][0]["score"]["reference"] == 1.0


def test_no_reference_no_judging(embedder):
    client = ScriptedJudge()
    outcome = run_stages(make_round(reference=None), embedder, settings(), lm=LMHandle(client, LMConfig()))
    assert client.calls == [] and outcome.reference_checks == ()
    assert all(r.score.reference is None for r in outcome.evaluation.results)


def test_judging_can_be_switched_off(embedder):
    client = ScriptedJudge()
    run_stages(make_round(), embedder, settings(reference_judging=False), lm=LMHandle(client, LMConfig()))
    assert client.calls == []


def test_a_miner_without_a_confidence_gets_none_and_the_lm_is_not_asked_for_one(embedder):
    """SelectIT's confidence for such miners (lm.selectit_confidence) was retired in session 19 (issue 34)."""
    client = ScriptedJudge()
    rnd = make_round(reference=None)
    rnd = dataclasses.replace(
        rnd, responses=(dataclasses.replace(rnd.responses[0], confidence=0.9),) + rnd.responses[1:]
    )
    s = settings()
    outcome = run_stages(rnd, embedder, s, lm=LMHandle(client, LMConfig()))
    assert client.calls == []
    record = build_record(outcome, s, embedder).to_json()
    assert record["responses"][0]["confidence"] == 0.9 and record["responses"][0]["confidence_source"] == "miner"
    assert record["responses"][1]["confidence"] is None and record["responses"][1]["confidence_source"] is None


def test_with_reference_formula():
    parts = ScoreParts(0.8, 1.0, 0.75, 0.0, 0.5, (0.5, 0.2, 0.2, 0.1), 40.0)
    blended = with_reference(parts, 1.0, 0.3)
    # 0.7 * 40 + 0.3 * 100 * 1.0 * (1 - 0.5)
    assert blended.composite == pytest.approx(43.0) and blended.reference == 1.0
    assert with_reference(parts, 0.0, 0.0).composite == 40.0
