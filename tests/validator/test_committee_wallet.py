"""The committee secret from the wallet in chain mode: derived from the hotkey's real sr25519 private key."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import shutil

import pytest

bt = pytest.importorskip("bittensor")

from chain.errors import PermanentChainError  # noqa: E402
from validator.daemon.committee_draw import plan_tick  # noqa: E402
from validator.daemon.committee_secret import DOMAIN, FILE, committee_secret, for_subnet  # noqa: E402
from validator.settings import load_settings  # noqa: E402


@pytest.fixture(scope="module")
def wallets(tmp_path_factory):
    """Wallet 'validator' with plain hotkeys 'default' and 'other' made by the SDK; 'locked' (the SDK's encrypted
    format's prefix, as tests/chain/test_wallet.py) and 'swapped' (default's public file, other's private file)."""
    root = tmp_path_factory.mktemp("wallets")
    for name in ("default", "other"):
        bt.Wallet("validator", name, path=str(root)).create_new_hotkey(
            use_password=False, overwrite=True, suppress=True
        )
    hotkeys = root / "validator" / "hotkeys"
    shutil.copy(hotkeys / "defaultpub.txt", hotkeys / "lockedpub.txt")
    (hotkeys / "locked").write_bytes(b"$NACL" + bytes(range(64)))
    shutil.copy(hotkeys / "defaultpub.txt", hotkeys / "swappedpub.txt")
    shutil.copy(hotkeys / "other", hotkeys / "swapped")
    return root


def chain(wallets, **env):
    values = {
        "VALIDATOR_CHAIN__NETUID": "1",
        "VALIDATOR_CHAIN__WALLET": "validator",
        "VALIDATOR_CHAIN__WALLET_PATH": str(wallets),
        **env,
    }
    return load_settings(None, env=values, dotenv_path=None)


def test_in_chain_mode_the_secret_is_derived_from_the_hotkeys_private_key(wallets, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    settings = chain(wallets)
    secret = committee_secret(settings, tmp_path / "here")
    assert committee_secret(settings, tmp_path / "another-machine") == secret  # the wallet moves, the sequence too
    assert not (tmp_path / "here" / FILE).exists() and not (tmp_path / "another-machine").exists()  # nothing kept
    private = json.loads((wallets / "validator" / "hotkeys" / "default").read_text())["privateKey"]
    key = bytes.fromhex(private.removeprefix("0x"))
    of_key = hmac.new(key, DOMAIN, hashlib.sha256).hexdigest().encode()  # domain-separated HMAC of the key
    assert secret == hmac.new(of_key, DOMAIN + b"/netuid/1", hashlib.sha256).hexdigest().encode()  # and the netuid
    assert private.removeprefix("0x").encode() not in secret and key not in secret
    assert secret.decode() not in caplog.text and private.removeprefix("0x") not in caplog.text
    other = committee_secret(chain(wallets, VALIDATOR_CHAIN__HOTKEY="other"), tmp_path)
    assert other != secret
    names = [f"m{i:02d}" for i in range(40)]
    plans = [plan_tick(s, 1, 10, names, {}, 8) for s in (secret, other)]
    assert plans[0].committees != plans[1].committees  # another hotkey draws other committees
    given = chain(wallets, VALIDATOR_COMMITTEE_SECRET="g" * 20)
    assert committee_secret(given, tmp_path) == for_subnet(b"g" * 20, 1)  # the environment or .env wins over the wallet
    on_two = committee_secret(chain(wallets, VALIDATOR_CHAIN__NETUID="2"), tmp_path)
    assert on_two != secret  # the same hotkey on another subnet: another secret
    two = [plan_tick(s, 1, 10, names, {}, 8) for s in (secret, on_two)]
    assert two[0].committees != two[1].committees  # and other committees


def test_a_hotkey_uri_gives_the_secret_of_its_key():
    # development keys: on a development chain only (on finney they are refused at load)
    alice = chain("unused", VALIDATOR_CHAIN__HOTKEY_URI="//Alice", VALIDATOR_CHAIN__NETWORK="local")
    bob = chain("unused", VALIDATOR_CHAIN__HOTKEY_URI="//Bob", VALIDATOR_CHAIN__NETWORK="local")
    assert committee_secret(alice, None) == committee_secret(alice, None) != committee_secret(bob, None)
    assert b"Alice" not in committee_secret(alice, None) and len(committee_secret(alice, None)) == 64
    with pytest.raises(PermanentChainError, match="not a valid secret URI"):
        committee_secret(chain("unused", VALIDATOR_CHAIN__HOTKEY_URI="not a uri at all ///"), None)


@pytest.mark.parametrize(
    "hotkey, message",
    [("locked", "is encrypted"), ("missing", "'missing'"), ("swapped", "not the key of its address")],
)
def test_a_key_that_cannot_be_read_stops_with_one_line(wallets, hotkey, message):
    with pytest.raises(PermanentChainError, match=message) as info:
        committee_secret(chain(wallets, VALIDATOR_CHAIN__HOTKEY=hotkey), None)
    assert info.value.kind == "wrong wallet" and "\n" not in str(info.value)
    assert "privateKey" not in str(info.value)
