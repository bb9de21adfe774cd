"""The replay promise's comparison (tests.replay_tolerance): it tolerates another CPU's last bits and nothing more."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from storage.embeddings import encode_embeddings
from tests.replay_tolerance import differences, tree_differences


def test_the_comparison_tolerates_kernel_noise_and_nothing_more():
    assert (
        list(
            differences(
                {"a": 952170945, "t": "952,170,945 units"}, {"a": 952170952, "t": "952,170,952 units"}, "r", set()
            )
        )
        == []
    )
    assert list(differences({"a": 952170945}, {"a": 952180945}, "r", set())) == ["r.a: 952170945 -> 952180945"]
    assert list(differences({"n": 7}, {"n": 8}, "r", set())) == ["r.n: 7 -> 8"]
    assert list(differences({"t": "0.904 of 4"}, {"t": "0.904 of 5"}, "r", set())) != []
    assert list(differences({"t": "paid 4"}, {"t": "paid four"}, "r", set())) != []
    assert list(differences({"x": 0.5}, {"x": 0.5 + 1e-7}, "r", set())) == []
    assert list(differences({"x": 0.5}, {"x": 0.5001}, "r", set())) != []
    assert list(differences({"top_diff": 0.0386597}, {"top_diff": 0.0386615}, "r", set())) == []
    assert list(differences({"top_diff": 0.0386597}, {"top_diff": 0.0387}, "r", set())) != []


def test_a_small_number_keeps_the_absolute_error_of_the_models_floats():
    # r-0019's alignment on two EPYC generations: 3e-6 apart relatively, 1.4e-8 absolutely
    assert list(differences({"alignment": 0.004667886}, {"alignment": 0.004667872}, "r")) == []
    assert list(differences({"alignment": 0.004667886}, {"alignment": 0.004669}, "r")) != []
    assert list(differences({"flag": True}, {"flag": False}, "r")) == ["r.flag: True -> False"]
    assert list(differences({"reason": "copy"}, {"reason": "offtopic"}, "r")) != []


def stored(vectors: np.ndarray, tokens: list[int]) -> bytes:
    n = len(vectors)
    arrays = SimpleNamespace(
        vectors=vectors.astype(np.float32), windows=np.ones(n), tokens=np.array(tokens), embedded=np.ones(n, dtype=bool)
    )
    return encode_embeddings(arrays, model_checksum="sum", policy="policy")


def test_a_tree_compares_records_and_vectors_within_the_promise_and_other_files_by_bytes():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((3, 8))
    old = {
        "rounds/r/evaluation.json": b'{"score": 0.5, "reached": true}',
        "rounds/r/embeddings.npz": stored(vectors, [3, 4, 5]),
        "rounds/r/heatmap.png": b"\x89PNG a",
    }
    near = {
        "rounds/r/evaluation.json": b'{"score": 0.50000001, "reached": true}',
        "rounds/r/embeddings.npz": stored(vectors + 1e-8, [3, 4, 5]),
        "rounds/r/heatmap.png": b"\x89PNG a",
    }
    assert tree_differences(old, near) == []
    far = dict(near, **{"rounds/r/embeddings.npz": stored(vectors + 1e-4, [3, 4, 5])})
    assert tree_differences(old, far) == ["rounds/r/embeddings.npz: vectors differ by 0.0001"]
    other = dict(near, **{"rounds/r/heatmap.png": b"\x89PNG b", "rounds/r/evaluation.json": b'{"score": 0.5}'})
    assert tree_differences(old, other) == [
        "rounds/r/evaluation.json.reached: missing",
        "rounds/r/heatmap.png: other bytes",
    ]
    assert tree_differences(old, {**near, "summary.json": b"{}"}) == ["summary.json: new file"]
