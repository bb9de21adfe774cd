"""Agglomerative clustering on the round's cosine distances and the dominant cluster."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from consensus.similarity import distances, pair_values


def cluster_labels(sim: np.ndarray, candidates: np.ndarray, *, linkage: str, distance: float) -> np.ndarray:
    """Cluster labels (one per candidate) from agglomerative clustering.

    Uses the precomputed distance matrix 1 - cosine; merging stops at
    ``distance``. With fewer than two candidates every candidate is its own
    cluster 0.
    """
    # lazy: start-up cost, scikit-learn takes 4.7 s to import
    from sklearn.cluster import AgglomerativeClustering

    cand = np.asarray(candidates, dtype=np.intp)
    if len(cand) < 2:
        return np.zeros(len(cand), dtype=np.intp)
    model = AgglomerativeClustering(n_clusters=None, metric="precomputed", linkage=linkage, distance_threshold=distance)
    labels: npt.NDArray[np.intp] = model.fit_predict(distances(sim[np.ix_(cand, cand)])).astype(np.intp)
    return labels


def dominant_cluster(
    sim: np.ndarray, candidates: np.ndarray, labels: np.ndarray, support: np.ndarray | None = None
) -> tuple[int, int]:
    """(label, support) of the dominant cluster.

    The cluster with the most support wins: each candidate counts
    ``support[i]`` (itself plus the copies of it removed earlier: an answer
    several miners gave word for word is agreement), default 1. Ties are
    broken, in order, by the higher mean pairwise similarity inside the
    cluster (a tighter agreement), then by the lowest response index among its
    members (input order, which the validator controls and miners do not).
    """
    cand = np.asarray(candidates, dtype=np.intp)
    weight = np.ones(len(cand), dtype=np.int64) if support is None else np.asarray(support, dtype=np.int64)
    best_key: tuple[float, float, int] | None = None
    best, best_support = -1, 0
    for label in np.unique(labels):
        inside = labels == label
        members = cand[inside]
        pairs = pair_values(sim, members)
        tightness = float(pairs.mean()) if len(pairs) else 0.0
        total = int(weight[inside].sum())
        key = (-total, -tightness, int(members.min()))
        if best_key is None or key < best_key:
            best_key, best, best_support = key, int(label), total
    return best, best_support
