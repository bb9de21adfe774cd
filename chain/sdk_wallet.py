"""The validator's keys: the one place the chain's signer comes from (an SDK importer).

``hotkey_source`` is the validator's hotkey as everything else sees it: its
ss58 address at once, and ``unlock()`` for the keypair, from a secret URI
(dev chains, tests) or from a wallet on disk (its public file read now, its
private key only when a signer is needed, never with a password: a daemon has
nobody to type it). ``chain.sdk.open_chain`` and ``load_signer`` (a miners
file's requests) both take it from here; ``keypair_from_uri`` and
``verify_signature`` are the SDK's sr25519 for Epistula (``chain.epistula``)
and for tests. Errors come back as ``PermanentChainError`` of kind ``wrong
wallet``. Imports the SDK, as ``chain.sdk`` does (``tests/chain/test_boundaries.py``);
imports nothing of ``chain`` but its errors, so no import circle runs through it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chain.errors import ChainError, PermanentChainError, sdk_not_installed

try:
    import bittensor as bt
    import bittensor_core
except ImportError as exc:  # pragma: no cover - exercised by tests/chain/test_boundaries.py in a subprocess
    raise sdk_not_installed() from exc


def keypair_from_uri(uri: str) -> Any:
    """An sr25519 keypair from a secret URI (``//Alice`` on dev chains, or a mnemonic with a path)."""
    return bittensor_core.Keypair.create_from_uri(uri)


def verify_signature(message: bytes, signature: bytes, ss58: str) -> bool:
    """Does ``signature`` by ``ss58`` (sr25519) cover ``message``? ValueError for a malformed address or signature."""
    return bool(bittensor_core.verify(bytes(message), bytes(signature), ss58))


@dataclass(frozen=True)
class HotkeySource:
    """The validator's hotkey: its address, and the function that unlocks its keypair (called when signing)."""

    address: str
    unlock: Callable[[], Any]

    def __repr__(self) -> str:  # never the key
        return f"HotkeySource({self.address!r})"


def hotkey_source(
    *, wallet: str = "default", hotkey: str = "default", wallet_path: str | None = None, hotkey_uri: str | None = None
) -> HotkeySource:
    """The hotkey of a secret URI when one is given, else of the wallet (``PermanentChainError``, ``wrong
    wallet``, when its public file cannot be read)."""
    if hotkey_uri is not None:
        pair = _uri_keypair(hotkey_uri)
        return HotkeySource(pair.ss58_address, lambda: pair)
    address, unlock = _wallet_hotkey(wallet, hotkey, wallet_path)
    return HotkeySource(address, unlock)


def _wallet_error(exc: BaseException, what: str) -> PermanentChainError:
    return PermanentChainError(
        f"cannot read the {what}: {exc}", kind="wrong wallet", hint="check --wallet, --hotkey and the wallet path"
    )


def _uri_keypair(uri: str) -> Any:
    try:
        return keypair_from_uri(uri)
    except (ValueError, TypeError):  # never echoed: the URI is the key
        raise PermanentChainError(
            "the hotkey URI is not a valid secret URI", kind="wrong wallet", hint="check VALIDATOR_CHAIN__HOTKEY_URI"
        ) from None


def _wallet_hotkey(wallet: str, hotkey: str, wallet_path: str | None) -> tuple[str, Callable[[], Any]]:
    """The hotkey's ss58 (its public file read now) and a function unlocking its keypair (read when called)."""
    what = f"hotkey {hotkey!r} of wallet {wallet!r}"

    def unlock() -> Any:
        try:
            if not handle.hotkey_file.is_encrypted():
                return handle.hotkey
        except (OSError, bittensor_core.KeyfileError) as exc:
            raise _wallet_error(exc, what) from exc
        # a daemon has nobody to type a password (the SDK would prompt on stdin)
        raise PermanentChainError(
            f"{what} is encrypted",
            kind="wrong wallet",
            hint="a validator's hotkey is read "
            "without a password: regenerate it unencrypted, or give VALIDATOR_CHAIN__HOTKEY_URI",
        )

    try:
        handle = bt.Wallet(wallet, hotkey, **({} if wallet_path is None else {"path": wallet_path}))
        try:
            return handle.hotkeypub.ss58_address, unlock
        except FileNotFoundError:  # wallets made before hotkeypub files existed
            return unlock().ss58_address, unlock
    except ChainError:
        raise
    except (OSError, ValueError, bittensor_core.KeyfileError) as exc:
        raise _wallet_error(exc, what) from exc


def hotkey_secret(
    domain: bytes,
    *,
    wallet: str = "default",
    hotkey: str = "default",
    wallet_path: str | None = None,
    hotkey_uri: str | None = None,
) -> bytes:
    """A secret of the hotkey's own for one purpose: HMAC-SHA256 keyed by the hotkey's private key (a secret URI's
    text when the hotkey is given as one) over ``domain``, a label naming the purpose. The key never leaves this
    module and the secret reveals nothing of it; only the one who holds the key can derive it again
    (``validator.daemon.committee_secret``). ``PermanentChainError``, ``wrong wallet``, when the key cannot be read
    without a password, or its private file does not hold the key of its public address."""
    if hotkey_uri is not None:
        _uri_keypair(hotkey_uri)  # a valid URI, checked as the signer's is
        return hmac.new(hotkey_uri.encode("utf-8"), domain, hashlib.sha256).digest()
    source = hotkey_source(wallet=wallet, hotkey=hotkey, wallet_path=wallet_path)
    source.unlock()  # a plain key, or the one-line error of an encrypted or unreadable one
    what = f"hotkey {hotkey!r} of wallet {wallet!r}"
    try:
        handle = bt.Wallet(wallet, hotkey, **({} if wallet_path is None else {"path": wallet_path}))
        text = json.loads(Path(handle.hotkey_file.path).read_bytes())["privateKey"]
        private = bytes.fromhex(str(text).removeprefix("0x"))
        address = bittensor_core.Keypair.create_from_private_key(private.hex()).ss58_address
    except (OSError, ValueError, KeyError, TypeError, bittensor_core.KeyfileError) as exc:
        raise PermanentChainError(  # the exception's name only: its text may quote the file, which is the key
            f"cannot read the private key of the {what}: {type(exc).__name__}", kind="wrong wallet"
        ) from None
    if address != source.address:
        raise PermanentChainError(f"the private key of the {what} is not the key of its address", kind="wrong wallet")
    return hmac.new(private, domain, hashlib.sha256).digest()


def load_signer(
    *, wallet: str = "default", hotkey: str = "default", wallet_path: str | None = None, hotkey_uri: str | None = None
) -> Any:
    """The hotkey keypair that signs Epistula requests (a miners file's): from a secret URI, else the wallet
    (``PermanentChainError``, ``wrong wallet``, when it cannot be read without a password)."""
    return hotkey_source(wallet=wallet, hotkey=hotkey, wallet_path=wallet_path, hotkey_uri=hotkey_uri).unlock()
