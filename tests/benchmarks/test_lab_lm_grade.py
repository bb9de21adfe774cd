"""The LM's grade in the composite (a lab rule, benchmarks/lab/lm_grade.py): placed within the round, all or none."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.lab import LabConfig, extensions
from benchmarks.lab.lm_grade import placed, with_grade
from consensus.config import ConsensusConfig
from consensus.pipeline import decide
from consensus.signals import Signals
from consensus.types import Response, Round, ScoreParts


def test_placed_scales():
    grades = {0: 0.5, 1: 0.75, 2: 0.5, 3: 1.0}
    assert placed(grades, [0, 1, 2, 3], "minmax") == {0: 0.0, 1: 0.5, 2: 0.0, 3: 1.0}
    assert placed(grades, [0, 1, 2, 3], "rank") == pytest.approx({0: 1 / 6, 1: 2 / 3, 2: 1 / 6, 3: 1.0})
    assert placed(grades, [0, 1, 2, 3], "raw") == grades
    assert placed({0: 0.4, 1: 0.4}, [0, 1], "minmax") == {0: 1.0, 1: 1.0}  # no spread: nobody loses


def test_a_partly_graded_round_is_not_graded():
    assert placed({0: 0.5, 1: 0.75}, [0, 1, 2], "minmax") == {}
    assert placed({}, [], "minmax") == {}


def test_with_grade_blends_and_keeps_the_penalty():
    parts = ScoreParts(
        alignment=0.5, quality=0.5, confidence=0.5, bonus=0.0, penalty=0.5, weights=(0, 1, 0, 0), composite=20.0
    )
    out = with_grade(parts, 1.0, 0.25)
    assert out.composite == pytest.approx(0.75 * 20.0 + 0.25 * 100.0 * 0.5)


def _round():
    texts = [
        "Water boils at 100 degrees Celsius at sea level because its vapour pressure then equals the air's.",
        "At sea level water boils at 100 degrees Celsius, when vapour pressure matches atmospheric pressure.",
        "Water boils at 100 C at sea level; at altitude the lower pressure makes it boil cooler.",
        "Boiling happens at 100 degrees Celsius for water at sea level.",
    ]
    return Round(
        "r",
        "At what temperature does water boil at sea level and why?",
        tuple(Response(f"m{i}", t, 1.0) for i, t in enumerate(texts)),
    )


def _vectors(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    base = rng.normal(size=16)
    x = base + 0.1 * rng.normal(size=(n, 16))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_the_grade_moves_the_composite_only_with_the_lab_weight():
    r, x = _round(), _vectors(4)
    grades = {0: 1.0, 1: 0.5, 2: 0.5, 3: 0.0}
    off = decide(r, x, ConsensusConfig(), Signals())
    product = decide(r, x, ConsensusConfig(), Signals(lm_grade=grades))  # the product does not read the grade
    assert [a.score.composite for a in off.results] == [b.score.composite for b in product.results]
    hooks, config = extensions(LabConfig(lm_grade_weight=0.3, lm_grade_placing="raw"), ConsensusConfig())
    assert config == ConsensusConfig() and len(hooks.composite) == 1
    on = decide(r, x, config, Signals(lm_grade=grades), extensions=hooks)
    for before, after, g in zip(off.results, on.results, [1.0, 0.5, 0.5, 0.0]):
        assert after.score.composite == pytest.approx(with_grade(before.score, g, 0.3).composite)
    partial = decide(r, x, config, Signals(lm_grade={0: 1.0}), extensions=hooks)
    assert [a.score.composite for a in off.results] == [b.score.composite for b in partial.results]
