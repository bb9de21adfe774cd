"""Windowing, batching and pooling of the embedding edge: pure functions, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from consensus.embedder import LongTextPolicy
from consensus.errors import EmbeddingError
from embedding.windows import (
    combine_windows,
    mean_pool,
    pack_batches,
    pad_batch,
    plan_windows,
    sample_windows,
    text_windows,
)


def test_plan_windows_balanced_and_complete():
    assert plan_windows(0, 254) == []
    assert plan_windows(1, 254) == [(0, 1)]
    assert plan_windows(254, 254) == [(0, 254)]
    assert plan_windows(255, 254) == [(0, 128), (128, 255)]
    for n in (1, 253, 254, 255, 508, 509, 4000):
        w = plan_windows(n, 254)
        assert w[0][0] == 0 and w[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(w, w[1:]))
        sizes = [b - a for a, b in w]
        assert max(sizes) <= 254 and max(sizes) - min(sizes) <= 1


def test_sample_windows_span_the_text_and_are_stable():
    policy = LongTextPolicy(token_budget=256, sample_window=62)
    spans = sample_windows(4000, policy, b"text-hash")
    assert len(spans) == 4 and all(b - a == 62 for a, b in spans)
    strata = [(round(i * 4000 / 4), round((i + 1) * 4000 / 4)) for i in range(4)]
    assert all(lo <= a and b <= hi for (a, b), (lo, hi) in zip(spans, strata))
    assert sample_windows(4000, policy, b"text-hash") == spans  # same text, same windows
    assert sample_windows(4000, LongTextPolicy(seed=7), b"text-hash") != spans
    assert sample_windows(4000, policy, b"other-text") != spans
    short = sample_windows(200, policy, b"k")  # strata shorter than a window are taken whole
    assert short[0] == (0, 50) and short[-1][1] == 200


def test_policy_is_checked():
    with pytest.raises(EmbeddingError, match="mode"):
        LongTextPolicy(mode="truncate")
    with pytest.raises(EmbeddingError, match="sample_window"):
        LongTextPolicy(token_budget=10, sample_window=20)


@pytest.mark.parametrize("mode", ["sample", "full"])
def test_text_windows_wrap_every_window_in_cls_and_sep(mode):
    policy = LongTextPolicy(mode=mode, token_budget=8, sample_window=4)
    short = text_windows("s", [5, 6, 7], policy, 10, 101, 102)
    assert short == [[101, 5, 6, 7, 102]]  # fits one window: whole, whatever the mode
    ids = list(range(1000, 1025))
    long = text_windows("a long text", ids, policy, 10, 101, 102)
    assert all(w[0] == 101 and w[-1] == 102 for w in long)
    inner = [t for w in long for t in w[1:-1]]
    if mode == "full":
        assert inner == ids and len(long) == 3
    else:
        assert len(long) == 2 and all(len(w) == 6 for w in long) and set(inner) <= set(ids)
        assert long == text_windows("a long text", ids, policy, 10, 101, 102)
    assert text_windows("", [], policy, 10, 101, 102) == []


def test_pack_batches_respects_the_budget_and_ignores_arrival_order():
    assert pack_batches([], 10) == []
    assert pack_batches([5, 3, 5, 2], 10) == [[3, 1], [0, 2]]
    assert pack_batches([50], 10) == [[0]]  # too long for the budget: a batch of its own
    lengths = [7, 3, 12, 3, 9, 1, 30, 4]
    batches = pack_batches(lengths, 24)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 24
    reordered = pack_batches(lengths[::-1], 24)
    n = len(lengths)
    as_lengths = [[lengths[n - 1 - i] for i in b] for b in reordered]
    assert as_lengths == [[lengths[i] for i in b] for b in batches]


def test_pad_batch_left_aligns_and_masks():
    ids, mask = pad_batch([[1, 2, 3], [4]])
    assert ids.dtype == np.int64 and mask.dtype == np.int64
    assert ids.tolist() == [[1, 2, 3], [4, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]


def test_mean_pool_ignores_padding_and_gives_unit_rows():
    hidden = np.array([[[3.0, 0.0], [0.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    pooled = mean_pool(hidden, np.array([[1, 1, 0]]))
    np.testing.assert_allclose(pooled, [[0.6, 0.8]], rtol=1e-6)
    assert pooled.dtype == np.float32


def test_combine_windows_weighs_by_word_pieces():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    v, pieces = combine_windows(vectors, [[0, 1, 1, 1, 0], [0, 1, 0]])  # 3 pieces and 1 piece
    assert pieces == 4
    np.testing.assert_allclose(v, np.array([3.0, 1.0]) / np.sqrt(10), rtol=1e-6)
    assert v.dtype == np.float32
