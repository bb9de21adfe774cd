"""The embedded LM's thread count: the setting's, else one per core this process may run on."""

from __future__ import annotations

import os

import pytest

from lm import embedded
from lm.config import LMConfig
from lm.embedded import LocalServer, usable_cores


def test_the_default_follows_the_process_affinity_not_the_machines_cores(monkeypatch, tmp_path):
    # pinned to one core of many (taskset, a container's cpuset): two spinning threads on one core were
    # 2.9 times slower than one (benchmarks.lm_threads, docs/performance.md)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert usable_cores() == 1
    assert LocalServer(cache_dir=tmp_path).threads == 1
    assert LocalServer(cache_dir=tmp_path, threads=4).threads == 4


def test_without_affinity_the_machines_cores_count(monkeypatch, tmp_path):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert usable_cores() == 8
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert usable_cores() == 1


@pytest.mark.parametrize(("setting", "threads"), [(0, 2), (1, 1), (3, 3)])
def test_the_setting_decides_and_0_means_the_usable_cores(monkeypatch, tmp_path, setting, threads):
    monkeypatch.setattr(embedded, "usable_cores", lambda: 2)
    config = LMConfig(local_cache_dir=str(tmp_path), local_threads=setting)
    assert LocalServer.for_config(config).threads == threads
