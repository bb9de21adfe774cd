"""The one cosine similarity matrix of a round, and the distances derived from it."""

from __future__ import annotations

import numpy as np


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarities of unit (or zero) row vectors.

    vectors: (n, d). Returns (n, n) float64, symmetric, values clipped to
    [-1, 1]. The diagonal is 1 for every row, zero rows included (a response
    is identical to itself); a zero row has similarity 0 to every other row.
    """
    x = np.asarray(vectors, dtype=np.float64)
    sim = x @ x.T
    sim = (sim + sim.T) / 2.0  # exact symmetry regardless of BLAS summation order
    np.clip(sim, -1.0, 1.0, out=sim)
    np.fill_diagonal(sim, 1.0)
    return sim


def distances(sim: np.ndarray) -> np.ndarray:
    """Cosine distances 1 - sim, non-negative, zero diagonal: for precomputed-metric estimators."""
    d = 1.0 - sim
    np.clip(d, 0.0, 2.0, out=d)
    np.fill_diagonal(d, 0.0)
    return d


def pair_values(sim: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Upper-triangle similarities among ``members`` (indices), one per unordered pair."""
    idx = np.asarray(members, dtype=np.intp)
    sub = sim[np.ix_(idx, idx)]
    iu = np.triu_indices(len(idx), k=1)
    return sub[iu]
