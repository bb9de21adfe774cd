"""benchmarks.network: the daemon over a recorded network, with committees and with everyone in one round."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks import data, network
from consensus.fake import FakeEmbedder

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "validity"


def small_set(tmp_path: Path, models: int = 12, prompts: int = 6) -> tuple[Path, Path]:
    """A validity-format set: ``models`` models answering ``prompts`` prompts, their quality known."""
    rows, lc = [], {}
    for m in range(models):
        lc[f"d{m:02d}"] = 80.0 - 5 * m
    for p in range(prompts):
        responses = [
            {
                "miner": f"d{m:02d}",
                "text": f"Answer {p} of model {m}. Lists in Python are mutable. "
                + "Detail sentence. " * max(1, models - m),
                "latency_s": 1.0,
            }
            for m in range(models)
        ]
        rows.append({"round_id": f"r{p}", "prompt": f"Question {p}: are Python lists mutable?", "responses": responses})
    rounds = tmp_path / "rounds.jsonl.gz"
    with gzip.open(rounds, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"lc_winrate": lc}))
    return rounds, truth


def last_json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_last_line_is_one_json_object_with_both_modes(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    rounds, truth = small_set(tmp_path)  # 12 models
    argv = [str(rounds), str(truth), "--miners", "40", "--ticks", "3", "--committee-size", "10", "--out", str(tmp_path)]
    assert network.main(argv) == 0
    out = last_json(capsys)
    for key in ("spearman_weights", "farm_per_answer", "sybil_majority_committees", "copycat_share"):
        assert key in out and key in out["one_round"]
    assert out["committees_per_tick"] == 4 and out["rounds"] == 12 and out["one_round"]["rounds"] == 3
    assert out["ticks"] == 3 and out["sybil_majority_committees"] == 0
    assert len(list(tmp_path.glob("vectors-*.npz"))) == 1  # the cache a second run starts from (the lab's one)


def test_the_network_mixes_models_farm_sybils_and_copycats():
    truth = {"lc_winrate": {f"d{m}": 50.0 - m for m in range(10)}}
    people = network.network(truth, 30, farm=5, sybils=3, copycats=2, declared=True)
    kinds = [p.kind for p in people]
    assert len(people) == 30 and kinds.count("honest") == 10 and kinds.count("sybil") == 3
    assert kinds.count("copycat") == 2 and kinds.count("farm") == 15  # the measured farm and two more of 5
    assert {p.entity for p in people if p.operator == "farm0"} == {"operator-0"}
    assert {p.model for p in people if p.operator == "farm0"} == {"d5"}  # the median model
    assert {p.model for p in people if p.operator == "farm1"} == {"d0"}
    with pytest.raises(SystemExit, match="too few"):
        network.network(truth, 18, farm=5, sybils=3, copycats=2, declared=False)


def test_a_declared_farm_beside_the_undeclared_one_and_the_links_reported(tmp_path, capsys, monkeypatch):
    truth = {"lc_winrate": {f"d{m}": 50.0 - m for m in range(10)}}
    people = network.network(truth, 40, farm=5, sybils=8, copycats=2, declared=False, declared_farm=5)
    declared = [p for p in people if p.operator == "farmD"]
    assert (
        len(declared) == 5 and {p.entity for p in declared} == {"operator-D"} and {p.model for p in declared} == {"d6"}
    )
    assert {p.entity for p in people if p.operator == "farm0"} == {None}
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    rounds, truth_path = small_set(tmp_path)
    argv = [
        str(rounds),
        str(truth_path),
        "--miners",
        "48",
        "--ticks",
        "3",
        "--committee-size",
        "8",
        "--out",
        str(tmp_path),
    ]
    assert network.main([*argv, "--declared-farm", "5", "--sybils", "0.2", "--no-one-round"]) == 0
    out = last_json(capsys)
    assert out["declared_farm_produced"] > 0 and out["declared_farm_per_answer"] is not None
    assert out["links"] >= 0 and isinstance(out["links_by_kind"], dict) and "sybils_one_entity" in out
    assert out["draw_linked_committees"] == out["draw_committees"]  # the draw again with the final links
    assert all(t == sorted(t) for t in out["majority_ticks"].values())


def test_draw_stats_deals_linked_sybils_apart():
    truth = {"lc_winrate": {f"d{m}": 50.0 - m for m in range(40)}}
    people = network.network(truth, 100, farm=5, sybils=30, copycats=0, declared=False)
    secret = b"x" * 32
    plain = network.draw_stats(people, 10, 300, secret)
    one = {p.hotkey: ("sybils" if p.kind == "sybil" else p.entity) for p in people}
    linked = network.draw_stats(people, 10, 300, secret, one, prefix="draw_linked")
    assert plain["draw_sybil_majority_committees"] > 0  # 30% of the identities, committees of 10: sometimes 6 of 10
    assert linked["draw_linked_sybil_majority_committees"] == 0  # dealt 3 to each committee


@pytest.mark.slow
def test_on_the_development_set_with_real_embeddings(tmp_path, capsys):
    if not (SHARED / "rounds.jsonl.gz").is_file():
        pytest.skip("the validity set is not beside the checkout")
    rows = [json.loads(line) for line in gzip.open(SHARED / "rounds.jsonl.gz", "rt", encoding="utf-8")][:4]
    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = [str(rounds), str(SHARED / "truth.json"), "--miners", "56", "--ticks", "2", "--committee-size", "16"]
    assert network.main([*argv, "--declared-farm", "5", "--out", str(tmp_path)]) == 0
    out = last_json(capsys)
    # 56 // 16 = 3 committees would put two of the declared farm's five identities in one: the tick draws five
    assert out["committees_per_tick"] == 5 and out["sybil_majority_committees"] == 0
    assert out["declared_farm_produced"] == 10  # one entity: five identities, one in each committee, 2 ticks
    assert out["links"] == 0 and out["draw_linked_committees"] == out["draw_committees"]  # too few rounds to link
    assert -1.0 <= out["spearman_weights"] <= 1.0 and out["copycat_share"] is not None


def test_the_same_model_mode_serves_a_few_models_with_several_honest_identities(tmp_path, capsys, monkeypatch):
    truth = {"lc_winrate": {f"d{m}": 50.0 - m for m in range(10)}}
    assert network.popular_models([f"d{m}" for m in range(10)], 3) == ["d0", "d4", "d9"]
    people = network.network(truth, 40, farm=5, sybils=3, copycats=2, declared=False, same_model=3, per_model=4)
    honest = [p for p in people if p.kind == "honest"]
    assert len(people) == 40 and len(honest) == 10 + 3 * 3
    assert {p.model for p in honest if "~" in p.hotkey} == {"d0", "d4", "d9"}
    assert all(p.entity is None and p.operator is None for p in honest)
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    rounds, truth_path = small_set(tmp_path)  # 12 models
    argv = [str(rounds), str(truth_path), "--miners", "40", "--ticks", "3", "--committee-size", "10"]
    argv += ["--same-model", "2", "--per-model", "3", "--no-one-round", "--out", str(tmp_path)]
    assert network.main(argv) == 0
    out = last_json(capsys)
    assert sorted(out["same_model_spread"]) == ["d00", "d11"]
    assert all(len(v) == (3 if m in ("d00", "d11") else 1) for m, v in out["honest_per_answer_by_model"].items())
    assert set(out["same_model_vs_singles_median"]) == {"d00", "d11"}


def test_why_honest_counts_each_shared_identity_s_answers_and_the_store_is_kept(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    rounds, truth_path = small_set(tmp_path)  # 12 models, every answer its model's own text
    argv = [str(rounds), str(truth_path), "--miners", "40", "--ticks", "4", "--committee-size", "10"]
    argv += ["--same-model", "2", "--per-model", "3", "--no-one-round", "--arrival", "random", "--out", str(tmp_path)]
    argv += ["--keep-store", str(tmp_path / "kept")]
    assert network.main(argv) == 0
    out = last_json(capsys)
    why = out["why_honest"]
    assert sorted(why) == ["h000-d00", "h000-d00~1", "h000-d00~2", "h011-d11", "h011-d11~1", "h011-d11~2"]
    for d in why.values():
        assert sum(d["reasons"].values()) == 4  # every honest identity answers once a tick
        assert sum(d["copied_from"].values()) == d["reasons"].get("copy", 0)
        assert set(d["copied_from"]) <= {"same model", "farm", "copycat", "other"}
    # four ticks of four committees, each round's input and record on disk
    assert len(list((tmp_path / "kept" / "committees-10" / "rounds").glob("*/evaluation.json"))) == 16
