"""LM_SCORE's yesno mode: probability extraction, calibration fit and lookup, the scored result."""

import json
import logging
import math

import pytest

from lm import yesno
from lm.client import OpenAIChatClient
from lm.config import Endpoint, LMConfig, Secret
from lm.lm_score import FALLBACK, lm_score_detailed
from tests.lm.fake_server import FakeOpenAI

L = math.log


def test_surface_forms_of_yes_and_no_are_summed():
    top = [
        ("Yes", L(0.5)),
        (" yes", L(0.1)),
        ("YES", L(0.05)),
        ("yes.", L(0.05)),
        ("No", L(0.2)),
        (" no", L(0.05)),
        ("Maybe", L(0.05)),
    ]
    p = yesno.yes_no_probabilities(top)
    assert p.p_yes == pytest.approx(0.7) and p.p_no == pytest.approx(0.25)
    assert p.estimated is None and p.log_odds == pytest.approx(L(0.7 / 0.25))


def test_words_that_merely_start_with_yes_or_no_do_not_count():
    p = yesno.yes_no_probabilities([("Yes", L(0.6)), ("Not", L(0.2)), ("None", L(0.1)), ("No", L(0.1))])
    assert p.p_no == pytest.approx(0.1)


def test_missing_no_is_bounded_by_the_least_listed_and_the_unlisted_mass():
    # listed mass 0.96: the unlisted 0.04 is the tighter bound than the smallest listed 0.06
    p = yesno.yes_no_probabilities([("Yes", L(0.9)), ("Sure", L(0.06))])
    assert p.estimated == "no" and p.p_no == pytest.approx(0.04)
    # listed mass 0.93: the smallest listed 0.01 is tighter than the unlisted 0.07
    p = yesno.yes_no_probabilities([("No", L(0.9)), ("I", L(0.02)), ("The", L(0.01))])
    assert p.estimated == "yes" and p.p_yes == pytest.approx(0.01)
    assert p.log_odds == pytest.approx(L(0.01 / 0.9))


def test_neither_yes_nor_no_raises():
    with pytest.raises(yesno.NotYesNo):
        yesno.yes_no_probabilities([("The", L(0.7)), ("Based", L(0.28)), ("Yes", L(0.01))])


def test_log_odds_are_clipped():
    p = yesno.yes_no_probabilities([("Yes", 0.0)])  # everything on yes: "no" gets the floor 1e-13
    assert p.log_odds == pytest.approx(L(1e13))
    assert yesno.YesNo(1.0, 1e-20, 1.0, None).log_odds == yesno.Z_LIMIT
    assert yesno.YesNo(0.0, 1.0, 1.0, None).log_odds == -yesno.Z_LIMIT


def test_fit_recovers_hand_computed_parameters():
    # at z=-1 one yes in four, at z=+1 three in four: the MLE is sigmoid(a*z+b) with a = ln 3, b = 0
    z = [-1.0] * 4 + [1.0] * 4
    y = [True, False, False, False, True, True, True, False]
    fit = yesno.fit_calibration(z, y, "m")
    assert fit.a == pytest.approx(math.log(3), abs=0.02) and fit.b == pytest.approx(0.0, abs=1e-6)
    assert fit.probability(1.0) == pytest.approx(0.75, abs=0.005) and fit.n == 8 and fit.fitted


def test_fit_needs_both_labels():
    with pytest.raises(ValueError, match="both"):
        yesno.fit_calibration([1.0, 2.0], [True, True], "m")


def test_score_is_ten_p_rounded_half_up():
    identity = yesno.Calibration(model="m")
    assert identity.score(0.0) == (5, 5.0)
    assert identity.score(L(0.7 / 0.3))[0] == 7
    assert identity.score(-40.0)[0] == 0 and identity.score(40.0)[0] == 10
    shifted = yesno.Calibration(model="m", a=0.5, b=-1.0)
    assert shifted.probability(2.0) == pytest.approx(0.5)


def test_user_calibrations_override_the_shipped_ones(tmp_path, caplog):
    path = tmp_path / "cal.json"
    yesno.save_calibration(path, yesno.Calibration(model="m", a=2.0, b=0.5, n=10))
    yesno.save_calibration(path, yesno.Calibration(model="m", a=3.0, b=0.5, n=12))  # replaces
    assert len(json.loads(path.read_text())) == 1
    builtin = {("m", yesno.PROMPT_ID): yesno.Calibration(model="m", a=9.0, n=5)}
    assert yesno.calibration_for("m", path, builtin).a == 3.0
    assert yesno.calibration_for("m", None, builtin).a == 9.0
    with caplog.at_level(logging.WARNING):
        cal = yesno.calibration_for("unknown-model-xyz", None, builtin)
        yesno.calibration_for("unknown-model-xyz", None, builtin)
    assert not cal.fitted and (cal.a, cal.b) == (1.0, 0.0)
    assert sum("unknown-model-xyz" in r.message for r in caplog.records) == 1


def test_a_calibration_for_another_prompt_is_not_used():
    builtin = {("m", "otherprompt1"): yesno.Calibration(model="m", prompt="otherprompt1", a=9.0, n=5)}
    assert not yesno.calibration_for("m", None, builtin).fitted


def test_malformed_calibrations_file_names_the_entry(tmp_path):
    path = tmp_path / "cal.json"
    path.write_text(json.dumps([{"model": "m", "a": 1.0}, {"model": "m", "colour": "red"}]))
    with pytest.raises(ValueError, match="entry 1"):
        yesno.load_calibrations(path)


def test_shipped_calibrations_cover_the_embedded_models():
    from lm.embedded import MODELS

    shipped = yesno.load_calibrations(yesno.BUILTIN_CALIBRATIONS)
    for name in MODELS:
        cal = shipped[(name, yesno.PROMPT_ID)]
        assert cal.fitted and cal.a > 0, name  # more "yes" evidence never lowers the score


def client_for(server):
    return OpenAIChatClient(Endpoint(server.url, Secret("sk-test"), "m"), timeout_s=2.0)


def test_yesno_mode_end_to_end_with_a_calibration(tmp_path):
    path = tmp_path / "cal.json"
    yesno.save_calibration(path, yesno.Calibration(model="m", a=0.5, b=0.0, n=100))
    top = [["Yes", L(0.8)], ["No", L(0.2)]]
    with FakeOpenAI([{"text": "Yes", "top": top}]) as server:
        result = lm_score_detailed(
            client_for(server),
            "The sky is blue.",
            question="Is the sky blue?",
            config=LMConfig(score_mode="yesno", calibration_file=str(path)),
        )
    body = server.requests[0]["body"]
    assert body["messages"][0]["content"] == yesno.yesno_prompt(["The sky is blue."], "Is the sky blue?")
    assert body["top_logprobs"] == 20 and body["temperature"] == 0.0
    # z = ln 4, p = sigmoid(0.5 ln 4) = 2/3
    assert result.log_odds == pytest.approx(L(4.0))
    assert result.expected == pytest.approx(20 / 3) and result.score == 7 and result.mode == "yesno"


def test_yesno_mode_falls_back_when_the_answer_is_not_yes_or_no():
    with FakeOpenAI([{"text": "The", "top": [["The", -0.01]]}]) as server:
        result = lm_score_detailed(client_for(server), "c", question="q?", config=LMConfig(score_mode="yesno"))
    assert result.fallback and result.score == FALLBACK


def test_yesno_mode_samples_the_seed_prompt_without_logprobs():
    # a server that ignores the logprobs request: the seed's sampled mode answers
    with FakeOpenAI(
        [
            {
                "raw": json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "m",
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "8"}}
                        ],
                    }
                ).encode()
            }
        ]
    ) as server:
        result = lm_score_detailed(client_for(server), "c", question="q?", config=LMConfig(score_mode="yesno"))
    assert result.mode == "sampled" and result.score == 8
