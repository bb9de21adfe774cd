"""Opening the chain edge from the ``[chain]`` settings, and the checks made before any server starts.

``open_edge`` builds ``chain.open_chain`` from the settings (the SDK is
imported only now, so nothing else needs the ``chain`` extra); tests replace
it to put ``chain.testing.InMemorySubstrate`` under the daemon.
``checked_snapshot`` is the start-up check of what only the operator can fix:
the wallet is readable (its hotkey unlocked, since every request is signed
with it), the subnet exists and the hotkey is registered on it. Each failure
is a ``PermanentChainError``: one line, exit 2. A validator permit is not
checked here: permits come and go with the stake, and the daemon waits for
one (``loop.ChainMode``). A chain that does not answer at start is asked
again every 10 s, each time with a line, until it answers or
``[chain] startup_wait_s`` has passed (then exit 2, one line). ``request_signer`` is the keypair that signs
requests to a miners file's miners, when a wallet or hotkey URI is set.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chain import open_chain
from chain.errors import PermanentChainError, TransientChainError

if TYPE_CHECKING:
    from chain.base import Chain
    from chain.epistula import Signer
    from chain.types import MetagraphSnapshot
    from validator.settings import ChainSettings

log = logging.getLogger(__name__)


def open_edge(settings: ChainSettings) -> Chain:
    """The chain edge of ``settings`` (its hotkey's public file read now: a missing wallet stops here)."""

    return open_chain(
        settings.network,
        settings.netuid,
        wallet=settings.wallet or "default",
        hotkey=settings.hotkey,
        wallet_path=settings.wallet_path or None,
        hotkey_uri=settings.hotkey_uri or None,
        timeout_s=settings.timeout_s,
        mechid=settings.mechid,
    )


def request_signer(settings: ChainSettings) -> Signer | None:
    """The hotkey that signs requests to a miners file's miners: None unless a wallet or hotkey URI is set."""
    if settings.enabled or not settings.signs:
        return None
    # lazy: bittensor is the optional [chain] extra
    from chain.sdk_wallet import load_signer

    return load_signer(
        wallet=settings.wallet or "default",
        hotkey=settings.hotkey,
        wallet_path=settings.wallet_path or None,
        hotkey_uri=settings.hotkey_uri or None,
    )


def check_snapshot(snapshot: MetagraphSnapshot, hotkey: str, *, network: str) -> None:
    """``PermanentChainError`` unless ``hotkey`` is registered on the snapshot's subnet: at start, an operator's
    mistake (a permit, by contrast, comes and goes: ``loop.ChainMode`` waits for it)."""
    if snapshot.by_hotkey(hotkey) is None:
        raise PermanentChainError(
            f"hotkey {hotkey} is not registered on netuid {snapshot.netuid} ({network})",
            kind="not registered",
            hint="register it (btcli subnets register), or use the right --wallet/--hotkey/--network",
        )


def checked_snapshot(
    edge: Chain,
    settings: ChainSettings,
    *,
    stop: threading.Event | None = None,
    on_line: Callable[[str], None] = lambda line: None,
    clock: Callable[[], float] = time.monotonic,
    every_s: float = 10.0,
) -> tuple[MetagraphSnapshot, Any]:
    """The subnet at start and the hotkey's keypair, after every start-up check (module docstring).

    A chain that does not answer is asked again every ``every_s`` seconds, each time with a line saying how long
    it has been; after ``settings.startup_wait_s`` (0: never) ``TransientChainError`` (exit 2) ends the wait.
    """
    signer = edge.signer()  # unlocked now: a wrong wallet stops at once
    waiting = stop or threading.Event()
    started = clock()
    deadline = settings.startup_wait_s
    while True:
        try:
            snapshot = edge.snapshot()
            break
        except TransientChainError as exc:
            waited = clock() - started
            if deadline and waited >= deadline:
                raise TransientChainError(
                    f"the chain ({settings.network}) did not answer within {deadline:g} s of start-up "
                    f"([chain] startup_wait_s): {' '.join(str(exc).split())}"
                ) from exc
            left = f", giving up in {deadline - waited:.0f} s" if deadline else ""
            on_line(f"chain: waiting for {settings.network} to answer ({waited:.0f} s{left}): {exc}")
            pause = every_s if not deadline else max(0.0, min(every_s, deadline - waited))
            if waiting.wait(pause):
                raise TransientChainError(f"stopped while waiting for the chain to answer ({exc})") from exc
    check_snapshot(snapshot, edge.hotkey, network=settings.network)
    return snapshot, signer
