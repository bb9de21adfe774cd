"""Stored embeddings (``storage.embeddings``): exact round trip, stable bytes, the daemon's old files, clear errors."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from storage.embeddings import ARRAYS, StoredEmbeddings, decode_embeddings, encode_embeddings

OLD = Path(__file__).resolve().parents[1] / "golden" / "embeddings" / "round-000001.npz"  # written by np.savez


def arrays(n: int = 3, d: int = 8, seed: int = 0) -> StoredEmbeddings:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, d)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    counts = np.arange(1, n + 1, dtype=np.int32)
    return StoredEmbeddings(v, counts, counts * 5, counts * 4, "c" * 64, "sample: 4 windows")


def encode(e: StoredEmbeddings) -> bytes:
    return encode_embeddings(e, model_checksum=e.model_checksum, policy=e.policy)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_round_trip_is_exact_with_dtypes(n):
    e = arrays(n)
    back = decode_embeddings(encode(e))
    for name in ARRAYS:
        got, want = getattr(back, name), getattr(e, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    assert (back.model_checksum, back.policy) == (e.model_checksum, e.policy)


def test_the_same_embeddings_give_the_same_bytes():
    assert encode(arrays(seed=1)) == encode(arrays(seed=1)) != encode(arrays(seed=2))


def test_the_daemons_old_files_still_load_and_numpy_reads_the_new_ones():
    old = decode_embeddings(OLD.read_bytes())
    assert old.vectors.shape == (5, 384) and old.vectors.dtype == np.float32
    assert list(old.windows) == [1, 1, 1, 1, 0] and old.policy.startswith("sample")
    assert np.allclose(np.linalg.norm(old.vectors[:4], axis=1), 1.0, atol=1e-5) and not old.vectors[4].any()
    with np.load(io.BytesIO(encode(old)), allow_pickle=False) as z:
        assert sorted(z.files) == sorted((*ARRAYS, "meta")) and np.array_equal(z["vectors"], old.vectors)


def test_matches_needs_model_policy_and_size():
    e = arrays(3)
    assert e.matches("c" * 64, "sample: 4 windows", 3)
    assert not e.matches("d" * 64, "sample: 4 windows", 3)
    assert not e.matches("c" * 64, "full", 3)
    assert not e.matches("c" * 64, "sample: 4 windows", 4)


def _npz(**entries) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **entries)
    return buf.getvalue()


def _stored(meta: bytes, windows: int = 2) -> bytes:
    """Stored embeddings of two texts (three dimensions) with these meta bytes and ``windows`` window counts."""
    return _npz(
        vectors=np.zeros((2, 3)),
        windows=np.zeros(windows),
        tokens=np.zeros(2),
        embedded=np.zeros(2),
        meta=np.frombuffer(meta, np.uint8),
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not stored embeddings"),
        (b"not a zip file", "not stored embeddings"),
        (_npz(vectors=np.zeros((2, 3), np.float32)), "no 'windows' array"),
        (_stored(b"[1]"), "meta must hold"),
        (_stored(b'{"checksum": "c", "policy": "p"}', windows=3), "inconsistent shapes"),
        (_stored(b"\xff"), "not stored embeddings"),
    ],
)
def test_bad_bytes_are_refused_naming_the_source(data, message):
    with pytest.raises(ValueError, match=f"^rounds/r/embeddings.npz: .*{message}"):
        decode_embeddings(data, "rounds/r/embeddings.npz")


def test_a_pickled_array_is_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        entry = io.BytesIO()
        np.lib.format.write_array(entry, np.array([object()], dtype=object), allow_pickle=True)
        for name in (*ARRAYS, "meta"):
            zf.writestr(f"{name}.npy", entry.getvalue())
    with pytest.raises(ValueError):
        decode_embeddings(buf.getvalue())
