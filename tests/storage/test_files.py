"""storage.files: the one atomic write and the one YAML / JSON-lines reader."""

from __future__ import annotations

import os
import stat

import pytest

from storage.files import FileFormatError, atomic_open, read_jsonl, read_yaml, write_atomic, write_text_atomic


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_write_atomic_creates_parents_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "x.json"
    write_atomic(target, b"old")
    assert target.read_bytes() == b"old"
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    write_text_atomic(target, "\u00e9t\u00e9")
    assert target.read_bytes() == "\u00e9t\u00e9".encode("utf-8")
    assert _leftovers(target.parent) == []


def test_write_atomic_sets_the_mode(tmp_path):
    target = tmp_path / "x"
    write_atomic(target, b"1")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # readable by a web server, unlike mkstemp's 0600
    write_atomic(target, b"2", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failed_replace_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "x.json"
    write_atomic(target, b"old")

    def boom(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk gone"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old" and _leftovers(tmp_path) == []


def test_an_error_while_writing_in_pieces_leaves_the_target_alone(tmp_path):
    target = tmp_path / "model.gguf"
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write(b"half of it")
            raise RuntimeError("bad part")
    assert not target.exists() and _leftovers(tmp_path) == []
    with atomic_open(target, fsync=False) as fh:
        fh.write(b"a")
        fh.write(b"b")
        assert not target.exists()  # nothing visible until the block ends
    assert target.read_bytes() == b"ab"


def test_temp_names_are_hidden_and_bounded_for_long_names(tmp_path, monkeypatch):
    seen = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (seen.append(os.path.basename(src)), real(src, dst)))
    write_atomic(tmp_path / ("n" * 200), b"x")
    assert seen[0].startswith(".") and seen[0].endswith(".tmp") and len(seen[0]) < 255


def test_read_yaml(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("a: 1\nb: [x, y]\n")
    assert read_yaml(path) == {"a": 1, "b": ["x", "y"]}
    assert read_yaml(path, "- 1\n") == [1]  # the text, when given, is what is parsed
    path.write_text("a: 1\nb: [x\nc: 2\n")
    with pytest.raises(FileFormatError) as info:
        read_yaml(path)
    assert str(path) in str(info.value) and "malformed YAML" in str(info.value) and info.value.line is not None
    with pytest.raises(FileFormatError):
        read_yaml(path, "!!python/object:os.system {}\n")  # safe_load: no objects built from a file


def test_read_jsonl(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n  \n[2]\n')
    assert read_jsonl(path) == [(1, {"a": 1}), (4, [2])]
    path.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(FileFormatError) as info:
        read_jsonl(path)
    assert info.value.line == 2 and f"{path}:2" in str(info.value)
    assert read_jsonl(path, "") == []
    with pytest.raises(FileFormatError, match=r"r.jsonl:1: expected a JSON object, got list"):
        read_jsonl(path, "[1]\n", objects=True)
    with pytest.raises(FileFormatError, match="cannot read"):
        read_jsonl(tmp_path / "missing.jsonl")
    with pytest.raises(FileFormatError, match="cannot read"):
        read_yaml(tmp_path / "missing.yaml")
    (tmp_path / "bom.jsonl").write_bytes(b'\xef\xbb\xbf{"a": 1}\n')
    assert read_jsonl(tmp_path / "bom.jsonl") == [(1, {"a": 1})]
