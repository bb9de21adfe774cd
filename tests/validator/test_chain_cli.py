"""`validator daemon --netuid ...` and `validator weights show` in-process, against the in-memory chain and the
pool's miners served as axons (the fake embedder: tests/conftest.py)."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("bittensor")

from chain.testing import chain_for
from storage import keys as store_keys
from storage.local import LocalStore
from tests.validator.test_chain_daemon import TEMPO, keys, pool, subnet  # noqa: F401  (fixtures)
from validator.cli.main import main
from validator.daemon.chain import edge as chain_edge
from validator.daemon.chain.attempts import load_attempts

CHAIN = ["--netuid", "1", "--network", "local"]


@pytest.fixture
def sub(keys, pool, monkeypatch, tmp_path):  # noqa: F811
    chain = subnet(keys, pool)
    # prompt rounds (these miners answer one prompt): chain mode needs a prompt source when tasks are off
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "Is Python\'s list type mutable? Answer yes or no and explain in two sentences."}\n')
    monkeypatch.setenv("VALIDATOR_TASKS__ENABLED", "false")
    monkeypatch.setenv("VALIDATOR_DAEMON__PROMPTS_FILE", str(prompts))
    monkeypatch.setattr(chain_edge, "open_edge", lambda c: chain_for(chain, c.netuid, c.hotkey_uri or "//Alice"))
    monkeypatch.setenv("VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE", "false")
    monkeypatch.setenv("VALIDATOR_CHAIN__HOTKEY_URI", "//Alice")
    return chain


def daemon(tmp_path, *more, rounds=2, interval=0.0):
    """``validator daemon`` on the test chain (``CHAIN``), without the LM, storing under tmp_path/rounds."""
    store = str(tmp_path / "rounds")
    return main(
        ["daemon", "--rounds", str(rounds), "--store", store, "--no-lm", "--metrics-port", "-1"]
        + ["--interval", str(interval), *CHAIN, *more]
    )


def test_the_daemon_validates_the_subnet_and_weights_show_prints_the_plan(tmp_path, sub, keys, capsys):  # noqa: F811
    assert daemon(tmp_path, "--set-weights") == 0
    out = capsys.readouterr().out
    assert "chain: netuid 1 on local at block 1000" in out and "submitting weights" in out
    assert "daemon: 8 miners" in out and "round-000002" in out
    store = LocalStore(tmp_path / "rounds")
    assert store.exists(store_keys.evaluation("round-000002"))
    assert load_attempts(store, 1)  # the keep-alive or the ledger's, whichever the thread reached first

    sub.advance(TEMPO + 1)
    assert main(["weights", "show", str(tmp_path / "rounds"), *CHAIN]) == 0
    shown = capsys.readouterr().out
    assert f"validator {keys['alice']} (uid 0, validator permit yes)" in shown
    assert "permit yes, stake 1000, inactive in 49" in shown and "last weights landed: block 10" in shown
    assert "ledger after round-000002 (2 rounds" in shown and "vector: ledger" in shown
    assert keys["bob"] in shown and "65535" in shown and "plan: set" in shown and "due: yes" in shown
    assert sub.extrinsics and all(e["function"] == "set_mechanism_weights" for e in sub.extrinsics)
    count = len(sub.extrinsics)
    assert main(["weights", "show", str(tmp_path / "rounds"), *CHAIN]) == 0
    assert len(sub.extrinsics) == count  # shown, never sent


@pytest.mark.parametrize("uri, flags, says", [("//Mallory", ["--set-weights"], "is not registered on netuid 1")])
def test_a_validator_that_cannot_validate_stops_before_anything_starts(
    tmp_path, sub, monkeypatch, capsys, uri, flags, says
):
    monkeypatch.setenv("VALIDATOR_CHAIN__HOTKEY_URI", uri)
    assert daemon(tmp_path, *flags) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("validator daemon: hotkey ") and says in err and len(err.splitlines()) == 1
    assert not (tmp_path / "rounds").exists()  # no lease taken, no store probed, no server started


def test_usage_errors(tmp_path, sub, capsys):
    (tmp_path / "miners.toml").write_text('[[miner]]\nhotkey = "a"\nbase_url = "http://127.0.0.1:1"\nmodel = "m"\n')
    assert daemon(tmp_path, "--miners", str(tmp_path / "miners.toml")) == 2
    assert "the metagraph or the file" in capsys.readouterr().err
    assert main(["weights", "show", str(tmp_path)]) == 2  # offline without --netuid (issue 36): nothing stored
    assert "nothing to weight" in capsys.readouterr().err
    assert main(["weights", "show", str(tmp_path / "empty"), *CHAIN]) == 2
    assert "no ledger" in capsys.readouterr().err
    assert main(["daemon", "--network", "moon", *CHAIN[:2], "--store", str(tmp_path / "x")]) == 2
    assert "chain.network" in capsys.readouterr().err


def test_a_validator_deregistered_while_running_goes_on_with_one_line(tmp_path, sub, monkeypatch, capsys):
    """The chain side finds it at its next metagraph read (5 blocks of 0.05 s): one line, the rounds go on and are
    stored, the daemon ends as asked, exit 0."""
    monkeypatch.setenv("VALIDATOR_CHAIN__BLOCK_TIME_S", "0.05")
    monkeypatch.setenv("VALIDATOR_CHAIN__REFRESH_BLOCKS", "5")
    timer = threading.Timer(0.5, lambda: sub.register(1, "5Newcomer", "5NewCold", uid=0))
    timer.start()
    try:
        code = daemon(tmp_path, rounds=12, interval=0.2)
    finally:
        timer.cancel()
    captured = capsys.readouterr()
    said = [line for line in (captured.out + captured.err).splitlines() if "is not registered on netuid 1" in line]
    assert code == 0 and len(said) == 1 and "rounds go on" in said[0]
    assert LocalStore(tmp_path / "rounds").exists(store_keys.evaluation("round-000012"))


def test_a_chain_silent_at_start_up_gives_a_line_then_exit_2_at_the_deadline(tmp_path, sub, monkeypatch, capsys):
    sub.outage = True
    monkeypatch.setenv("VALIDATOR_CHAIN__STARTUP_WAIT_S", "0.3")
    assert daemon(tmp_path) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "chain: waiting for local to answer (0 s, giving up in 0 s)" in err[0]
    assert err[-1].startswith("validator daemon: the chain (local) did not answer within 0.3 s of start-up")
    assert not (tmp_path / "rounds").exists()


def test_a_miners_file_is_signed_when_a_hotkey_is_configured(tmp_path, pool, keys, monkeypatch, capsys):  # noqa: F811
    """File mode against the verifying pool: unsigned without a hotkey (every miner refuses: http_error), signed
    with VALIDATOR_CHAIN__HOTKEY_URI (every miner answers)."""
    monkeypatch.setenv("VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE", "false")
    lines = []
    for spec in pool.specs():
        lines += ["[[miner]]", f'hotkey = "{spec.hotkey}"', f'base_url = "{spec.base_url}"', 'model = "m"', ""]
    miners = tmp_path / "miners.toml"
    miners.write_text("\n".join(lines))
    round_ = ["round", "--prompt", "Is Python's list type mutable?", "--miners", str(miners), "--no-lm"]
    assert main(round_) == 0
    unsigned = capsys.readouterr().out
    assert "NO QUORUM" in unsigned and unsigned.count("HTTP 401") == 7
    assert {r["refused"] for r in list(pool.requests)[-7:]} == {"unsigned request"}
    monkeypatch.setenv("VALIDATOR_CHAIN__HOTKEY_URI", "//Alice")
    assert main(round_) == 0
    signed = capsys.readouterr().out
    assert "NO QUORUM" not in signed and "HTTP 401" not in signed
    assert {r["refused"] for r in list(pool.requests)[-7:]} == {None}
