"""scripts/install.sh says what it does while it does it, and keeps a failed step's exit status.

The pip steps take minutes and print nothing themselves; a fake Python stands in for them here.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE_PYTHON = """#!/usr/bin/env bash
case "$*" in
  *torch*) sleep 1.3;;
  *"-e .[test,chain"*) sleep 0.6; exit "${FAKE_PIP_EXIT:-0}";;
  *prepare*) echo "model prepared";;
esac
"""


def install(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess, list[float]]:
    """Run install.sh with the fake Python and a 0.5 s heartbeat; its result and when each line came."""
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    proc = subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "install.sh")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHON": str(fake), "INSTALL_HEARTBEAT_S": "0.5", **env},
    )
    t0, lines, times = time.monotonic(), [], []
    with proc, proc.stdout:  # type: ignore[union-attr]
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            times.append(time.monotonic() - t0)
        proc.wait(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(lines)), times


def test_a_line_per_step_and_while_a_step_runs(tmp_path):
    done, times = install(tmp_path)
    assert done.returncode == 0, done.stdout
    out = done.stdout
    for n in ("1/3", "2/3", "3/3"):
        assert f"[{n}] done in" in out
    assert out.count("[1/3] ... ") >= 2 and "model prepared" in out and out.rstrip().endswith("installed")
    gaps = [b - a for a, b in zip([0.0, *times], times)]
    assert max(gaps) < 0.5 + 0.9, (gaps, out)  # never silent longer than the heartbeat (0.5 s here; 10 s by default)
    assert times[-1] < 1.9 + 1.5  # the heartbeat does not hold the script up once a step is done


def test_a_failed_step_stops_the_install_with_its_exit_status(tmp_path):
    done, _ = install(tmp_path, FAKE_PIP_EXIT="7")
    assert done.returncode == 7
    assert re.search(r"\[2/3\] .*: failed \(exit 7\) after \d+ s", done.stdout)
    assert "[3/3]" not in done.stdout and "installed" not in done.stdout.splitlines()[-1]
