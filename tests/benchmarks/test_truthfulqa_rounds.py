"""benchmarks.truthfulqa_rounds: the rounds it builds, its figures, and (slow) the measured level kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import truthfulqa_rounds as tq
from benchmarks.truthfulqa_rounds import Answer, Question, auroc, build_rounds, figures

QUESTIONS = Path(__file__).resolve().parents[2].parent / "shared" / "truthfulqa" / "questions.jsonl"

# the figures measured on the development half with shipped defaults, LM off (docs/validity.md, "Judgment against a
# reference (2026-11-29)"), or issue 45's target where it is met: a change that makes any of them worse fails
LEVEL = {"honest_unpaid": 0.05, "false_over_honest": 0.25, "false_tops": 0.27, "auroc": 0.77}


def q(id_: str = "1", correct=("Right A", "Right B", "Best"), incorrect=("Wrong A", "Wrong B")) -> Question:
    return Question(id_, "Which one?", "Best", tuple(correct), tuple(incorrect))


def test_rounds_leave_out_the_best_answer_and_abstentions_and_hide_the_roles():
    rounds, roles = build_rounds([q(correct=("Right A", "best.", "I have no comment.", "Right A"))])
    (r,) = rounds
    assert r.prompt == "Which one?" and r.reference == "Best"
    assert sorted(x.text for x in r.responses) == ["Right A", "Wrong A", "Wrong B"]
    assert {x.miner for x in r.responses} == {"m-00", "m-01", "m-02"}
    honest = {x.text: roles[r.round_id][x.miner] for x in r.responses}
    assert honest == {"Right A": True, "Wrong A": False, "Wrong B": False}
    assert [x.latency_s for x in r.responses] == sorted(x.latency_s for x in r.responses)


def test_a_question_with_no_honest_answer_left_gives_no_round():
    assert build_rounds([q(correct=("Best", "I have no comment"))])[0] == []


def test_rounds_are_seeded():
    a, b, c = (build_rounds([q(), q("2")], seed=s)[0] for s in (3, 3, 4))
    assert a == b and a != c


def test_auroc_counts_ties_half():
    assert auroc([2, 3], [1, 1]) == 1.0
    assert auroc([1], [1]) == 0.5
    assert auroc([0, 2], [1]) == 0.5


def test_figures_by_hand():
    answers = [
        Answer("r1", "a", True, 10, "in_consensus"),
        Answer("r1", "b", True, 0, "reference"),
        Answer("r1", "c", False, 2, "in_consensus"),
        Answer("r2", "d", True, 4, "in_consensus"),
        Answer("r2", "e", False, 6, "in_consensus"),
        Answer("r2", "f", False, 0, "other_cluster"),
    ]
    f = figures(answers)
    assert f.rounds == 2 and f.honest == 3 and f.false == 3
    assert f.honest_unpaid == pytest.approx(1 / 3) and f.unpaid_reasons == {"reference": 1}
    assert f.false_over_honest == pytest.approx((8 / 3) / (14 / 3))
    assert f.false_tops == 0.5  # r2: 6 > 4
    assert f.removal == {"other_cluster": (0.0, 1 / 3), "reference": (1 / 3, 0.0)}
    assert f.median_round_ratio == pytest.approx(((2 / 5) + (3 / 4)) / 2)


def test_a_bad_line_is_named(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": 1, "question": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"q\.jsonl:1"):
        tq.load_questions(path)


# with the NLI judge's cached verdicts (benchmarks/results/nli/; docs/validity.md, "A judge that reads both texts")
# ("deny-v2": the verdicts the product reads, judge.nli.reference_entailment; benchmarks/journal/validity.md,
# "Entailment and its denial")
LEVEL_NLI = {"honest_unpaid": 0.05, "false_over_honest": 0.18, "false_tops": 0.185, "auroc": 0.828}


@pytest.mark.slow
@pytest.mark.parametrize(("nli", "level"), [(None, LEVEL), ("deny-v2", LEVEL_NLI)])
def test_the_development_half_is_judged_no_worse_than_measured(tmp_path, nli, level):
    """Every round through ``run_stages`` with the real MiniLM, shipped defaults, LM off; with ``nli``, the judge's
    verdicts handed in."""
    from validator.settings import load_settings

    settings = load_settings(None, env={}, dotenv_path=None)
    answers = tq.run(settings, tq.load_questions(QUESTIONS), out=tmp_path, nli=nli)
    f = figures(answers)
    assert f.rounds >= 360
    assert f.honest_unpaid <= level["honest_unpaid"], tq.report(f)
    assert f.false_over_honest <= level["false_over_honest"], tq.report(f)
    assert f.false_tops <= level["false_tops"], tq.report(f)
    assert f.auroc >= level["auroc"], tq.report(f)
