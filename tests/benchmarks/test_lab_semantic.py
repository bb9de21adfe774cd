"""Sentence coverage (the lab's, benchmarks/lab/semantic.py) and its way into the composite: toy vectors checked
by hand."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.lab import LabConfig, extensions
from benchmarks.lab.semantic import sentence_coverage_matrix
from consensus import ConsensusConfig, decide
from consensus.types import Response, Round
from emissions import allocate

E = np.eye(4)


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_soft_recall_hand_checked():
    # answer 0 says a and b; answer 1 says a, b, c, d; answer 2 says nothing
    sentences = [E[[0, 1]], E[[0, 1, 2, 3]], np.zeros((0, 4))]
    share = sentence_coverage_matrix(sentences)
    assert share[0, 1] == pytest.approx(0.5)  # 0 covers two of 1's four sentences
    assert share[1, 0] == pytest.approx(1.0)
    assert np.diag(share)[:2] == pytest.approx([1.0, 1.0])
    assert not share[2].any() and not share[:, 2].any()


def test_soft_recall_counts_the_best_cosine_and_the_floor_rescales_it():
    sentences = [np.array([unit(1, 1, 0, 0)]), E[[0, 2]]]  # cos 0.707 to e0, 0 to e2
    soft = sentence_coverage_matrix(sentences)
    assert soft[0, 1] == pytest.approx((np.sqrt(0.5) + 0.0) / 2)
    floored = sentence_coverage_matrix(sentences, floor=0.5)
    assert floored[0, 1] == pytest.approx((np.sqrt(0.5) - 0.5) / 0.5 / 2)
    strict = sentence_coverage_matrix(sentences, threshold=0.8)
    assert strict[0, 1] == 0.0
    assert sentence_coverage_matrix(sentences, threshold=0.7)[0, 1] == pytest.approx(0.5)


def test_negative_cosines_count_as_nothing_and_input_is_not_modified():
    sentences = [np.array([-E[0]]), E[[0]]]
    before = [s.copy() for s in sentences]
    share = sentence_coverage_matrix(sentences)
    assert share[0, 1] == 0.0
    assert all(np.array_equal(a, b) for a, b in zip(sentences, before))


def test_no_sentences_at_all():
    assert sentence_coverage_matrix([np.zeros((0, 4))] * 3).shape == (3, 3)
    assert sentence_coverage_matrix([]).shape == (0, 0)


TEXTS = [
    "Paris is the capital of France and its largest city by far.",
    "The capital of France is Paris, on the Seine river in the north.",
    "France's capital is Paris; the president and parliament sit there too.",
]


def _round() -> tuple[Round, np.ndarray]:
    rng = np.random.default_rng(0)
    h = rng.normal(size=16)
    vectors = np.array([h + 0.2 * rng.normal(size=16) for _ in TEXTS], np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return Round(
        "r", "What is the capital of France?", tuple(Response(f"m{k}", t, 1.0) for k, t in enumerate(TEXTS))
    ), vectors


def test_the_quality_part_blends_words_and_sentences():
    round_, vectors = _round()
    # answer 0 says everything the others say, sentence by sentence; 1 and 2 say only half of 0's
    sentences = [E[[0, 1, 2]], E[[0, 1]], E[[0, 2]]]
    words_only = decide(round_, vectors)
    by_text = {t: s for t, s in zip(TEXTS, sentences)}
    hooks, config = extensions(
        LabConfig(coverage_semantic=0.5), ConsensusConfig(), lambda texts: [by_text[t] for t in texts]
    )
    blended = decide(round_, vectors, config, extensions=hooks)
    share = sentence_coverage_matrix(sentences)
    for i in range(3):
        by_sentences = np.mean([share[i, j] for j in range(3) if j != i])
        expected = 0.5 * words_only.results[i].score.quality + 0.5 * by_sentences
        assert blended.results[i].score.quality == pytest.approx(expected)
    assert blended.results[0].score.quality > blended.results[1].score.quality
    al = allocate(round_, blended)
    assert sum(al.amounts) == al.pool


def test_sentence_coverage_needs_the_sentences():
    with pytest.raises(ValueError, match="sentence"):
        extensions(LabConfig(coverage_semantic=0.5), ConsensusConfig())
