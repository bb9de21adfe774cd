"""`validator round` points its narrative at a heatmap only when it stores one."""

from __future__ import annotations

import json

from storage import keys
from storage.local import LocalStore
from tests.validator.test_daemon_cli import network  # noqa: F401  (the loopback miners fixture)
from validator.cli.main import main

PROMPT = "Is Python's list type mutable?"


def test_without_store_no_heatmap_is_named(network, capsys):  # noqa: F811
    assert main(["round", "--prompt", PROMPT, "--miners", str(network), "--no-lm"]) == 0
    out = capsys.readouterr().out
    assert "consensus" in out and "heatmap" not in out.lower() and "of the pool's" in out


def test_with_store_the_named_heatmap_exists(network, tmp_path, capsys):  # noqa: F811
    store_dir = tmp_path / "rounds"
    assert main(["round", "--prompt", PROMPT, "--miners", str(network), "--no-lm", "--store", str(store_dir)]) == 0
    store = LocalStore(store_dir)
    [key] = [k for k in store.list("rounds/") if k.endswith("evaluation.json")]
    record = json.loads(store.get(key))
    assert record["heatmap"]["key"] and store.exists(record["heatmap"]["key"])
    assert record["heatmap"]["key"] == keys.heatmap(record["round_id"])
    assert "heatmap" in record["narrative"]["text"].lower()
