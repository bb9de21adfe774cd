"""Against a live chain, only when asked: VALIDATOR_TEST_CHAIN_NETWORK names a network or endpoint
(``test``, ``finney``, ``ws://127.0.0.1:9944`` for a local subtensor), VALIDATOR_TEST_CHAIN_NETUID the subnet
(default 1) and VALIDATOR_TEST_CHAIN_HOTKEY_URI the validator's key (default ``//Alice``, registered on a fresh
local chain). Read-only: the snapshot and the SDK's dry run of a submission; nothing is signed or sent.
Skipped when the variable is unset (CI), so no test talks to a network beyond loopback unless told to."""

from __future__ import annotations

import os

import pytest

# read now: tests/conftest.py's clean_env drops VALIDATOR_* variables before each test
NETWORK = os.environ.get("VALIDATOR_TEST_CHAIN_NETWORK", "")
NETUID = int(os.environ.get("VALIDATOR_TEST_CHAIN_NETUID", "1"))
HOTKEY_URI = os.environ.get("VALIDATOR_TEST_CHAIN_HOTKEY_URI", "//Alice")

pytestmark = pytest.mark.skipif(not NETWORK, reason="VALIDATOR_TEST_CHAIN_NETWORK is not set")


@pytest.fixture
def edge(tmp_path, monkeypatch):
    pytest.importorskip("bittensor")
    from chain.sdk import open_chain

    # the SDK caches token symbols under the home directory on connect: keep it in the test's own directory
    monkeypatch.setenv("BTCLI_TOKEN_SYMBOLS_CACHE", str(tmp_path / "token_symbols.json"))
    with open_chain(NETWORK, NETUID, hotkey_uri=HOTKEY_URI, timeout_s=120) as chain:
        yield chain


def test_a_live_snapshot_and_dry_run(edge):
    from chain.errors import PermanentChainError
    from chain.weights import weight_vector

    snap = edge.snapshot()
    assert snap.netuid == NETUID and snap.block > 0 and snap.tempo > 0 and snap.neurons
    assert [n.uid for n in snap.neurons] == list(range(len(snap.neurons)))
    assert all(n.axon is None or ":" in n.axon for n in snap.neurons)
    miners = [n.hotkey for n in snap.served(exclude=edge.hotkey)][:8]
    vector = weight_vector({hotkey: 1.0 for hotkey in miners}, snap, edge.hotkey)
    if vector.self_uid is None:
        with pytest.raises(PermanentChainError, match="not registered"):
            edge.plan(vector)
        return
    plan = edge.plan(vector)
    assert plan.method == ("commit" if snap.hyperparameters.commit_reveal else "set")
    assert plan.weights_u16 == vector.chain_u16
