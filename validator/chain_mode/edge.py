"""Opening the chain edge from the ``[chain]`` settings, and the checks made before any server starts.

``open_edge`` builds ``chain.open_chain`` from the settings (the SDK is
imported only now, so nothing else needs the ``chain`` extra); tests replace
it to put ``chain.testing.InMemorySubstrate`` under the daemon.
``checked_snapshot`` is the start-up check: the wallet is readable (its
hotkey unlocked, since every request is signed with it), the subnet exists,
the hotkey is registered on it and, with ``set_weights``, holds a validator
permit. Each failure is a ``PermanentChainError``: one line, exit 2. A chain
that does not answer at start is waited for (retried with backoff) until it
does or the daemon is stopped. ``request_signer`` is the keypair that signs
requests to a miners file's miners, when a wallet or hotkey URI is set.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from chain.errors import PermanentChainError, TransientChainError
from chain.schedule import Backoff

if TYPE_CHECKING:
    from chain.base import Chain
    from chain.epistula import Signer
    from chain.types import MetagraphSnapshot
    from validator.settings import ChainSettings

log = logging.getLogger(__name__)


def open_edge(settings: ChainSettings) -> Chain:
    """The chain edge of ``settings`` (its hotkey's public file read now: a missing wallet stops here)."""
    from chain import open_chain

    return open_chain(
        settings.network,
        settings.netuid,
        wallet=settings.wallet or "default",
        hotkey=settings.hotkey,
        wallet_path=settings.wallet_path or None,
        hotkey_uri=settings.hotkey_uri or None,
        timeout_s=settings.timeout_s,
    )


def request_signer(settings: ChainSettings) -> Signer | None:
    """The hotkey that signs requests to a miners file's miners: None unless a wallet or hotkey URI is set."""
    if settings.enabled or not settings.signs:
        return None
    from chain.sdk_wallet import load_signer

    return load_signer(
        wallet=settings.wallet or "default",
        hotkey=settings.hotkey,
        wallet_path=settings.wallet_path or None,
        hotkey_uri=settings.hotkey_uri or None,
    )


def check_snapshot(snapshot: MetagraphSnapshot, hotkey: str, *, set_weights: bool, network: str) -> None:
    """``PermanentChainError`` unless ``hotkey`` is registered on the snapshot's subnet (with a permit when it
    sets weights)."""
    me = snapshot.by_hotkey(hotkey)
    if me is None:
        raise PermanentChainError(
            f"hotkey {hotkey} is not registered on netuid {snapshot.netuid} ({network})",
            kind="not registered",
            hint="register it (btcli subnets register), or use the right --wallet/--hotkey/--network",
        )
    if set_weights and not me.validator_permit:
        raise PermanentChainError(
            f"hotkey {hotkey} (uid {me.uid}) has no validator permit on netuid "
            f"{snapshot.netuid}, so it cannot set weights",
            kind="no validator permit",
            hint="permits go to the top validators by stake: stake more, or run without --set-weights to plan only",
        )


def checked_snapshot(
    edge: Chain,
    settings: ChainSettings,
    *,
    stop: threading.Event | None = None,
    backoff: Backoff = Backoff(initial_s=5.0, max_s=60.0),
) -> tuple[MetagraphSnapshot, Any]:
    """The subnet at start and the hotkey's keypair, after every start-up check (module docstring)."""
    signer = edge.signer()  # unlocked now: a wrong wallet stops at once
    failures = 0
    while True:
        try:
            snapshot = edge.snapshot()
            break
        except TransientChainError as exc:
            failures += 1
            delay = backoff.delay(failures)
            if failures == 1:
                log.warning(
                    "the chain does not answer (%s); retrying (every %.0f s at most) before the first round",
                    exc,
                    backoff.max_s,
                )
            if (stop or threading.Event()).wait(delay):
                raise TransientChainError(f"stopped while waiting for the chain to answer ({exc})") from exc
    check_snapshot(snapshot, edge.hotkey, set_weights=settings.set_weights, network=settings.network)
    return snapshot, signer
