"""The numbers of `validator lm eval` on tiny labeled sets with known answers."""

import json
import math

import pytest

from lm import score_eval
from lm.score_eval import Scored


def test_auroc_hand_computed():
    # yes values 9, 6; no values 6, 1: pairs (9>6, 9>1, 6=6 half, 6>1) = 3.5 / 4
    assert score_eval.auroc([9, 6, 6, 1], [True, True, False, False]) == pytest.approx(0.875)
    assert score_eval.auroc([1, 2], [False, True]) == 1.0
    assert math.isnan(score_eval.auroc([1, 2], [True, True]))


def test_accuracy_counts_five_as_wrong():
    assert score_eval.accuracy([7, 5, 3, 5], [True, True, False, False]) == 0.5


def test_calibration_error_hand_computed():
    # bin [0.8, 0.9): predicted 0.8 twice, observed 1/2 -> |0.8-0.5| = 0.3, weight 2/4
    # bin [0.2, 0.3): predicted 0.2 twice, observed 0 -> 0.2, weight 2/4
    assert score_eval.calibration_error([8, 8, 2, 2], [True, False, False, False]) == pytest.approx(0.25)
    assert score_eval.calibration_error([10, 0], [True, False]) == 0.0


def test_bootstrap_interval_brackets_the_estimate_and_is_seeded():
    values = [9, 8, 7, 6, 4, 6, 3, 2, 1, 5] * 3
    labels = [True] * 5 + [False] * 5
    labels = labels * 3
    lo, hi = score_eval.bootstrap_auroc(values, labels, seed=1)
    point = score_eval.auroc(values, labels)
    assert lo <= point <= hi and hi - lo > 0
    assert (lo, hi) == score_eval.bootstrap_auroc(values, labels, seed=1)


def test_summary_of_a_tiny_set():
    scored = [
        Scored("a", True, 9, 9.0, False, 1.0),
        Scored("b", True, 5, 5.0, True, 3.0),
        Scored("c", False, 5, 5.0, True, 2.0),
        Scored("d", False, 2, 2.0, False, 2.0),
    ]
    rep = score_eval.summarise("m", "sampled", scored)
    assert rep.accuracy == 0.5 and rep.auroc == pytest.approx(0.875)
    assert rep.fallback_share == 0.5 and rep.stuck_share == 0.5 and rep.stuck_value == 5
    assert rep.seconds_median == 2.0 and rep.seconds_mean == 2.0


def test_rescoring_changes_only_items_with_log_odds():
    scored = [Scored("a", True, 7, 7.0, False, 1.0, 1.0), Scored("b", False, 5, 5.0, True, 1.0, None)]
    out = score_eval.rescored(scored, lambda z: (10, 10.0))
    assert out[0].score == 10 and out[1] == scored[1]


def test_read_items_names_the_bad_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"content": ["x"], "question": "q?", "answer": true}\n\n'
        '{"content": ["x"], "question": "q?", "answer": "yes"}\n'
    )
    with pytest.raises(score_eval.EvalDataError, match=r"d.jsonl:3: 'answer' must be true or false"):
        score_eval.read_items(path)
    path.write_text('{"content": "one string", "question": "q?", "answer": false, "id": 7}\n')
    (item,) = score_eval.read_items(path)
    assert item.content == ("one string",) and item.id == "7" and item.answer is False
    path.write_text("")
    with pytest.raises(score_eval.EvalDataError, match="no items"):
        score_eval.read_items(path)


def test_report_files(tmp_path):
    scored = [Scored("a", True, 9, 9.0, False, 1.0), Scored("b", False, 2, 2.0, False, 1.0)]
    rep = score_eval.summarise("m", "yesno", scored)
    out = score_eval.write_report(tmp_path / "r", [rep])
    data = json.loads((out / "report.json").read_text())
    assert data["modes"][0]["auroc"] == 1.0 and len(data["items"]["m yesno"]) == 2
    assert (out / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| m | yesno | 2 |" in (out / "report.md").read_text()


def test_eval_cli_against_a_scripted_server(tmp_path, monkeypatch, capsys):
    from tests.lm.fake_server import FakeOpenAI
    from validator.cli.main import main

    data = tmp_path / "d.jsonl"
    data.write_text(
        "\n".join(json.dumps({"content": [f"c{i}"], "question": "q?", "answer": i % 2 == 0}) for i in range(4)) + "\n"
    )
    yes, no = [["Yes", math.log(0.9)], ["No", math.log(0.1)]], [["No", math.log(0.9)], ["Yes", math.log(0.1)]]
    script = [{"text": "Yes", "top": yes}, {"text": "No", "top": no}] * 2
    with FakeOpenAI(script) as server:
        monkeypatch.setenv("SERVER_URL", server.url)
        monkeypatch.setenv("MODEL", "fake")
        code = main(["lm", "eval", str(data), "--modes", "yesno", "--out", str(tmp_path / "rep")])
    assert code == 0
    rows = json.loads((tmp_path / "rep" / "report.json").read_text())["modes"]
    assert [r["mode"] for r in rows] == ["yesno", "yesno-uncalibrated"]
    assert rows[0]["auroc"] == 1.0 and rows[0]["accuracy"] == 1.0 and rows[0]["n"] == 4
    assert "| fake | yesno | 4 |" in capsys.readouterr().out


def test_eval_cli_rejects_unknown_mode(tmp_path, capsys):
    from validator.cli.main import main

    assert main(["lm", "eval", str(tmp_path / "x.jsonl"), "--modes", "vibes"]) == 2
    assert "unknown mode" in capsys.readouterr().err
