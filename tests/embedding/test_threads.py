"""The fast runtimes' thread count: the setting's, else one per core this process may run on."""

from __future__ import annotations

import os

import pytest

from embedding.side_by_side import SideBySideRuntime, usable_cores


@pytest.fixture(autouse=True)
def no_tokenizer(monkeypatch):
    """The runtime as constructed, without the tokenizer its base class loads (the model opens on first use)."""
    from embedding.windowed import WindowedEmbedder

    monkeypatch.setattr(WindowedEmbedder, "__init__", lambda self, *args, **kwargs: None)


def test_the_default_follows_the_process_affinity_not_the_machines_cores(monkeypatch):
    # pinned to one core of many (taskset, a container's cpuset): batches side by side on one core only queue
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert usable_cores() == 1
    assert SideBySideRuntime().threads == 1
    assert SideBySideRuntime(threads=4).threads == 4


def test_without_affinity_the_machines_cores_count(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert usable_cores() == 8 == SideBySideRuntime().threads
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert usable_cores() == 1
