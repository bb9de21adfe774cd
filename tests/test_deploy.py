"""deploy/validator.service: valid for systemd, and saying what the daemon does."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_doc_commands import check
from validator.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "validator.service"


def service() -> dict[str, str]:
    """The [Service] section's settings (the unit repeats no key)."""
    section, out = None, {}
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif line and not line.startswith("#") and section == "Service":
            key, _, value = line.partition("=")
            assert key not in out, f"{key} set twice"
            out[key] = value
    return out


def test_the_unit_runs_the_daemon_and_stops_it_as_the_daemon_expects():
    s = service()
    program, *args = s["ExecStart"].split()
    assert program.endswith("/.venv/bin/validator") and args[0] == "daemon"
    check("validator " + " ".join(args))  # the CLI's parser takes it
    assert s["KillMode"] == "mixed" and s["KillSignal"] == "SIGTERM"  # the daemon finishes its round first
    settings = load_settings(None, env={}, dotenv_path=None)
    longest_round = settings.daemon.round_deadline_s + 2 * settings.lm.round_budget_s
    assert int(s["TimeoutStopSec"]) >= longest_round + 60
    assert s["RestartPreventExitStatus"] == "2" and s["Restart"] == "on-failure"
    assert f"127.0.0.1:{settings.daemon.metrics_port}" in UNIT.read_text()
    assert "VALIDATOR_CACHE_DIR=/var/cache/consensus-validator" in s["Environment"]


def test_chain_mode_under_the_unit_finds_its_wallet_and_never_exits_for_the_chains_weather():
    s = service()
    env = dict(pair.split("=", 1) for pair in s["Environment"].split())
    wallet = env["VALIDATOR_CHAIN__WALLET_PATH"]
    assert s["ProtectHome"] == "yes" and not wallet.startswith(("/home", "/root", "/run/user"))  # not hidden
    assert any(wallet.startswith(p) for p in s["ReadOnlyPaths"].split())
    settings = load_settings(None, env=env, dotenv_path=None)
    assert settings.chain.startup_wait_s == 0  # a chain silent at boot is waited for: exit 2 would keep it down
    assert env["BITTENSOR_RUNTIME_CACHE_DIR"].startswith("/var/cache/consensus-validator")


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed (Debian: apt-get install systemd)"
)
def test_systemd_analyze_verify_accepts_the_unit(tmp_path):
    # verify checks that ExecStart's program exists: point it at this environment's `validator`
    validator = Path(sys.executable).with_name("validator")
    if not validator.exists():
        pytest.skip(f"no validator script beside {sys.executable}")
    text = re.sub(r"^ExecStart=\S+", f"ExecStart={validator}", UNIT.read_text(), flags=re.M)
    unit = tmp_path / "validator.service"
    unit.write_text(text)
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    # verify exits 0 on unknown keys and bad values too, with a warning naming the file and line
    complaints = [line for line in (done.stdout + done.stderr).splitlines() if "validator.service" in line]
    assert done.returncode == 0 and not complaints, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_does_complain_about_a_bad_unit(tmp_path):
    unit = tmp_path / "validator.service"
    unit.write_text("[Service]\nExecStart=/bin/true\nRestart=sometimes\n")
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert "validator.service:3" in done.stdout + done.stderr
