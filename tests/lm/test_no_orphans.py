"""The embedded LM server never outlives the process that started it (SIGKILL included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.resources import daemon_args

pytestmark = pytest.mark.slow


def children_serving(parent: int) -> list[int]:
    """Pids of ``lm.llama_process`` processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int(
                next(line for line in (entry / "status").read_text().splitlines() if line.startswith("PPid:")).split()[
                    1
                ]
            )
        except (OSError, StopIteration, ValueError):
            continue
        if ppid == parent and b"lm.llama_process" in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it has already exited)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_for(predicate, timeout_s: float, what: str, proc: subprocess.Popen | None = None, log: Path | None = None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            pytest.fail(
                f"the parent exited ({proc.returncode}) before {what}: {log.read_text()[-2000:] if log else ''}"
            )
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}: {log.read_text()[-2000:] if log else ''}")


def sigkill_leaves_no_server(cmd: list[str], tmp_path: Path, ready: str) -> None:
    log = tmp_path / "out.txt"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        servers = wait_for(lambda: children_serving(proc.pid), 120, "the LM server to start", proc, log)
        wait_for(lambda: ready in log.read_text(), 300, f"{ready!r}", proc, log)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        started = time.monotonic()
        wait_for(lambda: not any(alive(pid) for pid in servers), 10, "the orphaned LM server to exit")
        assert time.monotonic() - started < 10
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in children_serving(proc.pid):  # only if the test failed: never leave one behind
            os.kill(pid, signal.SIGKILL)


def test_sigkill_of_the_daemon_leaves_no_lm_server(tmp_path):
    cmd = [sys.executable, "-m", "validator", *daemon_args(0, tmp_path / "runs")]
    sigkill_leaves_no_server(cmd, tmp_path, "daemon:")


def test_sigkill_of_any_process_holding_a_local_server_leaves_none(tmp_path):
    # what pytest (or a notebook) does: LocalServer in-process, then killed without cleanup; on the tests' LM
    # threads (clean_env's VALIDATOR_LM_THREADS), as every server the suite starts
    script = (
        "import os, time\nfrom embedding.cache import default_cache_dir\nfrom lm.embedded import LocalServer\n"
        "threads = int(os.environ['VALIDATOR_LM_THREADS']) or None\n"
        "server = LocalServer(cache_dir=default_cache_dir(), threads=threads).start()\n"
        "print('serving', flush=True)\ntime.sleep(600)\n"
    )
    sigkill_leaves_no_server([sys.executable, "-c", script], tmp_path, "serving")
