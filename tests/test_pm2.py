"""deploy/pm2/ecosystem.config.js: the daemon started and stopped under a real pm2 (npm's pm2, installed by .ci/run).

The daemon runs with the production arguments of the ecosystem file and a fast configuration from the environment
pm2 hands it: the LM off, no pause between rounds, a tiny loopback miner pool (tests/validator/test_daemon_cli.py's),
its own PM2_HOME so the machine's pm2 (if any) is not touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storage import keys
from storage.local import LocalStore
from tests.validator.test_daemon_cli import KEY, ledger_adds_up, pool_and_file

ROOT = Path(__file__).resolve().parents[1]
ECOSYSTEM = ROOT / "deploy" / "pm2" / "ecosystem.config.js"
pm2_installed = pytest.mark.skipif(
    shutil.which("pm2") is None, reason="pm2 not installed (npm install -g pm2; .ci/run)"
)


def pm2(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["pm2", *args], env=env, capture_output=True, text=True, timeout=120)


def status(env: dict[str, str]) -> dict:
    listed = json.loads(pm2(env, "jlist").stdout or "[]")
    return next((app for app in listed if app["name"] == "validator"), {})


def test_the_ecosystem_file_runs_the_daemon_as_the_unit_does():
    text = ECOSYSTEM.read_text()
    unit = (ROOT / "deploy" / "validator.service").read_text()
    assert '"daemon", "--store"' in text and 'interpreter: "none"' in text
    assert 'VALIDATOR_CHAIN__STARTUP_WAIT_S: "0"' in text and "VALIDATOR_CHAIN__STARTUP_WAIT_S=0" in unit
    assert "stop_exit_codes: [0, 2]" in text and "RestartPreventExitStatus=2" in unit  # 2: no restart
    timeout = int(text.split("kill_timeout: ")[1].split(",")[0]) // 1000
    assert timeout == int(unit.split("TimeoutStopSec=")[1].split()[0])  # as long to finish a round


@pytest.mark.slow
@pm2_installed
def test_pm2_starts_the_daemon_and_stops_it_after_its_round(tmp_path):
    validator = Path(sys.executable).with_name("validator")
    if not validator.exists():
        pytest.skip(f"no validator script beside {sys.executable}")
    pool, miners = pool_and_file(tmp_path)
    env = {
        **os.environ,
        "PM2_HOME": str(tmp_path / "pm2"),
        "VALIDATOR_BIN": str(validator),
        "VALIDATOR_HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "TEST_MINER_KEY": KEY,
        "VALIDATOR_COMMITTEE_SECRET": "daemon-cli-test-secret-7",
        "VALIDATOR_DAEMON__MINERS_FILE": str(miners),
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_DAEMON__METRICS_PORT": "0",
        "VALIDATOR_LM__ENABLED": "false",
        "VALIDATOR_CACHE_DIR": str(tmp_path / "cache"),
    }
    store = tmp_path / "rounds"
    try:
        with pool:
            started = pm2(env, "start", str(ECOSYSTEM))
            assert started.returncode == 0, started.stdout + started.stderr
            deadline = time.monotonic() + 300
            while not LocalStore(store).exists(keys.evaluation("round-000002")):
                app = status(env)
                assert app.get("pm2_env", {}).get("status") == "online", pm2(env, "logs", "--nostream").stdout
                assert time.monotonic() < deadline, "no second round within 5 minutes"
                time.sleep(1)
            app = status(env)
            assert app["pm2_env"]["restart_time"] == 0 and app["pm2_env"]["pm_cwd"] == str(tmp_path)
            stopped = pm2(env, "stop", "validator")
            assert stopped.returncode == 0, stopped.stdout + stopped.stderr
            assert status(env)["pm2_env"]["status"] == "stopped"
        log = Path(status(env)["pm2_env"]["pm_out_log_path"]).read_text()
        assert (
            "signal SIGINT: stopping after the current round"
            in log + Path(status(env)["pm2_env"]["pm_err_log_path"]).read_text()
        )
        assert ledger_adds_up(LocalStore(store)) >= 2  # every stored round in the ledger once: a clean stop
    finally:
        pm2(env, "kill")
