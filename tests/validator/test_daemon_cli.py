"""`validator round` and `validator daemon` against real loopback miners; kill -9 and restart."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lm.config import Secret
from minerpool import MinerPool, SimMiner
from storage import keys
from storage.local import LocalStore
from validator.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-miner-key-that-must-never-leak-0123456789"
TEXTS = (
    "Yes. Python lists are mutable: elements can be changed, appended and removed in place.",
    "Yes, Python lists are mutable, so you can modify their elements after creating them.",
    "Yes - a list in Python is a mutable sequence; items may be reassigned, added or deleted.",
    "Yes. Lists are mutable in Python (unlike tuples), so they can be modified in place.",
)


def pool_and_file(tmp_path, delay_s=0.0):
    miners = [
        SimMiner(f"honest-{i}", "canned", text=t, api_key=Secret(KEY), delay_s=delay_s, logprob=-0.2)
        for i, t in enumerate(TEXTS)
    ]
    miners += [SimMiner("broken", "http500", api_key=Secret(KEY)), SimMiner("blank", "empty", api_key=Secret(KEY))]
    pool = MinerPool(miners).start()
    lines = []
    for m in miners:
        lines += [
            "[[miner]]",
            f'hotkey = "{m.name}"',
            f'base_url = "{pool.base_url(m.name)}"',
            'model = "m"',
            'api_key_env = "TEST_MINER_KEY"',
            "",
        ]
    path = tmp_path / "miners.toml"
    path.write_text("\n".join(lines))
    return pool, path


def pool_daemon_args(store, miners, rounds: int | None = None) -> list[str]:
    """``validator daemon``'s arguments on the miners file ``miners`` (a test pool), without the LM, no pause
    between rounds, metrics off; ``--rounds`` when given."""
    args = [
        "daemon",
        "--store",
        str(store),
        "--miners",
        str(miners),
        "--no-lm",
        "--interval",
        "0",
        "--metrics-port",
        "-1",
    ]
    return args + (["--rounds", str(rounds)] if rounds is not None else [])


@pytest.fixture
def network(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_MINER_KEY", KEY)
    # the committees' secret orders the prompts: this one asks the built-in prompts in file order, the first
    # (list mutability) being what these miners answer (found by trying secrets in turn)
    monkeypatch.setenv("VALIDATOR_COMMITTEE_SECRET", "daemon-cli-test-secret-7")
    monkeypatch.setenv(
        "VALIDATOR_TASKS__ENABLED", "false"
    )  # the built-in prompts (tests/validator/test_task_rounds.py)
    pool, path = pool_and_file(tmp_path)
    with pool:
        yield path


def all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_round_prints_a_readable_summary(network, capsys, caplog):
    code = main(["round", "--prompt", "Is Python's list type mutable?", "--miners", str(network), "--no-lm"])
    out = capsys.readouterr().out
    assert code == 0
    assert "consensus" in out and "honest-0" in out and "http_error" in out and "empty" in out
    assert "HTTP 500" in out
    assert KEY not in out and KEY not in caplog.text


def test_daemon_runs_rounds_into_a_store_without_leaking_keys(network, tmp_path, capsys, caplog):
    store_dir = tmp_path / "rounds"
    code = main(pool_daemon_args(store_dir, network, rounds=2))
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("round-00000") >= 2 and "weight" in out
    store = LocalStore(store_dir)
    ledger = json.loads(store.get(keys.ledger()))
    assert ledger["last_sequence"] == 2 and sum(ledger["weights"].values()) == pytest.approx(1.0)
    record = json.loads(store.get(keys.evaluation("round-000001")))
    by_miner = {r["miner"]: r for r in record["responses"]}
    assert by_miner["broken"]["error"] == "http_error" and by_miner["blank"]["error"] == "empty"
    assert by_miner["honest-0"]["confidence"] == pytest.approx(0.8187, abs=1e-3)  # exp(-0.2)
    assert KEY.encode() not in all_bytes(store_dir) and KEY not in out and KEY not in caplog.text


def test_missing_key_variable_is_a_clear_error_at_start(network, monkeypatch, capsys):
    monkeypatch.delenv("TEST_MINER_KEY")
    code = main(["daemon", "--rounds", "1", "--store", "x", "--miners", str(network), "--no-lm"])
    assert code == 2 and "TEST_MINER_KEY" in capsys.readouterr().err


def test_metrics_endpoint_serves_prometheus_text(network, tmp_path):
    from validator.daemon.prometheus import Metrics

    metrics = Metrics()
    _, port = metrics.serve(0)
    try:
        metrics.failures.labels(reason="timeout").inc()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        metrics.close()
    assert 'validator_miner_failures_total{reason="timeout"} 1.0' in body


def wait_for_rounds(proc: subprocess.Popen, n: int) -> None:
    """Read a daemon's output until ``n`` rounds are finished: their lines ("round-000001  ok  miners ..."), not
    the progress lines ("round-000001: ...")."""
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        seen += re.match(r"round-\d+\s{2}", line) is not None
        if seen == n:
            return


def ledger_adds_up(store: LocalStore) -> int:
    """The ledger's count of rounds, after checking that it is each stored round once: every miner's emissions
    are the sum of what the records paid it, the total what they emitted."""
    ledger = json.loads(store.get(keys.ledger()))
    n = ledger["last_sequence"]
    assert n == ledger["rounds"]
    records = [json.loads(store.get(keys.evaluation(f"round-{i:06d}"))) for i in range(1, n + 1)]
    assert ledger["emitted"] == sum(r["emissions"]["total"] for r in records)
    for miner, totals in ledger["miners"].items():
        paid = sum(x["emissions"]["amount"] for r in records for x in r["responses"] if x["miner"] == miner)
        assert totals["emissions"] == paid and totals["rounds"] == n
    return n


@pytest.mark.slow
def test_kill_9_mid_round_then_restart_keeps_the_ledger_exact(tmp_path):
    env = {**os.environ, "TEST_MINER_KEY": KEY, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    pool, path = pool_and_file(tmp_path, delay_s=1.5)  # every round waits 1.5 s for its miners
    store_dir = tmp_path / "rounds"
    cmd = [sys.executable, "-m", "validator", *pool_daemon_args(store_dir, path)]
    with pool:
        proc = subprocess.Popen(
            cmd + ["--rounds", "50"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=tmp_path, text=True
        )
        wait_for_rounds(proc, 2)
        time.sleep(0.7)  # inside round 3's miner query
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        done = subprocess.run(
            cmd + ["--rounds", "2"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
        )
    assert done.returncode == 0, done.stdout + done.stderr
    store = LocalStore(store_dir)
    n = ledger_adds_up(store)
    assert n >= 4
    assert not store.exists(keys.evaluation(f"round-{n + 1:06d}"))


def test_embedded_lm_defaults_to_the_template_narrative_a_server_or_a_config_to_the_lms(tmp_path, monkeypatch):
    import argparse

    from validator.cli.common import LM_DEFAULT, load

    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.delenv("SERVER_URL", raising=False)
    monkeypatch.delenv("VALIDATOR_LM_CLIENT_SERVER_URL", raising=False)
    args = argparse.Namespace(config=None, lm=None)
    embedded, _ = load(args, defaults=LM_DEFAULT)
    assert embedded.lm.enabled and not embedded.lm.narrative
    assert load(args)[0].lm.narrative  # other commands: the setting's own default
    config = tmp_path / "v.toml"
    config.write_text("[lm]\nnarrative = true\n")
    assert load(argparse.Namespace(config=str(config), lm=None), defaults=LM_DEFAULT)[0].lm.narrative
    monkeypatch.setenv("SERVER_URL", "http://127.0.0.1:9/v1")
    assert load(args, defaults=LM_DEFAULT)[0].lm.narrative


def test_the_same_relative_store_in_two_checkouts_has_two_state_directories(tmp_path, monkeypatch):
    """`--store runs/daemon` from two directories: two stores, so two local ledger copies (a shared one made
    the second checkout's daemon refuse to start: "ledger.json is missing from the store but ... exists")."""
    from validator.app import daemon_store
    from validator.settings import load_settings

    settings = load_settings(None, env={"VALIDATOR_PATHS__CACHE_DIR": str(tmp_path / "cache")}, dotenv_path=None)
    states = []
    for checkout in ("one", "two"):
        (tmp_path / checkout).mkdir()
        monkeypatch.chdir(tmp_path / checkout)
        states.append(daemon_store("runs/daemon", settings)[1])
    assert states[0] != states[1]
    monkeypatch.chdir(tmp_path / "one")
    assert daemon_store(str(tmp_path / "one" / "runs" / "daemon"), settings)[1] == states[0]  # same directory
