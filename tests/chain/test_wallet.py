"""The validator's hotkey from a real wallet directory (made by the SDK in a temporary directory) or a secret URI."""

from __future__ import annotations

import pytest

bt = pytest.importorskip("bittensor")

from chain.errors import PermanentChainError  # noqa: E402
from chain.sdk import open_chain  # noqa: E402
from chain.sdk_wallet import keypair_from_uri, load_signer  # noqa: E402


@pytest.fixture(scope="module")
def wallets(tmp_path_factory):
    """A wallet 'validator' with a plain hotkey 'default' and an encrypted one 'locked'.

    'locked' is the plain key's public file beside a private file in the SDK's encrypted format (its ``$NACL``
    prefix is what the SDK's ``is_encrypted`` reads): really encrypting one costs 4 s of key derivation.
    """
    root = tmp_path_factory.mktemp("wallets")
    path = str(root)
    bt.Wallet("validator", "default", path=path).create_new_hotkey(use_password=False, overwrite=True)
    hotkeys = root / "validator" / "hotkeys"
    (hotkeys / "lockedpub.txt").write_bytes((hotkeys / "defaultpub.txt").read_bytes())
    (hotkeys / "locked").write_bytes(b"$NACL" + bytes(range(64)))
    return path


def test_a_wallet_hotkey_is_read_from_its_public_file_then_unlocked_to_sign(wallets):
    edge = open_chain("test", 1, wallet="validator", hotkey="default", wallet_path=wallets)
    try:
        pair = edge.signer()
        assert pair.ss58_address == edge.hotkey
        assert "Keypair" not in repr(edge) and pair.ss58_address in repr(edge)
    finally:
        edge.close()
    assert load_signer(wallet="validator", hotkey="default", wallet_path=wallets).ss58_address == edge.hotkey


def test_an_encrypted_hotkey_stops_with_one_line_instead_of_prompting(wallets):
    edge = open_chain("test", 1, wallet="validator", hotkey="locked", wallet_path=wallets)
    try:
        with pytest.raises(PermanentChainError, match="is encrypted") as info:
            edge.signer()
        assert info.value.kind == "wrong wallet" and "\n" not in str(info.value)
    finally:
        edge.close()
    with pytest.raises(PermanentChainError, match="is encrypted"):
        load_signer(wallet="validator", hotkey="locked", wallet_path=wallets)


@pytest.mark.parametrize("wallet, hotkey", [("nobody", "default"), ("validator", "missing")])
def test_a_missing_wallet_or_hotkey_is_a_wrong_wallet(wallets, wallet, hotkey):
    with pytest.raises(PermanentChainError) as info:
        open_chain("test", 1, wallet=wallet, hotkey=hotkey, wallet_path=wallets)
    assert info.value.kind == "wrong wallet" and repr(hotkey) in str(info.value)
    with pytest.raises(PermanentChainError):
        load_signer(wallet=wallet, hotkey=hotkey, wallet_path=wallets)


def test_a_bad_hotkey_uri_is_refused_without_echoing_it():
    with pytest.raises(PermanentChainError) as info:
        load_signer(hotkey_uri="not a secret phrase at all")
    assert "not a secret phrase" not in str(info.value) and info.value.kind == "wrong wallet"
    assert load_signer(hotkey_uri="//Alice").ss58_address == keypair_from_uri("//Alice").ss58_address
