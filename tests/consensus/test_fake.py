"""The fake embedder: deterministic, unit rows, similarity by shared words or declared groups."""

from __future__ import annotations

import numpy as np
import pytest

from consensus.embedder import Embedder
from consensus.errors import EmbeddingError
from consensus.fake import FakeEmbedder
from consensus.similarity import cosine_matrix


def test_is_an_embedder_with_unit_rows_and_zero_for_empty():
    fake: Embedder = FakeEmbedder(dim=64)
    out = fake.embed(["Paris is the capital.", "", "   ", "ok"])
    assert out.vectors.shape == (4, 64) and out.vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out.vectors[[0, 3]], axis=1), 1.0, rtol=1e-6)
    assert not out.vectors[1].any() and not out.vectors[2].any()
    assert out.windows.tolist() == [1, 0, 0, 1] and out.tokens.tolist() == [4, 0, 0, 1]
    assert out.embedded.tolist() == out.tokens.tolist()


def test_identical_texts_identical_vectors_in_any_order_and_instance():
    texts = ["a b c", "x y", "a b c", "Lists are mutable."]
    a = FakeEmbedder().embed(texts).vectors
    b = FakeEmbedder().embed(texts[::-1]).vectors[::-1]
    assert np.array_equal(a, b) and np.array_equal(a[0], a[2])
    assert not np.array_equal(FakeEmbedder(seed=1).embed(texts).vectors, a)


def test_words_mode_shared_words_are_close_unrelated_far():
    fake = FakeEmbedder()
    c = cosine_matrix(
        fake.embed(["Python lists are mutable", "python LISTS are mutable too", "banana bread with walnuts"]).vectors
    )
    assert c[0, 1] > 0.8 and abs(c[0, 2]) < 0.25
    text_mode = cosine_matrix(
        FakeEmbedder(mode="text").embed(["Python lists are mutable", "python LISTS are mutable too"]).vectors
    )
    assert abs(text_mode[0, 1]) < 0.25


@pytest.mark.parametrize("seed", range(5))
def test_groups_build_clusters(seed):
    groups = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B"}
    fake = FakeEmbedder(seed=seed, groups=groups, spread=0.1)
    c = cosine_matrix(fake.embed(list(groups) + ["loner"]).vectors)
    within = [c[0, 1], c[0, 2], c[1, 2], c[3, 4]]
    across = [c[i, j] for i in range(3) for j in (3, 4)] + [c[i, 5] for i in range(5)]
    assert min(within) > 0.97 and max(abs(x) for x in across) < 0.3


def test_group_labels_are_paths_sharing_their_topic():
    groups = {"s1": "au/sydney", "s2": "au/sydney", "c1": "au/canberra", "x": "python"}
    c = cosine_matrix(FakeEmbedder(groups=groups, spread=0.0).embed(list(groups)).vectors)
    assert c[0, 1] == pytest.approx(1.0, abs=1e-6)
    assert 0.4 < c[0, 2] < 0.6 and abs(c[0, 3]) < 0.25 and abs(c[2, 3]) < 0.25


def test_checksum_names_the_parameters():
    assert FakeEmbedder().checksum == FakeEmbedder().checksum
    assert FakeEmbedder().checksum != FakeEmbedder(groups={"a": "A"}).checksum
    assert FakeEmbedder().checksum != FakeEmbedder(dim=32).checksum


@pytest.mark.parametrize("kwargs", [{"dim": 1}, {"mode": "semantic"}, {"spread": -0.1}, {"spread": float("nan")}])
def test_bad_parameters_are_refused(kwargs):
    with pytest.raises(EmbeddingError):
        FakeEmbedder(**kwargs)
