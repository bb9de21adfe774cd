"""Every input is checked before anything starts (issue 27): a bad prompts, canaries or miners file stops the daemon
and `validator round` at once, with every mistake of the miners file in one report, and nothing in the store.
Between rounds the daemon says when the next one starts."""

from __future__ import annotations

import argparse
import io
import time
from types import SimpleNamespace

import pytest

from validator.cli.daemon import _after_round
from validator.cli.main import main
from validator.terminal import Progress

BAD_MINERS = (
    '[[miner]]\nhotkey = "a"\nbase_url = "ftp://x/v1"\nmodel = "m"\n\n'
    '[[miner]]\nhotkey = "b"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ntimeout_s = 0\n'
)


@pytest.fixture(autouse=True)
def nothing_starts(monkeypatch):
    """Any server, pool or lease reached means an input was checked too late."""
    import minerpool.embedded
    import validator.app
    import validator.daemon.daemon

    def too_late(*args, **kwargs):
        raise AssertionError("started before every input was checked")

    monkeypatch.setattr(minerpool.embedded, "embedded_network", too_late)
    monkeypatch.setattr(validator.app, "open_app", too_late)
    monkeypatch.setattr(validator.daemon.daemon, "store_lease", too_late)


def run(args, capsys):
    started = time.monotonic()
    code = main(args)
    return code, capsys.readouterr().err, time.monotonic() - started


@pytest.mark.parametrize(
    "flag, name, text, needle",
    [
        ("--prompts", "prompts.jsonl", None, "cannot read"),
        ("--prompts", "prompts.txt", "what?", "unknown prompt file type"),
        ("--canaries", "canaries.jsonl", '{"prompt": "Is water wet?"}\n', "has no reference answer"),
    ],
)
def test_a_bad_prompt_source_stops_the_daemon_before_anything_starts(tmp_path, capsys, flag, name, text, needle):
    source = tmp_path / name
    if text is not None:
        source.write_text(text)
    store = tmp_path / "store"
    code, err, seconds = run(
        ["daemon", "--rounds", "1", "--store", str(store), flag, str(source), "--metrics-port", "-1"], capsys
    )
    assert code == 2 and needle in err and str(source) in err and seconds < 5
    assert not store.exists()


@pytest.mark.parametrize(
    "command", [["daemon", "--rounds", "1", "--metrics-port", "-1"], ["round", "--prompt", "Is water wet?"]]
)
def test_every_mistake_of_a_miners_file_in_one_report_before_anything_starts(tmp_path, capsys, command):
    miners = tmp_path / "miners.toml"
    miners.write_text(BAD_MINERS)
    store = tmp_path / "store"
    code, err, _ = run([*command, "--store", str(store), "--miners", str(miners), "--no-lm"], capsys)
    assert code == 2 and f"{miners}: 2 mistakes:" in err
    assert "entry #1 (hotkey 'a'), field 'base_url'" in err and "entry #2 (hotkey 'b'), field 'timeout_s'" in err
    assert not store.exists()


def test_a_config_type_error_names_its_file(tmp_path, capsys):
    cfg = tmp_path / "daemon.toml"
    cfg.write_text("[daemon]\ninterval_s = 'often'\n")
    code, err, _ = run(["daemon", "--rounds", "1", "--store", str(tmp_path / "store"), "--config", str(cfg)], capsys)
    assert code == 2 and f"{cfg}: daemon.interval_s: expected a number" in err


def after_rounds(seconds: list[float], rounds: int, capsys) -> tuple[list[str], list[str], int]:
    """The daemon's per-round callback run on rounds that took ``seconds``: stdout lines, progress lines, renewals."""
    out = io.StringIO()
    renewed = []
    settings = SimpleNamespace(daemon=SimpleNamespace(interval_s=30.0))
    after = _after_round(Progress(out), lambda: renewed.append(1), settings, argparse.Namespace(rounds=rounds))
    for s in seconds:
        after(SimpleNamespace(line=lambda: "round ok", seconds=s))
    return capsys.readouterr().out.splitlines(), out.getvalue().splitlines(), len(renewed)


def test_the_daemon_says_when_the_next_round_starts(capsys):
    printed, progress, renewed = after_rounds([4.6, 5.0], 2, capsys)
    assert printed == ["round ok", "round ok"] and renewed == 2
    assert progress == ["next round in 25 s (daemon.interval_s 30)"]  # not after the last round


def test_no_wait_is_shown_when_a_round_outlasts_the_interval(capsys):
    printed, progress, renewed = after_rounds([29.5, 31.0], 0, capsys)  # --rounds 0: run until stopped
    assert printed == ["round ok", "round ok"] and renewed == 2 and progress == []
