"""Nothing prints a traceback after a command's clean one-line error (issue 36)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from validator.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "validator", *argv], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


@pytest.mark.slow
def test_an_unwritable_out_is_one_line_and_no_traceback(tmp_path):
    """The replay fails at its first write while the background thread still imports scikit-learn: the exit path
    waits for that thread (it used to print `RuntimeError: can't register atexit after shutdown`, 3 of 3 tries)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for _ in range(3):
        done = run("replay", str(ROOT / "examples" / "rounds.jsonl"), "--out", str(blocker / "out"), "--no-progress")
        assert done.returncode == 2
        assert "Traceback" not in done.stderr and "RuntimeError" not in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "cannot write" in done.stderr


def test_every_exit_path_waits_for_the_background_imports(monkeypatch, tmp_path):
    import embedding.warmup as warmup

    waited = []
    monkeypatch.setattr(warmup, "finish", lambda: waited.append(True))
    assert cli_main.main(["weights", "show", str(tmp_path / "none")]) == 2
    assert waited == [True]


@pytest.mark.slow
def test_no_progress_silences_the_model_loading_bar_on_a_cold_cache(tmp_path):
    """--no-progress on a cold cache (the embedding model exported first): no transformers "Loading weights" bar."""
    env = {**os.environ, "VALIDATOR_CACHE_DIR": str(tmp_path / "cold"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    argv = ["replay", str(ROOT / "examples" / "rounds.jsonl"), "--out", str(tmp_path / "out"), "--no-progress"]
    done = subprocess.run(
        [sys.executable, "-m", "validator", *argv], capture_output=True, text=True, timeout=900, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and "it/s]" not in done.stderr, done.stderr


def test_quiet_model_loading_turns_the_libraries_bars_off():
    """In a process of its own: the switch is process-wide (the hub reads its variable once, at import)."""
    code = (
        "from transformers.utils import logging as hf_logging\n"
        "from huggingface_hub.utils import are_progress_bars_disabled\n"
        "assert hf_logging.is_progress_bar_enabled() and not are_progress_bars_disabled()\n"
        "from validator.cli.main import quiet_model_loading\n"
        "quiet_model_loading()\n"
        "assert are_progress_bars_disabled() and not hf_logging.is_progress_bar_enabled()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
