"""Subtensor's epoch (Yuma Consensus) as pure numpy: what the chain pays for the weights validators set.

Followed line by line from opentensor/subtensor (main at 14bc6f9, 2026-06-30),
``pallets/subtensor/src/epoch/run_epoch.rs``, ``Pallet::epoch_mechanism`` (the sparse epoch the chain runs;
``epoch_dense_mechanism`` is the same algebra on dense matrices), with the helpers of
``pallets/subtensor/src/epoch/math.rs`` named at each step:

1. stake normalised; ``active_stake`` = stake of active neurons holding a validator permit, normalised
   (``inplace_mask_vector``, ``inplace_normalize``);
2. weights: rows of neurons without a permit masked (``mask_rows_sparse``), the diagonal masked, the subnet
   owner's self-weight excepted (``mask_diag_sparse_except_index``), rows normalised to sum 1
   (``inplace_row_normalize_sparse``; an all-zero row stays zero);
3. consensus ``c_j``: the stake-weighted median of column ``j`` at ``kappa`` (``weighted_median_col_sparse`` ->
   ``weighted_median``: the mid-pivot partition search, repeated here step for step, ties included);
4. clipped weights ``min(w_ij, c_j)`` (``col_clip_sparse``); **validator trust** ``vtrust_i = sum_j clipped_ij``
   (``row_sum_sparse``): the share of a validator's (normalised) weight that the stake majority backs;
5. ranks ``r_j = sum_i clipped_ij s_i`` (``matmul_sparse``), **incentive** = ranks normalised;
6. weights for bonds ``W + bonds_penalty (clipped - W)`` (``interpolate_sparse``);
7. bonds and **dividends**, two variants:

   - original Yuma (``Yuma3On`` false, the chain's default): old bonds, columns of neurons registered since the
     last epoch masked, column-normalised; ``delta = W_b * s`` column-normalised (``row_hadamard_sparse``);
     ``ema = a delta + (1 - a) B`` with ``a = 1 - bonds_moving_average / 1e6`` (``compute_ema_bonds_normal_sparse``
     -> ``mat_ema_sparse``), column-normalised; ``d_i = sum_j ema_ij I_j`` normalised (``matmul_transpose_sparse``);
     stored column max-upscaled (``inplace_col_max_upscale_sparse``);
   - Yuma 3 (``Yuma3On``): old bonds as fixed proportions; ``ema = a W_b + (1 - a) B`` (``compute_bonds_sparse``;
     with liquid alpha, ``a`` per entry from ``alpha_sigmoid`` between ``alpha_low`` and ``alpha_high`` and
     ``mat_ema_alpha_sparse``, which keeps only the entries the new weights name and caps them at 1); dividends
     ``d_i = s_i sum_j norm(ema)_ij I_j`` normalised; stored unnormalised;

8. emission: incentive to miners, dividends to validators, both over ``sum(incentive + dividends)``; when that is
   zero (no weights, only self-weights) validators get ``active_stake`` (else ``stake``).

Defaults are the runtime's (``runtime/src/lib.rs``): kappa 32,767/65,535, bonds_moving_average 900,000 (``a`` =
0.1), bonds_penalty 65,535 (1.0), Yuma 3 and liquid alpha off, alpha values (45,875, 58,982)/65,535 and
steepness 1,000 when on.

Left out, on purpose: I32F32 fixed point (float64 here: the differences are under 1e-8), u16 storage of
bonds, the stake threshold, the validator permits' top-k (``permits`` is given), masks of weights older than a
registration and of commit-reveal (the simulation registers nobody mid-run). The chain stores no miner ``trust``
or ``rank`` any more; ``trust`` below is the old definition (``r_j`` over the unclipped ``sum_i w_ij s_i``),
reported only to show how much of a miner's rank survived the clip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

U16_MAX = 65535


@dataclass(frozen=True)
class YumaParams:
    """A subnet's epoch hyperparameters, in the chain's units converted to floats."""

    kappa: float = 32767 / U16_MAX
    """Stake share that defines the consensus (``Kappa`` / 65535)."""
    bonds_moving_average: float = 900_000
    """``BondsMovingAverage`` in millionths: the bonds' EMA adds ``1 - bonds_moving_average / 1e6`` of the new."""
    bonds_penalty: float = 1.0
    """``BondsPenalty`` / 65535: 1 = bonds follow the clipped weights, 0 = the raw weights."""
    yuma3: bool = False
    """``Yuma3On``: bonds as fixed proportions, dividends weighted by stake."""
    liquid_alpha: bool = False
    """``LiquidAlphaOn`` (Yuma 3 only): a bond EMA coefficient per entry from ``alpha_sigmoid``."""
    alpha_low: float = 45875 / U16_MAX
    alpha_high: float = 58982 / U16_MAX
    alpha_sigmoid_steepness: float = 1000.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.kappa <= 1.0:
            raise ValueError(f"kappa must be in [0, 1], got {self.kappa}")
        if not 0.0 <= self.bonds_moving_average <= 1_000_000:
            raise ValueError(f"bonds_moving_average must be in [0, 1e6], got {self.bonds_moving_average}")
        if not 0.0 <= self.bonds_penalty <= 1.0:
            raise ValueError(f"bonds_penalty must be in [0, 1], got {self.bonds_penalty}")
        if not 0.0 <= self.alpha_low <= self.alpha_high <= 1.0:
            raise ValueError(f"need 0 <= alpha_low <= alpha_high <= 1, got {self.alpha_low}, {self.alpha_high}")

    @property
    def bond_alpha(self) -> float:
        """What the bonds' EMA adds of the new epoch (``compute_disabled_liquid_alpha``)."""
        return 1.0 - self.bonds_moving_average / 1_000_000


@dataclass(frozen=True)
class Epoch:
    """One epoch's terms; vectors (n,), matrices (n, n), rows validators, columns the neurons they weight."""

    active_stake: np.ndarray
    weights: np.ndarray  # masked and row-normalised
    consensus: np.ndarray
    clipped: np.ndarray
    validator_trust: np.ndarray
    rank: np.ndarray  # sum_i clipped_ij s_i, before normalising
    trust: np.ndarray  # rank over the unclipped sum_i w_ij s_i (the old definition; not stored by the chain)
    incentive: np.ndarray
    dividends: np.ndarray
    bonds: np.ndarray  # as the chain stores them for the next epoch
    server_emission: np.ndarray  # shares of the epoch's emission (server + validator sum to 1)
    validator_emission: np.ndarray


def normalize(x: np.ndarray) -> np.ndarray:
    """``inplace_normalize``: sum 1, unless the sum is 0 (then unchanged)."""
    total = float(x.sum())
    return x / total if total != 0 else x.copy()


def row_normalize(m: np.ndarray) -> np.ndarray:
    """``inplace_row_normalize_sparse``: rows with a positive sum to sum 1, the others unchanged."""
    sums = m.sum(axis=1, keepdims=True)
    return np.where(sums > 0, m / np.where(sums > 0, sums, 1.0), m)


def col_normalize(m: np.ndarray) -> np.ndarray:
    """``inplace_col_normalize_sparse``: columns with a nonzero sum to sum 1, the others unchanged."""
    sums = m.sum(axis=0, keepdims=True)
    return np.where(sums != 0, m / np.where(sums != 0, sums, 1.0), m)


def col_max_upscale(m: np.ndarray) -> np.ndarray:
    """``inplace_col_max_upscale_sparse``: each column over its maximum (zero columns unchanged)."""
    top = m.max(axis=0, keepdims=True) if m.size else m
    return np.where(top != 0, m / np.where(top != 0, top, 1.0), m)


def weighted_median(stake: Sequence[float], score: Sequence[float], minority: float, lo: float, hi: float) -> float:
    """``math.rs::weighted_median``: the stake-weighted median by a mid-pivot partition search.

    ``stake`` normalised, ``minority`` = stake sum - kappa; the partition ``[lo, hi]`` of the stake integral."""
    part = list(range(len(score)))
    for _ in range(len(score) + 1):
        if not part:
            return 0.0
        if len(part) == 1:
            return float(score[part[0]])
        pivot = score[part[len(part) // 2]]
        lower = [i for i in part if score[i] < pivot]
        upper = [i for i in part if score[i] > pivot]
        lo_stake = sum(stake[i] for i in lower)
        hi_stake = sum(stake[i] for i in upper)
        if minority < lo + lo_stake and lower:
            part, hi = lower, lo + lo_stake
        elif hi - hi_stake <= minority and upper:
            part, lo = upper, hi - hi_stake
        else:
            return float(pivot)
    return 0.0


def weighted_median_col(stake: np.ndarray, weights: np.ndarray, kappa: float) -> np.ndarray:
    """``weighted_median_col_sparse``: per column, the median over the rows with positive stake (renormalised)."""
    rows = stake > 0
    use = normalize(stake[rows].astype(float))
    total = float(use.sum())
    minority = total - kappa
    cols = weights[rows]
    return np.array(
        [weighted_median(use.tolist(), cols[:, j].tolist(), minority, 0.0, total) for j in range(weights.shape[1])]
    )


def alpha_sigmoid(consensus: np.ndarray, w: np.ndarray, b: np.ndarray, params: YumaParams) -> np.ndarray:
    """``run_epoch.rs::alpha_sigmoid``, element-wise: a fast bond EMA where a weight leads the consensus (buy) or
    falls below its bond (sell)."""
    buy = np.clip(w - consensus[None, :], 0.0, 1.0)
    sell = np.clip(b - w, 0.0, 1.0)
    diff = np.where(w >= b, buy, sell)
    sigmoid = 1.0 / (1.0 + np.exp(params.alpha_sigmoid_steepness / -100.0 * (diff - 0.5)))
    alpha: np.ndarray = np.clip(
        params.alpha_low + sigmoid * (params.alpha_high - params.alpha_low), params.alpha_low, params.alpha_high
    )
    return alpha


def epoch(
    weights: np.ndarray,
    stake: np.ndarray,
    bonds: np.ndarray | None = None,
    params: YumaParams | None = None,
    *,
    permits: np.ndarray | None = None,
    active: np.ndarray | None = None,
    owner_uid: int | None = None,
    recently_registered: np.ndarray | None = None,
) -> Epoch:
    """One epoch. ``weights`` (n, n) as set (any scale: rows are normalised), ``stake`` (n,), ``bonds`` (n, n)
    the previous epoch's stored bonds (zeros: none), ``permits`` (n,) validator permits (default: positive
    stake), ``active`` (n,) not past the activity cutoff (default: all), ``recently_registered`` (n,) columns
    whose bonds are dropped. The inputs are not modified."""
    p = params or YumaParams()
    w_in = np.asarray(weights, dtype=float)
    n = w_in.shape[0]
    if w_in.shape != (n, n):
        raise ValueError(f"weights must be square (n, n), got {w_in.shape}")
    s = np.asarray(stake, dtype=float)
    if s.shape != (n,):
        raise ValueError(f"stake must have shape ({n},), got {s.shape}")
    if (w_in < 0).any() or (s < 0).any() or not (np.isfinite(w_in).all() and np.isfinite(s).all()):
        raise ValueError("weights and stake must be finite and non-negative")
    b_old = np.zeros((n, n)) if bonds is None else np.asarray(bonds, dtype=float)
    if b_old.shape != (n, n):
        raise ValueError(f"bonds must have shape ({n}, {n}), got {b_old.shape}")
    permit = s > 0 if permits is None else np.asarray(permits, dtype=bool)
    act = np.ones(n, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    fresh = np.zeros(n, dtype=bool) if recently_registered is None else np.asarray(recently_registered, dtype=bool)

    stake_n = normalize(s)
    active_stake = normalize(np.where(act & permit, stake_n, 0.0))

    w = np.where(permit[:, None], w_in, 0.0)
    diag = np.eye(n, dtype=bool)
    if owner_uid is not None:
        diag[owner_uid, owner_uid] = False
    w = row_normalize(np.where(diag, 0.0, w))

    consensus = weighted_median_col(active_stake, w, p.kappa) if n else np.zeros(0)
    clipped = np.minimum(w, consensus[None, :])
    vtrust = clipped.sum(axis=1)

    rank = clipped.T @ active_stake
    prerank = w.T @ active_stake
    trust = np.divide(rank, prerank, out=np.zeros(n), where=prerank > 0)
    incentive = normalize(rank)

    w_b = w + p.bonds_penalty * (clipped - w)
    b = np.where(fresh[None, :], 0.0, b_old)
    if p.yuma3:
        if p.liquid_alpha and consensus.size and (consensus != 0).any():
            a = alpha_sigmoid(consensus, w_b, b, p)
            ema = np.where(w_b > 0, np.minimum((1.0 - a) * b + np.maximum(a * w_b, 0.0), 1.0), 0.0)
        else:
            ema = p.bond_alpha * w_b + (1.0 - p.bond_alpha) * b
        per_validator = (col_normalize(ema) * incentive[None, :]).sum(axis=1)
        dividends = normalize(per_validator * active_stake)
        stored = ema
    else:
        b = col_normalize(b)
        delta = col_normalize(w_b * active_stake[:, None])
        ema = col_normalize(p.bond_alpha * delta + (1.0 - p.bond_alpha) * b)
        dividends = normalize(ema @ incentive)
        stored = col_max_upscale(ema)

    total = float((incentive + dividends).sum())
    if total == 0:
        server = incentive.copy()
        validator = active_stake.copy() if active_stake.any() else stake_n.copy()
    else:
        server, validator = incentive / total, dividends / total
    return Epoch(
        active_stake=active_stake,
        weights=w,
        consensus=consensus,
        clipped=clipped,
        validator_trust=vtrust,
        rank=rank,
        trust=trust,
        incentive=incentive,
        dividends=dividends,
        bonds=stored,
        server_emission=server,
        validator_emission=validator,
    )
