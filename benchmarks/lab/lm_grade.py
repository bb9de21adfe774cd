"""The LM's grade in the composite (issue 38), measured and not shipped: each scored answer's grade, placed in its round.

``Signals.lm_grade`` holds every scored answer's grade in [0, 1] (``benchmarks.lm_grade_scorer``: SelectIT's
expected rating (r - 1) / 4), given by the edge only when the LM graded every answer the round
scores. The composite then becomes ``(1 - w) * composite + w * 100 * g * (1 - penalty)``, ``g`` the
grade placed within the round (``--lab lm_grade_placing``): a small LM's ratings crowd between
2.5 and 4, and what tells answers apart is their order. An answer that earns nothing (empty,
failed, copy, addressed to the evaluator) is not graded; the out-of-consensus penalty still applies.

In the lab (``--lab lm_grade_weight=W``), not the product: on the rated development and wide rounds no weight
beat today's pay with an interval that excludes 0 (benchmarks/journal/validity.md, "LM grades"). The rating itself (``lm.grade``
and the cache ``benchmarks/lm_grades/``, filled by ``python -m benchmarks.lm_grades rate``) stays, the measured tool;
the round stage that graded live (``validator.grading``, ``[lm] grade``) was retired in commit 663e260 (2026-11-26) (issue 34).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from consensus.extensions import Composite
from consensus.types import ScoreParts

if TYPE_CHECKING:
    from consensus.context import Context


def placed(grades: Mapping[int, float], scored: Sequence[int], scale: str) -> dict[int, float]:
    """The grades of the ``scored`` answers in [0, 1] (``scale``: "minmax", "rank" or "raw"); {} when any
    scored answer has none (a partly graded round is not graded: the rest would be guessed)."""
    if not scored or any(i not in grades for i in scored):
        return {}
    values = np.array([float(np.clip(grades[i], 0.0, 1.0)) for i in scored])
    if scale == "raw":
        out = values
    elif scale == "rank":
        order = values.argsort(kind="mergesort")
        ranks = np.empty(len(values))
        ranks[order] = np.arange(len(values), dtype=np.float64)
        for v in np.unique(values):  # ties share their mean rank
            ranks[values == v] = ranks[values == v].mean()
        out = ranks / (len(values) - 1) if len(values) > 1 else np.ones(1)
    else:
        lo, hi = float(values.min()), float(values.max())
        out = (values - lo) / (hi - lo) if hi - lo > 1e-12 else np.ones(len(values))
    return {i: float(v) for i, v in zip(scored, out)}


def with_grade(parts: ScoreParts, grade: float, weight: float) -> ScoreParts:
    """``(1 - weight) * composite + weight * 100 * grade * (1 - penalty)``."""
    composite = (1.0 - weight) * parts.composite + weight * 100.0 * float(np.clip(grade, 0.0, 1.0)) * (
        1.0 - parts.penalty
    )
    return dataclasses.replace(parts, composite=composite)


def grade_rule(weight: float, scale: str) -> Composite:
    """The ``consensus.extensions`` composite hook that blends the round's ``Signals.lm_grade`` at ``weight``."""

    def blend(ctx: Context, parts: Mapping[int, ScoreParts]) -> dict[int, ScoreParts]:
        grades = placed(ctx.signals.lm_grade or {}, sorted(parts), scale)
        return {i: with_grade(p, grades[i], weight) if i in grades else p for i, p in parts.items()}

    return blend
