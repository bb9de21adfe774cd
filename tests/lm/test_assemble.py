"""Assembling a model file from its parts: verified, and announced on stderr (fast: tiny fake parts)."""

from __future__ import annotations

import hashlib

import pytest

import lm.embedded as local
from lm.errors import LocalServerError


def tiny_model(tmp_path, monkeypatch, corrupt: bool = False):
    parts = {"part_a": b"GGUF" + b"a" * 100, "part_b": b"b" * 50}
    for name, data in parts.items():
        (tmp_path / name).write_bytes(data)
    monkeypatch.setattr(local, "part_path", lambda package: tmp_path / package)
    whole = b"".join(parts.values())
    sha = {k: hashlib.sha256(v).hexdigest() for k, v in parts.items()}
    if corrupt:
        sha["part_b"] = "0" * 64
    return local.LocalModel(
        name="tiny", parts=tuple(sha.items()), sha256=hashlib.sha256(whole).hexdigest(), size=len(whole), origin="test"
    ), whole


def test_assembly_is_announced_once_and_verified(tmp_path, monkeypatch, capsys):
    model, whole = tiny_model(tmp_path, monkeypatch)
    path = local.assemble(model, cache_dir=tmp_path / "cache")
    assert path.read_bytes() == whole
    err = capsys.readouterr().err
    assert "assembling the model file tiny" in err and "GB" in err and "model file ready" in err
    local.assemble(model, cache_dir=tmp_path / "cache")  # cached: nothing to say
    assert capsys.readouterr().err == ""


def test_a_bad_part_refuses_and_leaves_no_model(tmp_path, monkeypatch):
    model, _ = tiny_model(tmp_path, monkeypatch, corrupt=True)
    with pytest.raises(LocalServerError, match="part sha256"):
        local.assemble(model, cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache" / "models").glob("*.gguf"))
