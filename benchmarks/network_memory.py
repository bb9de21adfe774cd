"""What the final weights rest on: the ledger's per-tick shares folded again with other memories (issue 37).

``benchmarks.network`` keeps every identity's EMA after each tick (``ema``, ticks x identities, the daemon's
ledger at ``alpha``). A tick moves a miner's EMA as ``ema_t = alpha * x_t + (1 - alpha) * ema_{t-1}``, ``x_t``
its share of what the tick paid (``emissions.ticks``), or leaves it as it was (its committee paid nobody):
``tick_shares`` recovers each ``x_t`` (NaN where the EMA held), and ``weights_by_memory`` folds them again as the
ledger would with another ``alpha``, or as the mean of the last ``window`` ticks, or of every tick so far: the
Spearman of each against the truth, tick by tick, says how the final weights' ranking grows with ticks and
with memory, from one run. ``settle_ticks`` is the responsiveness each memory costs: the ticks a newcomer whose
shares are a miner's recorded ones takes to reach 90% of the weight it ends at, and a miner turning bad (paid 0
from some tick on) to fall under 10% of its weight.

``per_tick_ratio`` is the farm's per-answer ratio with a confidence interval: batch means over blocks of ticks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def tick_shares(ema: np.ndarray, alpha: float) -> np.ndarray:
    """``x_t`` per tick and identity from the EMAs after each tick (rows); NaN where the EMA did not move."""
    before = np.vstack([np.zeros((1, ema.shape[1])), ema[:-1]])
    x = (ema - (1.0 - alpha) * before) / alpha
    return np.where(ema == before, np.nan, np.clip(x, 0.0, None))


def fold(x: np.ndarray, memory: str) -> np.ndarray:
    """Weights after each tick (rows, before normalising) under ``memory``: ``ema:A`` (the ledger's fold with
    alpha A), ``window:W`` (the mean of the last W ticks a miner was paid or not), ``mean`` (every tick)."""
    kind, _, value = memory.partition(":")
    out = np.zeros_like(x)
    if kind == "ema":
        alpha = float(value)
        state = np.zeros(x.shape[1])
        for t in range(x.shape[0]):
            state = np.where(np.isnan(x[t]), state, alpha * np.nan_to_num(x[t]) + (1.0 - alpha) * state)
            out[t] = state
        return out
    seen = ~np.isnan(x)
    vals = np.nan_to_num(x)
    csum, ccount = np.cumsum(vals, axis=0), np.cumsum(seen, axis=0)
    if kind == "mean":
        return csum / np.maximum(ccount, 1)
    width = int(value)
    lag_sum = np.vstack([np.zeros((width, x.shape[1])), csum[:-width]])[: x.shape[0]]
    lag_count = np.vstack([np.zeros((width, x.shape[1])), ccount[:-width]])[: x.shape[0]]
    return (csum - lag_sum) / np.maximum(ccount - lag_count, 1)


def spearman_by_tick(
    weights: np.ndarray,
    groups: Mapping[str, Sequence[int]],
    truth: Mapping[str, float],
    ticks: Sequence[int],
    spearman: Callable[[Sequence[float], Sequence[float]], float],
) -> dict[int, float]:
    """The Spearman of the per-model mean weight (columns ``groups[model]``) against ``truth`` after each of ``ticks``."""
    models = sorted(groups)
    out = {}
    for t in ticks:
        if 1 <= t <= weights.shape[0]:
            row = weights[t - 1]
            out[t] = round(spearman([float(np.mean(row[groups[m]])) for m in models], [truth[m] for m in models]), 4)
    return out


def settle_ticks(x: np.ndarray, columns: Sequence[int], memory: str, start: int = 0) -> dict[str, float]:
    """Median ticks, over ``columns``, for a miner joining at tick ``start`` (its recorded shares from there) to
    reach 90% of its weight at the last tick, and for one paid 0 from ``start`` on to fall under 10% of its weight
    at ``start``; NaN when it never does within the run."""
    rise, fall = [], []
    for c in columns:
        series = x[start:, [c]]
        w = fold(series, memory)[:, 0]
        target = w[-1]
        reached = np.nonzero(w >= 0.9 * target)[0] if target > 0 else np.array([])
        rise.append(float(reached[0] + 1) if reached.size else math.nan)
        history = fold(x[: start + 1, [c]], memory)[-1, 0]
        if history <= 0:
            continue
        zeros = np.vstack([x[: start + 1, [c]], np.zeros((x.shape[0] - start - 1, 1))])
        after = fold(zeros, memory)[start + 1 :, 0]
        under = np.nonzero(after < 0.1 * history)[0]
        fall.append(float(under[0] + 1) if under.size else math.nan)
    return {
        "newcomer_to_90pct": float(np.nanmedian(rise)) if rise and not np.all(np.isnan(rise)) else math.nan,
        "turned_bad_to_10pct": float(np.nanmedian(fall)) if fall and not np.all(np.isnan(fall)) else math.nan,
    }


def per_tick_ratio(parts: Sequence[np.ndarray], blocks: int = 10) -> dict[str, float]:
    """``(sum(a) / sum(b)) / (sum(c) / sum(d))`` of four per-tick series ``parts`` (the farm's units and answers it
    produced, the reference's units and answers), with a 95% interval from batch means: the ticks cut into
    ``blocks`` consecutive blocks, the ratio of each block, a t interval over the blocks (the draws of the ticks are
    independent, and a block of 100 ticks outlasts the ledger's memory)."""

    def ratio(a: int, b: int) -> float:
        sums = [float(np.sum(p[a:b])) for p in parts]
        if sums[1] <= 0 or sums[2] <= 0 or sums[3] <= 0:
            return math.nan
        return (sums[0] / sums[1]) / (sums[2] / sums[3])

    n = len(parts[0])
    blocks = max(2, min(blocks, n))
    edges = np.linspace(0, n, blocks + 1).astype(int)
    ratios = [r for a, b in zip(edges[:-1], edges[1:], strict=True) if not math.isnan(r := ratio(int(a), int(b)))]
    total = ratio(0, n)
    if len(ratios) < 2:
        return {"ratio": round(total, 4), "low": math.nan, "high": math.nan, "blocks": len(ratios)}
    from scipy import stats

    half = float(stats.t.ppf(0.975, len(ratios) - 1)) * float(np.std(ratios, ddof=1)) / math.sqrt(len(ratios))
    return {
        "ratio": round(total, 4),
        "low": round(total - half, 4),
        "high": round(total + half, 4),
        "blocks": len(ratios),
    }


def count_interval(count: int, trials: int) -> dict[str, float]:
    """An exact (Clopper-Pearson) 95% interval of a proportion ``count / trials``."""
    from scipy import stats

    low = 0.0 if count == 0 else float(stats.beta.ppf(0.025, count, trials - count + 1))
    high = 1.0 if count == trials else float(stats.beta.ppf(0.975, count + 1, trials - count))
    return {"count": count, "of": trials, "share": count / max(trials, 1), "low": low, "high": high}


def one_round_shares(
    rounds_path: Path, truth: Mapping[str, Any], out: Path, seed_vectors: Path | None
) -> tuple[np.ndarray, np.ndarray]:
    """(rounds, honest models) ledger shares of every round of a set evaluated with everyone in one round, as
    ``benchmarks.validity`` evaluates it (NaN: a round that paid nobody), and each round's pool scale (its pool
    over the nominal pool: the consensus score's part, ``emissions.allocate.pool_scale``). ``seed_vectors``: a
    ``benchmarks.network`` cache file (``vectors-<tag>.npz``, or an older ``vectors.npz``) whose vectors the
    validity cache starts from."""
    from benchmarks.data import VectorCache, read_rounds
    from benchmarks.evaluate import replay
    from validator.settings import load_settings

    settings = load_settings(None, env={}, dotenv_path=None)
    cache = VectorCache(out, settings)
    if seed_vectors is not None:
        cache.adopt(seed_vectors)
    models = sorted(truth["lc_winrate"])
    col = {m: j for j, m in enumerate(models)}
    reps = replay(read_rounds(rounds_path), cache, settings)
    table = np.full((len(reps), len(models)), np.nan)
    scale = np.array([float(rep.allocation.pool_scale) for rep in reps])
    for k, rep in enumerate(reps):
        if rep.record.evaluated and rep.allocation.pool > 0:
            table[k] = 0.0
            for res, share in zip(rep.evaluation.results, rep.allocation.shares, strict=True):
                if res.miner in col:
                    table[k, col[res.miner]] = share  # amount / the round's pool
    return table, scale


def one_round_memory(
    table: np.ndarray,
    truth: Mapping[str, float],
    models: Sequence[str],
    ticks: int,
    orders: int,
    memories: Sequence[str],
) -> dict[str, dict[int, list[float]]]:
    """Final-weight Spearman (median and 10th-90th percentiles over ``orders`` random prompt orders, each a fresh
    permutation per pass over the set, as the daemon draws) tick by tick, with everyone in one round."""
    from benchmarks.validity_report import spearman

    groups = {m: [j] for j, m in enumerate(models)}
    marks = [t for t in (10, 20, 30, 50, 100, 150, 200, 300, 500, 1000) if t <= ticks]
    rng = np.random.default_rng(0)
    found: dict[str, dict[int, list[float]]] = {m: {t: [] for t in marks} for m in memories}
    for _ in range(orders):
        order = np.concatenate([rng.permutation(len(table)) for _ in range(ticks // len(table) + 1)])[:ticks]
        x = table[order]
        for memory in memories:
            got = spearman_by_tick(fold(x, memory), groups, truth, marks, spearman)
            for t, rho in got.items():
                found[memory][t].append(rho)
    return {
        m: {t: [round(float(np.percentile(v, q)), 4) for q in (50, 10, 90)] for t, v in by.items()}
        for m, by in found.items()
    }


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    p = argparse.ArgumentParser(
        prog="python -m benchmarks.network_memory",
        description="Final-weight Spearman against ticks and the ledger's memory, everyone in one round: every "
        "round of ROUNDS evaluated once (as benchmarks.validity), its shares folded tick by tick in random orders.",
    )
    p.add_argument("rounds", type=Path)
    p.add_argument("truth", type=Path)
    p.add_argument("--out", type=Path, default=Path("out/network-memory"), help="vector cache and memory.json")
    p.add_argument(
        "--vectors", type=Path, default=None, help="a benchmarks.network cache file (vectors-<tag>.npz) to start from"
    )
    p.add_argument("--ticks", type=int, default=500)
    p.add_argument("--orders", type=int, default=50, help="random prompt orders")
    p.add_argument(
        "--memories", nargs="*", default=["ema:0.1", "ema:0.05", "ema:0.02", "ema:0.01", "window:100", "mean"]
    )
    args = p.parse_args(argv)
    truth = json.loads(args.truth.read_text(encoding="utf-8"))
    table, scale = one_round_shares(args.rounds, truth, args.out, args.vectors)
    models = sorted(truth["lc_winrate"])
    from benchmarks.validity_report import spearman

    quality = [truth["lc_winrate"][m] for m in models]
    scaled = table * scale[:, None]  # a round's shares weighed by its pool scale: what its units say
    out = {
        "rounds": len(table),
        "mean_share_spearman": round(spearman(list(np.nanmean(table, axis=0)), quality), 4),
        "mean_scaled_share_spearman": round(spearman(list(np.nanmean(scaled, axis=0)), quality), 4),
        "by_memory": one_round_memory(table, truth["lc_winrate"], models, args.ticks, args.orders, args.memories),
        "by_memory_scaled": one_round_memory(
            scaled, truth["lc_winrate"], models, args.ticks, args.orders, args.memories
        ),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "memory.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
