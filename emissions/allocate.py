"""Split one round's pool among its miners.

weight_i = composite_i * speed_i * cluster_i * top_i for every eligible
response: in consensus, or in another cluster with an alignment to the
consensus of at least ``min_alignment`` (an honest minority view). Responses
removed by a filter (empty, failed, copy, too short, outlier) earn nothing,
nor does an answer whose yes/no polarity contradicts the agreed one, nor an
off-topic answer in a cluster of its own; amount_i = pool * weight_i / sum(weight), in integer units with
largest-remainder rounding, so a round's amounts sum exactly to its pool.
Quality decides (the composite), speed only modulates within
[1 - speed_weight, 1], and a final cap keeps weights non-decreasing in the
composite: no response out-earns one with a higher composite score. docs/emissions.md has the formula and its reasons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from consensus.types import Evaluation, Reason, Round
from emissions.config import EmissionsConfig


@dataclass(frozen=True)
class Allocation:
    """One round's emissions, per response (input order)."""

    pool: int  # units emitted this round (0 when nobody is eligible)
    pool_scale: float  # floor + (1 - floor) * clip(consensus score, 0, 1)
    amounts: tuple[int, ...]  # units per response; sums to pool
    shares: tuple[float, ...]  # amount / pool (0 when the pool is 0)
    eligible: tuple[bool, ...]
    speed: tuple[float, ...]
    cluster: tuple[float, ...]
    top: tuple[float, ...]
    weights: tuple[float, ...]
    top_index: int | None
    top_diff: float  # points between the best and the runner-up composite


def top_bonus(diff_points: float, config: EmissionsConfig | None = None) -> float:
    """1 + max * tanh(scale * diff), capped at 1 + max (0.5 and 0.1 by default: 10 points -> 1.381)."""
    config = config or EmissionsConfig()
    if diff_points <= 0:
        return 1.0
    return min(1.0 + config.top_bonus_max * math.tanh(config.top_bonus_scale * diff_points), 1.0 + config.top_bonus_max)


def expected_latency(lengths: np.ndarray, latencies: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """(n,) the round's latency for an answer of each length: a Theil-Sen line of latency on characters.

    Fitted over the eligible answers (the median of their pairwise slopes, never below 0, and the
    median intercept), so one front-runner or one stalled server does not move it; at least
    ``latency`` floor-free values, 1 ms.
    """
    x, y = lengths[eligible], latencies[eligible]
    a, b = np.triu_indices(len(x), 1)
    dx = x[b] - x[a]
    apart = np.abs(dx) > 0
    slope = max(0.0, float(np.median((y[b] - y[a])[apart] / dx[apart]))) if apart.any() else 0.0
    intercept = float(np.median(y - slope * x))
    return np.maximum(intercept + slope * lengths, 1e-3)


def speed_modifiers(
    latencies: np.ndarray,
    eligible: np.ndarray,
    config: EmissionsConfig,
    words: np.ndarray | None = None,
    lengths: np.ndarray | None = None,
) -> np.ndarray:
    """(1 - w) + w * speed / fastest for eligible responses, 1 elsewhere (unused there).

    ``speed_mode`` "for_length" (default): speed = the round's latency for an answer of this many
    characters (``expected_latency``) / this answer's latency: a server faster than the round for
    the length it wrote is fast, whatever it wrote (throughput pays long answers and penalises
    Markdown, whose symbols take characters and count no words; latency pays short ones). With
    fewer than 4 eligible answers there is no line to fit and throughput decides: speed = words /
    latency (words per second, at least one word), so a longer answer is not slower for being longer.

    ``speed_mode`` "latency" (the seed profile's): speed = 1 / latency, which paid short answers.
    Latencies below ``latency_floor_s`` count as the floor.
    """
    out = np.ones(len(latencies), dtype=np.float64)
    if not eligible.any():
        return out
    t = np.maximum(latencies, config.latency_floor_s)
    w = config.speed_weight
    if config.speed_mode == "for_length" and lengths is not None and int(eligible.sum()) >= 4:
        expected = expected_latency(np.asarray(lengths, dtype=np.float64), t, eligible)
        rate = expected / t
        out[eligible] = (1.0 - w) + w * (rate[eligible] / rate[eligible].max())
        return out
    if config.speed_mode == "for_length" and words is not None:
        rate = np.maximum(np.asarray(words, dtype=np.float64), 1.0) / t
        out[eligible] = (1.0 - w) + w * (rate[eligible] / rate[eligible].max())
        return out
    fastest = t[eligible].min()
    out[eligible] = (1.0 - w) + w * (fastest / t[eligible])
    return out


def share_groups(weights: np.ndarray, groups: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """Each group (one entity, one sybil voice, tied copies) earns what one of its members would.

    The group's total is the mean weight of its members, split equally among them: running
    k identities pays like running one.
    """
    out = weights.copy()
    for group in groups:
        idx = np.asarray(group, dtype=np.intp)
        out[idx] = weights[idx].mean() / len(idx)
    return out


def pool_scale(evaluation: Evaluation, config: EmissionsConfig) -> float:
    """Share of ``pool_units`` this round emits (docs/emissions.md, "Rounds without agreement")."""
    scaled = config.pool_floor + (1.0 - config.pool_floor) * min(max(evaluation.consensus.score, 0.0), 1.0)
    if evaluation.consensus.reached or config.unreached_pays == "scaled":
        return scaled
    return config.pool_floor


def monotone_cap(composite: np.ndarray, weights: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Cap each weight at the smallest weight of any eligible response with a strictly higher composite.

    Speed modulates between comparable answers but can never lift a response
    above one with a better composite score: the final weights are
    non-decreasing in the composite. Equal composites are not capped against
    each other, so between equal answers the faster still earns more.
    """
    out = weights.astype(np.float64).copy()
    idx = [int(i) for i in np.flatnonzero(eligible)]
    idx.sort(key=lambda i: -composite[i])
    cap = math.inf
    k = 0
    while k < len(idx):
        group = [idx[k]]
        while k + len(group) < len(idx) and composite[idx[k + len(group)]] == composite[idx[k]]:
            group.append(idx[k + len(group)])
        for i in group:
            out[i] = min(out[i], cap)
        cap = min(cap, min(out[i] for i in group))
        k += len(group)
    return out


def largest_remainder(pool: int, weights: np.ndarray) -> np.ndarray:
    """Integer amounts proportional to ``weights`` summing exactly to ``pool``.

    Ties in the fractional remainders go to the lower index.
    """
    total = float(weights.sum())
    if pool == 0 or total <= 0:
        return np.zeros(len(weights), dtype=np.int64)
    exact = weights / total * pool
    base = np.floor(exact).astype(np.int64)
    short = int(pool - base.sum())
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - base[i]), i))
    for i in order[:short]:
        base[i] += 1
    return base


def allocate(round_: Round, evaluation: Evaluation, config: EmissionsConfig | None = None) -> Allocation:
    """Split the round's pool (module docstring); amounts sum exactly to ``pool``."""
    config = config or EmissionsConfig()
    results = evaluation.results
    n = len(results)
    composite = np.array([r.score.composite for r in results], dtype=np.float64)
    eligible = np.array(
        [
            not r.reason.filtered
            and r.score.composite > 0
            and (r.in_consensus or (r.reason is Reason.OTHER_CLUSTER and r.score.alignment >= config.min_alignment))
            for r in results
        ],
        dtype=bool,
    )
    latencies = np.array([resp.latency_s for resp in round_.responses], dtype=np.float64)
    speed = speed_modifiers(
        latencies,
        eligible,
        config,
        np.array([r.words for r in results], dtype=np.float64),
        np.array([len(resp.text) for resp in round_.responses], dtype=np.float64),
    )
    cluster = np.where([r.reason is Reason.IN_CONSENSUS for r in results], config.consensus_multiplier, 1.0)
    top = np.ones(n, dtype=np.float64)
    top_index: int | None = None
    diff = 0.0
    ranked = sorted(np.flatnonzero(eligible).tolist(), key=lambda i: (-composite[i], i))
    if len(ranked) >= 2:
        diff = float(composite[ranked[0]] - composite[ranked[1]])
        if diff > 0:
            top_index = ranked[0]
            top[top_index] = top_bonus(diff, config)
    graded = composite**config.quality_exponent if config.quality_exponent != 1.0 else composite
    weights = monotone_cap(composite, np.where(eligible, graded * speed * cluster * top, 0.0), eligible)
    weights = share_groups(weights, evaluation.groups)
    scale = pool_scale(evaluation, config)
    pool = int(round(config.pool_units * scale)) if weights.sum() > 0 else 0
    amounts = largest_remainder(pool, weights)
    shares = amounts / pool if pool else np.zeros(n)
    return Allocation(
        pool=pool,
        pool_scale=scale,
        amounts=tuple(int(a) for a in amounts),
        shares=tuple(float(s) for s in shares),
        eligible=tuple(bool(e) for e in eligible),
        speed=tuple(float(s) for s in speed),
        cluster=tuple(float(c) for c in cluster),
        top=tuple(float(t) for t in top),
        weights=tuple(float(w) for w in weights),
        top_index=top_index,
        top_diff=diff,
    )
