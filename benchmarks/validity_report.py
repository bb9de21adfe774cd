"""The validity report: how far a replay's rewards track the known quality of the miners.

``report`` reads the replayed rounds (``benchmarks.evaluate``) and a ``truth.json`` (``lc_winrate`` per
honest miner, adversaries, copies, sybil groups) and returns every figure of docs/validity.md's tables:
the Spearman of honest miners' total emissions against their quality with a bootstrap interval and split
halves, the adversaries' shares, copies and sybil groups against an honest mean, per-part Spearmans.
``print_report`` prints it. Pure: replayed rounds in, a dict out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.evaluate import Replayed
from consensus.types import Reason

PARTS = ("composite", "alignment", "quality", "confidence", "bonus", "reference")


def ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x), dtype=np.float64)
    r[order] = np.arange(len(x), dtype=np.float64)
    xs = x[order]
    i = 0
    while i < len(x):  # average ranks over ties
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        r[order[i : j + 1]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    ra, rb = ranks(np.asarray(a, dtype=np.float64)), ranks(np.asarray(b, dtype=np.float64))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = float(np.sqrt((ra**2).sum() * (rb**2).sum()))
    return float((ra * rb).sum() / den) if den else 0.0


def amounts_table(reps: list[Replayed], miners: list[str]) -> np.ndarray:
    """(rounds, miners) emitted units; a miner absent from a round has 0."""
    col = {m: j for j, m in enumerate(miners)}
    table = np.zeros((len(reps), len(miners)))
    for k, rep in enumerate(reps):
        for res, amount in zip(rep.evaluation.results, rep.allocation.amounts):
            if res.miner in col:
                table[k, col[res.miner]] = amount
    return table


def part_means(reps: list[Replayed], honest: list[str]) -> dict[str, list[float]]:
    sums: dict[str, dict[str, list[float]]] = {p: {m: [] for m in honest} for p in (*PARTS, "speed", "top", "words")}
    for rep in reps:
        for res, speed, top in zip(rep.evaluation.results, rep.allocation.speed, rep.allocation.top):
            if res.miner not in sums["composite"]:
                continue
            for p in PARTS:
                v = getattr(res.score, p)
                if v is not None:
                    sums[p][res.miner].append(float(v))
            sums["speed"][res.miner].append(speed)
            sums["top"][res.miner].append(top)
            sums["words"][res.miner].append(float(res.words))
    return {p: [float(np.mean(v[m])) if v[m] else 0.0 for m in honest] for p, v in sums.items()}


def report(reps: list[Replayed], truth: dict[str, Any], *, seed: int = 0, boot: int = 1000) -> dict[str, Any]:
    quality = truth["lc_winrate"]
    honest = sorted(quality)
    adv = truth.get("adversarial", {})
    sybils: dict[str, list[str]] = truth.get("sybil_groups", {})
    miners = sorted({res.miner for rep in reps for res in rep.evaluation.results})
    table = amounts_table(reps, miners)
    col = {m: j for j, m in enumerate(miners)}
    q = [quality[m] for m in honest]
    hcols = [col[m] for m in honest if m in col]
    total = table.sum()
    share = {m: float(table[:, col[m]].sum() / total) if total else 0.0 for m in miners}
    rho = spearman(table[:, hcols].sum(axis=0), q)
    rng = np.random.default_rng(seed)
    boots = [spearman(table[rng.integers(0, len(reps), len(reps))][:, hcols].sum(axis=0), q) for _ in range(boot)]
    half = len(reps) // 2
    by_rank = sorted(honest, key=lambda m: -quality[m])
    halves = {
        "rounds_first": spearman(table[:half][:, hcols].sum(axis=0), q),
        "rounds_second": spearman(table[half:][:, hcols].sum(axis=0), q),
        "models_even": spearman([table[:, col[m]].sum() for m in by_rank[0::2]], [quality[m] for m in by_rank[0::2]]),
        "models_odd": spearman([table[:, col[m]].sum() for m in by_rank[1::2]], [quality[m] for m in by_rank[1::2]]),
    }
    honest_mean = float(np.mean([share[m] for m in honest]))
    out: dict[str, Any] = {
        "rounds": len(reps),
        "spearman": rho,
        "ci95": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))],
        "split_half": halves,
        "honest_mean_share": honest_mean,
        "adversary_share": {role: share.get(m, 0.0) for role, m in adv.items()},
    }
    copies: dict[str, list[str]] = {}
    for copier, source in truth.get("copy_of", {}).items():
        copies.setdefault(source, []).append(copier)
    out["copy_group_over_source"] = {
        src: (share.get(src, 0.0) + sum(share.get(c, 0.0) for c in cs)) / max(share.get(src, 0.0), 1e-12)
        for src, cs in copies.items()
    }
    # the second half of the rounds alone: what a group earns once persistence had rounds to link it
    late = table[half:]
    late_total = late.sum()
    late_share = {m: float(late[:, col[m]].sum() / late_total) if late_total else 0.0 for m in miners}
    late_honest = float(np.mean([late_share.get(m, 0.0) for m in honest]))
    out["sybil_groups"] = {
        name: {
            "share": sum(share.get(m, 0.0) for m in ms),
            "over_honest_mean": sum(share.get(m, 0.0) for m in ms) / max(honest_mean, 1e-12),
            "late_over_honest_mean": sum(late_share.get(m, 0.0) for m in ms) / max(late_honest, 1e-12),
        }
        for name, ms in sybils.items()
    }
    means = part_means(reps, honest)
    out["parts"] = {p: spearman(v, q) for p, v in means.items() if np.ptp(v) > 0}
    best = by_rank[0]
    counts = {reason.value: 0 for reason in Reason}
    honest_copy = 0
    for rep in reps:
        for res in rep.evaluation.results:
            if res.miner == best:
                counts[res.reason.value] += 1
            if res.miner in quality and res.reason is Reason.COPY:
                honest_copy += 1
    out["best_miner_reasons"] = {k: v for k, v in counts.items() if v}
    out["honest_marked_copy"] = honest_copy
    out["unreached_rounds"] = sum(not rep.evaluation.consensus.reached for rep in reps)
    out["honest_paid_share"] = float(sum(share[m] for m in honest))
    out["emitted_units"] = int(total)
    out["honest_units"] = int(table[:, hcols].sum())
    return out


def print_report(rep: dict[str, Any]) -> None:
    lo, hi = rep["ci95"]
    print(
        f"spearman={rep['spearman']:.3f}  ci95=[{lo:.3f}, {hi:.3f}]  rounds={rep['rounds']}  "
        f"unreached={rep['unreached_rounds']}"
    )
    print("split-half: " + "  ".join(f"{k}={v:.3f}" for k, v in rep["split_half"].items()))
    print(
        f"honest: mean share={rep['honest_mean_share']:.4f}  total={rep['honest_paid_share']:.4f}  "
        f"marked copy={rep['honest_marked_copy']}  best miner: {rep['best_miner_reasons']}  "
        f"units: emitted={rep['emitted_units']:,} honest={rep['honest_units']:,}"
    )
    if rep["adversary_share"]:
        print("adversaries: " + "  ".join(f"{k}={v:.4f}" for k, v in rep["adversary_share"].items()))
    for src, ratio in rep["copy_group_over_source"].items():
        print(f"copies of {src}: group/source={ratio:.3f} ({'paid' if ratio > 1.0 + 1e-9 else 'did not pay'})")
    for name, g in rep["sybil_groups"].items():
        print(
            f"sybil group {name}: share={g['share']:.4f} = {g['over_honest_mean']:.2f}x honest mean "
            f"(second half of the rounds: {g['late_over_honest_mean']:.2f}x)"
        )
    print("parts (spearman of per-miner mean): " + "  ".join(f"{k}={v:.3f}" for k, v in rep["parts"].items()))
