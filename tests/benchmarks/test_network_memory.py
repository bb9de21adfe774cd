"""benchmarks.network_memory: the ledger's per-tick shares folded again with other memories."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.network_memory import count_interval, fold, per_tick_ratio, settle_ticks, spearman_by_tick, tick_shares
from benchmarks.validity_report import spearman


def ledger_emas(x: np.ndarray, alpha: float) -> np.ndarray:
    """What the ledger's fold writes after each tick (NaN: a committee that paid nobody, the EMA holds)."""
    out, state = np.zeros_like(x), np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        state = np.where(np.isnan(x[t]), state, alpha * np.nan_to_num(x[t]) + (1 - alpha) * state)
        out[t] = state
    return out


def test_the_shares_come_back_from_the_emas_and_fold_again_as_the_ledger():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 0.1, size=(40, 5))
    x[7, 2] = np.nan  # miner 2's committee paid nobody in tick 8
    emas = ledger_emas(x, 0.1)
    back = tick_shares(emas, 0.1)
    assert np.isnan(back[7, 2]) and np.allclose(np.nan_to_num(back), np.nan_to_num(x))
    assert np.allclose(fold(back, "ema:0.1"), emas)
    mean = fold(back, "mean")
    assert mean[-1, 2] == pytest.approx(np.nanmean(x[:, 2]))
    window = fold(back, "window:10")
    assert window[-1, 0] == pytest.approx(np.mean(x[-10:, 0]))
    assert window[8, 2] == pytest.approx(np.nanmean(x[:9, 2]))  # fewer ticks than the window, one held


def test_the_ranking_by_tick_is_the_spearman_of_model_means():
    weights = np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    groups = {"a": [0, 1], "b": [2], "c": [3]}
    truth = {"a": 1.0, "b": 2.0, "c": 3.0}
    assert spearman_by_tick(weights, groups, truth, [1, 2, 3], spearman) == {1: 1.0, 2: -1.0}


def test_a_longer_memory_settles_slower():
    x = np.full((400, 3), 0.05)
    fast, slow = settle_ticks(x, [0, 1, 2], "ema:0.1", 100), settle_ticks(x, [0, 1, 2], "ema:0.02", 100)
    assert fast["newcomer_to_90pct"] == 22 and fast["turned_bad_to_10pct"] == 22  # log(0.1) / log(0.9) = 21.9
    # 90% of what it reaches in the 300 ticks left (99.8% of its share): a tick before log(0.1) / log(0.98) = 114
    assert slow["newcomer_to_90pct"] == 113 and slow["turned_bad_to_10pct"] == 114
    window = settle_ticks(x, [0], "window:50", 100)
    assert window["newcomer_to_90pct"] == 1  # a constant share: at once
    assert 45 <= window["turned_bad_to_10pct"] <= 46  # 5 of 50 ticks paid: 10%, the floats either side


def test_a_ratio_with_its_interval_over_blocks_of_ticks():
    rng = np.random.default_rng(1)
    n = 1000
    made = rng.integers(4, 6, n).astype(float)
    farm = made * rng.normal(1.1, 0.3, n)
    ref, asked = rng.normal(1.0, 0.3, n), np.ones(n)
    r = per_tick_ratio([farm, made, ref, asked], blocks=10)
    assert r["blocks"] == 10 and r["low"] < r["ratio"] < r["high"] and r["low"] < 1.1 < r["high"]
    assert math.isnan(per_tick_ratio([farm[:1], made[:1], ref[:1], asked[:1]])["low"])


def test_a_count_with_its_exact_interval():
    none = count_interval(0, 16000)
    assert none["low"] == 0.0 and none["high"] == pytest.approx(1 - 0.025 ** (1 / 16000), rel=1e-6)
    some = count_interval(15, 16000)
    assert some["low"] < 15 / 16000 < some["high"] < 0.0016


def test_one_round_memory_grows_with_the_answers_it_rests_on():
    from benchmarks.network_memory import one_round_memory

    rng = np.random.default_rng(2)
    models = [f"m{j}" for j in range(20)]
    truth = {m: float(j) for j, m in enumerate(models)}
    table = np.array([j * 0.001 for j in range(20)]) + rng.normal(0, 0.01, size=(100, 20))  # noisy rounds
    found = one_round_memory(table.clip(0), truth, models, 200, 10, ["ema:0.1", "mean"])
    assert set(found) == {"ema:0.1", "mean"} and set(found["mean"]) == {10, 20, 30, 50, 100, 150, 200}
    median, low, high = found["mean"][100]
    assert low <= median <= high and median > found["mean"][10][0] and median > found["ema:0.1"][100][0]
