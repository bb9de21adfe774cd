"""Agreement between judges: Krippendorff's alpha and weighted Cohen's kappa (pure functions).

Ratings are an array of shape (n_judges, n_items) holding 1..5 or NaN where a
judge gave no verdict. An item is one (question, model) answer.

- Krippendorff's alpha, ordinal metric (answer_quality is an ordered scale),
  over every item rated by at least two judges; missing ratings are allowed.
- Cohen's kappa with quadratic weights for each pair of judges, over the
  items both rated; with more than two judges the mean over the pairs is
  reported as well.

Both are undefined (None) when there is nothing to compare or the ratings
do not vary at all (the expected disagreement is 0).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import krippendorff
import numpy as np

CATEGORIES = (1, 2, 3, 4, 5)


def krippendorff_alpha(
    ratings: np.ndarray, level: str = "ordinal", categories: Sequence[int] = CATEGORIES
) -> float | None:
    """Krippendorff's alpha of ``ratings`` (n_judges, n_items), NaN = missing."""

    data = np.asarray(ratings, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2:
        return None
    pairable = data[:, np.sum(~np.isnan(data), axis=0) >= 2]
    values = pairable[~np.isnan(pairable)]
    if values.size == 0 or np.unique(values).size < 2:
        return None
    return float(
        krippendorff.alpha(reliability_data=pairable, level_of_measurement=level, value_domain=list(categories))
    )


def weighted_kappa(
    a: Sequence[float], b: Sequence[float], categories: Sequence[int] = CATEGORIES, weights: str = "quadratic"
) -> float | None:
    """Cohen's kappa of two judges over the items both rated, with linear or quadratic disagreement weights."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("both judges must rate the same items")
    both = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[both], y[both]
    if x.size == 0:
        return None
    index = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    observed = np.zeros((k, k))
    for u, v in zip(x, y):
        observed[index[int(u)], index[int(v)]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.subtract.outer(np.arange(k), np.arange(k))
    if weights == "quadratic":
        w = grid.astype(float) ** 2 / (k - 1) ** 2
    elif weights == "linear":
        w = np.abs(grid).astype(float) / (k - 1)
    else:
        raise ValueError("weights must be 'linear' or 'quadratic'")
    chance = float((w * expected).sum())
    if chance == 0.0:
        return None
    return 1.0 - float((w * observed).sum()) / chance


def pairwise_kappas(ratings: np.ndarray, names: Sequence[str]) -> dict[tuple[str, str], float | None]:
    """Weighted kappa for every pair of judges (rows of ``ratings``)."""
    data = np.asarray(ratings, dtype=float)
    return {
        (names[i], names[j]): weighted_kappa(data[i], data[j])
        for i, j in itertools.combinations(range(data.shape[0]), 2)
    }


def mean_kappa(kappas: dict[tuple[str, str], float | None]) -> float | None:
    defined = [v for v in kappas.values() if v is not None]
    return float(np.mean(defined)) if defined else None
