"""The lab's one embedding cache (benchmarks.data.VectorCache): texts, sentences and older cache files alike."""

from __future__ import annotations

import numpy as np

from benchmarks import data
from benchmarks.data import CachedEmbedder, VectorCache
from consensus.fake import FakeEmbedder
from validator.settings import load_settings


class Counting(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen += list(texts)
        return super().embed(texts)


def test_each_text_is_embedded_once_and_a_second_cache_reads_the_file(tmp_path, monkeypatch):
    model = Counting()
    monkeypatch.setattr(data, "load_embedder", lambda settings: model)
    settings = load_settings(None, env={}, dotenv_path=None)
    cache = VectorCache(tmp_path, settings)
    first = CachedEmbedder(cache).embed(["a b", "c d", "a b"])
    assert first.vectors.shape == (3, 384) and sorted(model.seen) == ["a b", "c d"]
    again = VectorCache(tmp_path, settings).get(["c d", "a b"])  # from the file: the model is not asked
    assert np.array_equal(again, first.vectors[[1, 0]]) and len(model.seen) == 2
    parts = cache.sentences(["One thing. Another thing.", "a b"])
    assert [p.shape for p in parts] == [(2, 384), (1, 384)] and np.array_equal(parts[1][0], first.vectors[0])


def test_a_long_run_writes_at_its_checkpoints_and_an_older_file_is_adopted(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    settings = load_settings(None, env={}, dotenv_path=None)
    cache = VectorCache(tmp_path, settings, autosave=False)
    cache.get(["x y"])
    assert not cache.path.exists()
    cache.save()
    assert cache.path.is_file()
    old = tmp_path / "old" / "vectors.npz"  # the network's layout before: keys and vectors
    old.parent.mkdir()
    np.savez(old, keys=np.array([VectorCache.key("z")]), vectors=np.ones((1, 384), np.float32))
    assert cache.adopt(old) == 1 and cache.adopt(old) == 0
    assert np.array_equal(cache.get(["z"]), np.ones((1, 384), np.float32))
