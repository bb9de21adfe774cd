"""benchmarks.task_network: the recorded task ladder on the network, its task source and its adversaries."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks import data, network, task_network
from benchmarks.recorded_network import RecordedPersona
from consensus.fake import FakeEmbedder
from tasks.source import TaskSpec, generate
from tasks.verify import verify
from tests.benchmarks.test_network import SHARED, last_json, small_set
from validator.settings import load_settings

FAMILIES = ("basic_arithmetic", "chain_sum")


def record_ladder(directory: Path, per_family: int = 6, draws: tuple[str, ...] = ("accuracy",)) -> None:
    """Three rungs: ``good`` right on every task, ``half`` on seeds 1, 2, 5, 6..., ``bad`` never right."""
    directory.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict]] = {"good": [], "half": [], "bad": []}
    for draw in draws:
        for family in FAMILIES:
            for k in range(per_family):
                seed = 1000 * (draw == "network") + k
                task = generate(TaskSpec(family, seed))
                texts = {"good": f"Answer: {task.answer}", "bad": "Answer: -987654321"}
                texts["half"] = texts["good"] if k % 4 in (1, 2) else texts["bad"]
                for rung, text in texts.items():
                    rows[rung].append({"draw": draw, "family": family, "seed": seed, "config": {}, "text": text})
    for rung, lines in rows.items():
        (directory / f"{rung}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")


def test_a_thin_network_draw_splits_the_accuracy_draw(tmp_path):
    record_ladder(tmp_path)
    ladder = task_network.load_ladder(tmp_path, min_network=30)
    assert ladder.draw == "accuracy-split" and len(ladder.tasks) == 6 and ladder.accuracy_tasks == 6
    assert ladder.rungs == ("good", "half", "bad")
    assert ladder.accuracy["good"] == 1.0 and ladder.accuracy["bad"] == 0.0
    assert {t.spec.family for t in ladder.tasks} == set(FAMILIES)
    only = task_network.load_ladder(tmp_path, min_network=30, families=("chain_sum",))
    assert {t.spec.family for t in only.tasks} == {"chain_sum"} and len(only.tasks) == 3 and only.accuracy_tasks == 3
    # an earlier task set's answers beside the current set's: ``configs`` keeps the current ones only
    assert task_network.load_ladder(tmp_path, min_network=30, configs={"chain_sum": {}}).tasks == only.tasks
    with pytest.raises(SystemExit, match="no recorded task answers"):
        task_network.load_ladder(tmp_path, min_network=30, configs={"chain_sum": {"max_terms": 3}})


def test_the_network_draw_is_asked_when_recorded_and_a_thin_rung_is_left_out(tmp_path):
    record_ladder(tmp_path, draws=("accuracy", "network"))
    (tmp_path / "new.jsonl").write_text(
        json.dumps({"draw": "accuracy", "family": "gcd", "seed": 1, "config": {}, "text": "Answer: 1"}) + "\n"
    )
    ladder = task_network.load_ladder(tmp_path, min_network=10)
    assert ladder.draw == "network" and len(ladder.tasks) == 12 and ladder.left_out == ("new",)
    assert all(t.spec.seed >= 1000 for t in ladder.tasks)


def test_the_adversaries_answers(tmp_path):
    record_ladder(tmp_path)
    ladder = task_network.load_ladder(tmp_path)
    for task in ladder.tasks:
        assert not verify(task, ladder.wrong[task.prompt]).right
        # the cache miner's answer is the best rung's answer to another task of the family, never this one's
        cached = ladder.cached[task.prompt]
        others = [o for o in ladder.tasks if o.spec.family == task.spec.family and o is not task]
        assert cached in {ladder.texts[o.prompt]["good"] for o in others}
        assert cached != ladder.texts[task.prompt]["good"]
        # the guess miner's answer is the family's most common one, the same for every task of the family
        assert (
            ladder.guessed[task.prompt]
            == ladder.guessed[next(o for o in ladder.tasks if o.spec.family == task.spec.family).prompt]
        )
    people = [
        RecordedPersona("h0", "honest", "m0", rung="good"),
        RecordedPersona("c", "cache", "m0"),
        RecordedPersona("w0", "wrong", "m1", operator="wrong"),
        RecordedPersona("w1", "wrong", "m1", operator="wrong"),
        RecordedPersona("k0", "weak", "m1", operator="weak", rung="bad"),
        RecordedPersona("cp", "copycat", "m0", partner="h0"),
    ]
    net = task_network.TaskNetwork({}, people, ladder)
    task = ladder.tasks[0]
    responses, _ = net.answer(task.prompt)
    text = {r.miner: r.text for r in responses}
    assert verify(task, text["h0"]).right and verify(task, text["cp"]).right
    assert text["w0"] != text["w1"] and not verify(task, text["w1"]).right  # variants of one wrong answer
    assert verify(task, text["w1"]).answer == verify(task, text["w0"]).answer
    assert not verify(task, text["k0"]).right and not verify(task, text["c"]).right
    assert net.produced == {"wrong": 1, "weak": 1}


def test_the_lab_source_hands_recorded_tasks_in_a_secret_order(tmp_path):
    record_ladder(tmp_path)
    ladder = task_network.load_ladder(tmp_path)
    settings = load_settings(None, env={}, dotenv_path=None).tasks
    a = task_network.LabTaskSource(settings, b"a" * 32, ladder.tasks, 0.5)
    b = task_network.LabTaskSource(settings, b"b" * 32, ladder.tasks, 0.5)
    drawn = [a.task_for(s) for s in range(6)]
    assert {t.prompt for t in drawn} == {t.prompt for t in ladder.tasks}  # every recorded task once per pass
    assert [t.prompt for t in drawn] != [b.task_for(s).prompt for s in range(6)]
    assert a.task_for(6) == drawn[0]
    assert 0 < sum(a.is_task_round(s) for s in range(200)) < 200


def test_the_network_runs_task_rounds_with_the_adversaries(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    record_ladder(tmp_path / "tasks")
    rounds, truth = small_set(tmp_path)  # 12 models
    argv = [str(rounds), str(truth), "--miners", "40", "--ticks", "4", "--committee-size", "10", "--out", str(tmp_path)]
    argv += ["--tasks", "0.5", "--task-dir", str(tmp_path / "tasks"), "--cache-miners", "2"]
    argv += ["--wrong-majority", "0.3", "--sybils", "0", "--draw-ticks", "20", "--guess-miners", "1"]
    assert network.main(argv) == 0
    out = last_json(capsys)
    assert out["task_draw"] == "accuracy-split" and out["task_rungs"] == ["good", "half", "bad"]
    for mode in (out, out["one_round"]):
        assert mode["task_rounds"] > 0 and mode["free_rounds"] > 0
        assert mode["wrong_task_units"] == 0 and mode["cache_per_task_round"] == 0.0
        assert mode["rung_task_units_per_round"]["good"] > mode["rung_task_units_per_round"]["bad"] == 0
        # the copycats copy the best rung's short right answers: agreement, not copies (below copy_min_words)
        assert "copy" not in mode["copycat_task_reasons"]
    assert out["one_round"]["guess_per_task_round"] is not None
    assert out["one_round"]["copycat_task_units_vs_partner"] > 0.9  # paid as its partner, less its later arrival


@pytest.mark.slow
def test_the_recorded_ladder_on_the_development_set_with_real_embeddings(tmp_path, capsys):
    """The shipped recordings (benchmarks/results/tasks) on four of the development set's prompts, real MiniLM."""
    if not (SHARED / "rounds.jsonl.gz").is_file():
        pytest.skip("the validity set is not beside the checkout")
    rows = [json.loads(line) for line in gzip.open(SHARED / "rounds.jsonl.gz", "rt", encoding="utf-8")][:4]
    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = [str(rounds), str(SHARED / "truth.json"), "--miners", "60", "--ticks", "4", "--committee-size", "16"]
    argv += ["--tasks", "0.5", "--cache-miners", "2", "--wrong-majority", "0.3", "--sybils", "0"]
    assert network.main([*argv, "--draw-ticks", "10", "--out", str(tmp_path)]) == 0
    out = last_json(capsys)
    for mode in (out, out["one_round"]):
        assert mode["task_rounds"] > 0 and mode["wrong_task_units"] == 0
        assert set(mode["rung_mean_weight"]) == set(out["task_rungs"])
    assert out["task_draw"] in ("network", "accuracy-split") and len(out["task_rungs"]) >= 2
