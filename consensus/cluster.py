"""Agglomerative clustering on the round's cosine distances and the dominant cluster."""

from __future__ import annotations

import numpy as np

from consensus.similarity import distances, pair_values


def cluster_labels(sim: np.ndarray, candidates: np.ndarray, *, linkage: str, distance: float) -> np.ndarray:
    """Cluster labels (one per candidate) from agglomerative clustering.

    Uses the precomputed distance matrix 1 - cosine; merging stops at
    ``distance``. With fewer than two candidates every candidate is its own
    cluster 0.
    """
    from sklearn.cluster import AgglomerativeClustering

    cand = np.asarray(candidates, dtype=np.intp)
    if len(cand) < 2:
        return np.zeros(len(cand), dtype=np.intp)
    model = AgglomerativeClustering(n_clusters=None, metric="precomputed", linkage=linkage,
                                    distance_threshold=distance)
    return model.fit_predict(distances(sim[np.ix_(cand, cand)])).astype(np.intp)


def dominant_cluster(sim: np.ndarray, candidates: np.ndarray, labels: np.ndarray) -> int:
    """Label of the dominant cluster.

    The largest cluster wins. Ties are broken, in order, by the higher mean
    pairwise similarity inside the cluster (a tighter agreement), then by the
    lowest response index among its members (input order, which the validator
    controls and miners do not).
    """
    cand = np.asarray(candidates, dtype=np.intp)
    best_key: tuple[float, float, int] | None = None
    best = -1
    for label in np.unique(labels):
        members = cand[labels == label]
        pairs = pair_values(sim, members)
        tightness = float(pairs.mean()) if len(pairs) else 0.0
        key = (-len(members), -tightness, int(members.min()))
        if best_key is None or key < best_key:
            best_key, best = key, int(label)
    return best
