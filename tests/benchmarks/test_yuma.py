"""benchmarks.yuma: several validators running the product, their weights through subtensor's epoch."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from benchmarks import data, network_memory, yuma
from benchmarks.yuma_epoch import YumaParams
from consensus.fake import FakeEmbedder
from tests.benchmarks.test_network import SHARED, last_json, small_set


def test_conform_sends_what_the_sdk_sends() -> None:
    row = np.array([0.0, 0.2, 0.6, 0.2])
    assert yuma.conform(row).tolist() == [0, 21845, 65535, 21845]
    assert yuma.conform(np.zeros(3)).tolist() == [0, 0, 0]


def test_the_lazy_validator_sets_the_median_of_the_others() -> None:
    previous = np.array([[65535, 0, 0], [65535, 65535, 0], [0, 65535, 65535]], dtype=float)
    # rows normalised: (1, 0, 0), (0.5, 0.5, 0), (0, 0.5, 0.5) -> median (0.5, 0.5, 0)
    assert yuma.lazy_row(previous).tolist() == [65535, 65535, 0]
    assert yuma.lazy_row(np.zeros((2, 3))).tolist() == [0, 0, 0]  # nothing to copy before the first epoch


def test_weights_apart_is_half_the_l1_distance_mean_over_pairs() -> None:
    assert yuma.total_variation(np.array([[1.0, 1.0], [2.0, 2.0]])) == 0.0
    assert yuma.total_variation(np.array([[1.0, 0.0], [0.0, 3.0]])) == 1.0
    assert yuma.total_variation(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])) == 0.5  # an empty row is no validator


def test_weights_at_the_ledgers_alpha_are_its_emas_normalised() -> None:
    emas = np.array([[0.0, 0.0], [0.02, 0.06], [0.0396, 0.0788]])
    got = yuma.weights_series(emas, 0.02, 0.02)
    assert np.allclose(got, [[0, 0], [0.25, 0.75], [0.0396 / 0.1184, 0.0788 / 0.1184]])


def test_weights_at_another_alpha_fold_the_recovered_shares_again() -> None:
    rng = np.random.default_rng(0)
    shares = rng.random((30, 4))
    ema_a, ema_b = np.zeros(4), np.zeros(4)
    emas_a, emas_b = [], []
    for x in shares:
        ema_a = 0.02 * x + 0.98 * ema_a
        ema_b = 0.1 * x + 0.9 * ema_b
        emas_a.append(ema_a)
        emas_b.append(ema_b / ema_b.sum())
    assert np.allclose(yuma.weights_series(np.array(emas_a), 0.02, 0.1), emas_b)
    assert np.allclose(network_memory.tick_shares(np.array(emas_a), 0.02), shares)


def test_agreeing_validators_keep_full_trust_and_the_lazy_one_copies_from_the_second_epoch() -> None:
    ticks = np.tile(np.array([[0.5, 0.3, 0.2, 0.0]]), (20, 1))
    sim = yuma.simulate({"a": ticks, "b": ticks.copy()}, ["lazy0"], 5, YumaParams())
    assert sim["ticks"] == [5, 10, 15, 20]
    assert np.allclose(sim["vtrust"][:, :2], 1.0)
    assert sim["vtrust"][0, 2] == 0.0 and np.allclose(sim["vtrust"][1:, 2], 1.0)
    assert np.allclose(sim["dividends"][0], [0.5, 0.5, 0.0])  # the lazy one had no weights, so no bonds yet
    assert sim["dividends"][-1, 2] > 0
    assert np.allclose(sim["incentive"][-1], [0.5, 0.3, 0.2, 0.0], atol=1e-4)


def test_a_lazy_validator_with_a_lag_copies_older_weights() -> None:
    early = np.tile(np.array([[1.0, 0.0]]), (10, 1))
    late = np.tile(np.array([[0.0, 1.0]]), (10, 1))
    ticks = np.vstack([early, late])  # the workers move from miner 0 to miner 1 at tick 11
    sim = yuma.simulate({"a": ticks, "b": ticks.copy()}, ["lazy0"], 5, YumaParams(), lag=2)
    assert sim["vtrust"][:2, 2].tolist() == [0.0, 0.0]  # nothing two epochs old yet
    assert sim["vtrust"][2, 2] == 0.0 and sim["vtrust"][3, 2] == 0.0  # still copying miner 0
    assert np.allclose(sim["vtrust"][:, :2], 1.0)


def test_a_validator_that_disagrees_with_the_majority_loses_trust() -> None:
    good = np.tile(np.array([[0.5, 0.5, 0.0]]), (10, 1))
    odd = np.tile(np.array([[0.5, 0.0, 0.5]]), (10, 1))
    sim = yuma.simulate({"a": good, "b": good.copy(), "c": odd}, [], 5, YumaParams())
    assert np.allclose(sim["vtrust"][-1], [1.0, 1.0, 0.5])
    assert sim["dividends"][-1, 2] < sim["dividends"][-1, 0]


def test_the_last_line_is_one_json_object_and_a_second_run_reads_the_ledgers(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    rounds, truth = small_set(tmp_path)  # 12 models
    argv = [str(rounds), str(truth), "--miners", "40", "--ticks", "4", "--epoch-every", "2", "--sizes", "10"]
    argv += ["--committees", "2", "--one-round", "1", "--alphas", "0.02", "0.1", "--out", str(tmp_path)]
    assert yuma.main(argv) == 0
    out = last_json(capsys)
    assert set(out["daemon_seconds"]) == {"c10-0", "c10-1", "one_round0"}
    assert out["ledger_alpha"] == 0.02  # the shipped daemon.moving_average_alpha
    for memory in ("alpha=0.02", "alpha=0.1"):
        scenarios = out["results"][memory]
        assert set(scenarios) == {"committees-10", "mixed-10", "one_round", "lone-10", "lone-one-round-10"}
        assert set(scenarios["lone-10"]["validators"]) == {"c10-0", "one_round0", "lazy0"}
        mixed = scenarios["mixed-10"]
        assert set(mixed["validators"]) == {"c10-0", "c10-1", "one_round0", "lazy0"}
        assert mixed["epochs"] == 2 and mixed["epoch_ticks"] == [2, 4]
        for v in mixed["validators"].values():
            assert 0.0 <= v["vtrust"] <= 1.0 + 1e-9 and len(v["vtrust_by_epoch"]) == 2
        assert sum(v["dividends"] for v in mixed["validators"].values()) == pytest.approx(1.0)
        assert 0.0 <= mixed["weights_apart"] <= 1.0
        assert set(mixed["miners"]) >= {"farm0_vs_twin", "farm_share", "sybil_share", "spearman_incentive"}
    assert yuma.main(argv) == 0  # the ledgers' EMAs are kept: no daemon runs again
    again = last_json(capsys)
    assert again["daemon_seconds"] == {} and again["results"] == out["results"]


def test_one_round_validators_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    rounds, truth = small_set(tmp_path)
    argv = [str(rounds), str(truth), "--miners", "30", "--ticks", "2", "--epoch-every", "1", "--committees", "0"]
    assert yuma.main([*argv, "--one-round", "2", "--alphas", "0.02", "--out", str(tmp_path)]) == 0
    assert set(last_json(capsys)["results"]["alpha=0.02"]) == {"one_round"}


def test_too_few_ticks_for_two_epochs_is_refused(tmp_path) -> None:
    rounds, truth = small_set(tmp_path)
    with pytest.raises(SystemExit):
        yuma.main([str(rounds), str(truth), "--ticks", "3", "--epoch-every", "2", "--out", str(tmp_path)])


@pytest.mark.slow
def test_on_the_development_set_with_real_embeddings(tmp_path, capsys):
    if not (SHARED / "rounds.jsonl.gz").is_file():
        pytest.skip("the validity set is not beside the checkout")
    rows = [json.loads(line) for line in gzip.open(SHARED / "rounds.jsonl.gz", "rt", encoding="utf-8")][:3]
    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = [str(rounds), str(SHARED / "truth.json"), "--miners", "48", "--ticks", "2", "--epoch-every", "1"]
    argv += ["--committees", "2", "--one-round", "1", "--sizes", "16", "--alphas", "0.02", "--out", str(tmp_path)]
    assert yuma.main(argv) == 0
    out = last_json(capsys)
    mixed = out["results"]["alpha=0.02"]["mixed-16"]
    assert set(mixed["validators"]) == {"c16-0", "c16-1", "one_round0", "lazy0"}
    assert all(0.0 <= v["vtrust"] <= 1.0 + 1e-9 for v in mixed["validators"].values())
    assert list(tmp_path.glob("vectors-*.npz"))  # the lab's one vector cache (benchmarks.data.VectorCache)
