import os

import pytest

from storage import KeyNotFound, LocalStore, MemoryStore, open_store


@pytest.fixture(params=["local", "memory"])
def store(request, tmp_path):
    return LocalStore(tmp_path / "s") if request.param == "local" else MemoryStore()


def test_put_get_exists_list(store):
    assert store.list() == [] and not store.exists("a/b.json")
    store.put("a/b.json", b"1", "application/json")
    store.put("a/c.png", b"\x89PNG", "image/png")
    store.put("z.json", b"2")
    assert store.get("a/b.json") == b"1" and store.exists("a/c.png")
    assert store.list() == ["a/b.json", "a/c.png", "z.json"]
    assert store.list("a/") == ["a/b.json", "a/c.png"]
    store.put("a/b.json", b"new")
    assert store.get("a/b.json") == b"new"


def test_missing_key(store):
    with pytest.raises(KeyNotFound):
        store.get("nope.json")


def test_unsafe_key_refused(store):
    with pytest.raises(ValueError):
        store.put("../escape", b"x")


def test_local_write_is_atomic_and_leaves_no_temp_files(tmp_path, monkeypatch):
    store = LocalStore(tmp_path)
    store.put("k/v.json", b"old")
    real_replace = os.replace

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.put("k/v.json", b"new")
    monkeypatch.setattr(os, "replace", real_replace)
    assert store.get("k/v.json") == b"old"
    assert sorted(p.name for p in (tmp_path / "k").iterdir()) == ["v.json"]


def test_open_store(tmp_path):
    assert isinstance(open_store(str(tmp_path)), LocalStore)
    assert isinstance(open_store("memory://"), MemoryStore)
    with pytest.raises(ValueError, match="unsupported"):
        open_store("ftp://x")
