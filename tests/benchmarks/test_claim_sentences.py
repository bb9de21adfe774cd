"""The lab's sentence-level claim similarity (benchmarks.claim_sentences): pure parts."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.claim_sentences import sentence_claim_similarity, sentences


def test_sentences_are_sentences_and_lines_with_words():
    assert sentences("Cool it. Cover it!\n- **Ice**: no\n| 1 | 2 |") == ["Cool it.", "Cover it!", "- **Ice**: no"]


def test_each_claim_takes_its_best_sentence():
    claims = np.array([[1.0, 0.0], [0.0, 1.0]])
    parts = np.array([[1.0, 0.0], [0.6, 0.8]])
    assert sentence_claim_similarity(claims, parts) == pytest.approx((1.0 + 0.8) / 2)
    assert sentence_claim_similarity(claims, np.zeros((0, 2))) == 0.0
