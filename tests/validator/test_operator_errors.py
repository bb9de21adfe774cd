"""What a new operator meets on a first walk through the commands: each mistake or damaged record is said once,
on one line that names the record and why (the fixes of the operator's walk-through, branch ops)."""

from __future__ import annotations

import gzip
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from validator.cli.main import main
from validator.review.unpaid import IDENTICAL_HINT
from validator.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "rounds.jsonl"


@pytest.fixture
def replayed(tmp_path) -> Path:
    """Four example rounds replayed into a store (the fake embedder: fast suite)."""
    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text("\n".join(EXAMPLES.read_text(encoding="utf-8").splitlines()[:4]) + "\n", encoding="utf-8")
    out = tmp_path / "store"
    assert main(["replay", str(rounds), "--out", str(out), "--no-progress"]) == 0
    return out


def test_a_bad_line_of_a_rounds_file_is_reported_once(tmp_path, capsys, caplog):
    lines = EXAMPLES.read_text(encoding="utf-8").splitlines()[:2]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "{broken", lines[1]]) + "\n", encoding="utf-8")
    assert main(["replay", str(bad), "--out", str(tmp_path / "out"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "line 2" in line]
    assert len(said) == 1, err
    assert "malformed JSON" in said[0]
    # it was said twice: an ERROR log line as the line was read (the command's stderr), then the closing list
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING and "line 2" in r.getMessage()]
    assert logged == []


def test_report_names_the_site_directory_it_cannot_write(replayed, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    out = blocker / "site"
    assert main(["report", str(replayed), "--out", str(out), "--no-progress"]) == 2  # as replay's
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"validator report: cannot write to --out {out}: ")


@pytest.mark.parametrize("command", ["report", "whatif"])
def test_an_unwritable_out_is_one_line_of_its_own_exit_2_before_any_work(command, replayed, tmp_path, capsys):
    """With the progress bar on: the message is not glued to a bar, and nothing was computed first."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    out = blocker / "out"
    config = tmp_path / "same.toml"
    config.write_text("", encoding="utf-8")
    extra = ["--config", str(config)] if command == "whatif" else []
    assert main([command, str(replayed), "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [f"validator {command}: cannot write to --out {out}: Not a directory"], err
    assert not (replayed / "rounds" / "r-0001" / "replays").exists()  # no what-if record written first


def test_weights_show_says_which_record_it_could_not_read(replayed, capsys):
    broken = replayed / "rounds" / "r-0002" / "evaluation.json"
    broken.write_text('{"schema": "x", trunc', encoding="utf-8")
    assert main(["weights", "show", str(replayed)]) == 0
    captured = capsys.readouterr()
    assert "skipped rounds/r-0002/evaluation.json: unreadable" in captured.err
    assert "not JSON" in captured.err
    assert "ledger of" in captured.out  # the readable rounds still give the weights


def test_committee_size_without_a_secret_says_where_the_daemon_kept_its_own(replayed, tmp_path, capsys):
    config = tmp_path / "same.toml"
    config.write_text("", encoding="utf-8")
    argv = ["whatif", str(replayed), "--config", str(config), "--committee-size", "2", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "--committee-seed" in err[0] and "VALIDATOR_COMMITTEE_SECRET" in err[0]
    assert "daemon-state/<store hash>/committee-secret" in err[0]


def test_the_identical_answers_note_does_not_ask_to_turn_on_what_is_on():
    assert load_settings().consensus.identity.identity_persistence is True
    assert "turn on" not in IDENTICAL_HINT
    assert "identity_persistence, on by default" in IDENTICAL_HINT


def test_a_gzip_compressed_rounds_file_is_one_clear_line(tmp_path, capsys):
    packed = tmp_path / "rounds.jsonl.gz"
    packed.write_bytes(gzip.compress(EXAMPLES.read_bytes()))
    assert main(["replay", str(packed), "--out", str(tmp_path / "out"), "--no-progress"]) == 1
    failed = [line for line in capsys.readouterr().err.splitlines() if "failed:" in line]
    assert failed == ["  failed: line 1: a gzip-compressed file: gunzip it first"]  # not one "not UTF-8" per line


def test_weights_show_of_a_missing_directory_says_so(tmp_path, capsys):
    assert main(["weights", "show", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"validator weights show: {tmp_path / 'nowhere'}: no such directory, so no ledger to show (give the --store of a daemon run)"
    ]
    assert not (tmp_path / "nowhere").exists()


def test_a_command_piped_into_head_ends_without_a_traceback(replayed):
    # `validator weights show STORE | head -1`: the reader is gone before the command writes (no model is loaded)
    proc = subprocess.Popen(
        [sys.executable, "-m", "validator", "weights", "show", str(replayed)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err.decode() and "BrokenPipeError" not in err.decode(), err.decode()
    assert proc.returncode == 141  # 128 + SIGPIPE, as a shell reports it


def test_a_deprecated_setting_is_the_programs_own_warning_line(tmp_path):
    config = tmp_path / "flat.toml"
    config.write_text("[consensus]\nconsensus_threshold = 0.95\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "validator", "weights", "show", str(tmp_path / "nowhere"), "--config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == (
        f"validator weights show: warning: {config}: consensus.consensus_threshold: deprecated, write "
        "[consensus.clusters] consensus_threshold (VALIDATOR_CONSENSUS__CLUSTERS__CONSENSUS_THRESHOLD)"
    )  # was "settings:0: ConfigDeprecationWarning: ..."


@pytest.mark.parametrize("command", ["replay", "whatif"])
def test_a_stored_input_that_cannot_be_read_is_one_plain_line(command, replayed, tmp_path, capsys):
    (replayed / "rounds" / "r-0001" / "input.json").write_text('{"round_id": 5', encoding="utf-8")
    config = tmp_path / "same.toml"
    config.write_text("", encoding="utf-8")
    extra = ["--config", str(config), "--out", str(tmp_path / "w")] if command == "whatif" else []
    assert main([command, str(replayed), *extra, "--no-progress"]) == 1
    failed = [line for line in capsys.readouterr().err.splitlines() if "failed:" in line]
    assert failed == [
        "  failed: unreadable input: rounds/r-0001/input.json: not JSON (Expecting ',' delimiter: line 1 column 15 "
        "(char 14))"
    ]  # was the row's dict: {'key': 'rounds/...', 'error': "unreadable input: ..."}
