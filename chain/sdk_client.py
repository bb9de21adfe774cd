"""The Bittensor SDK edge's connection (``chain.sdk``): a ``bt.Client`` on a private event loop.

``SdkClient`` holds what ``chain.sdk.BittensorChain`` is built from (network, netuid, hotkey,
signer, timeouts) and runs the SDK's coroutines for it: on a private event loop in a background
thread, each bounded by a timeout; a chain that does not answer becomes ``TransientChainError``
and its connection is dropped, so the next call connects again. An SDK importer, as ``chain.sdk``
(``tests/chain/test_boundaries.py``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from chain.base import check_network
from chain.errors import ChainError, TransientChainError, sdk_not_installed

try:
    import bittensor as bt
    import websockets.exceptions
except ImportError as exc:  # pragma: no cover - exercised by tests/chain/test_boundaries.py in a subprocess
    raise sdk_not_installed() from exc

T = TypeVar("T")

# what "the chain did not answer" looks like from the SDK and its transport
_NO_ANSWER = (
    bt.RpcConnectionError,
    bt.ConnectionNotReady,
    OSError,
    asyncio.TimeoutError,
    websockets.exceptions.WebSocketException,
)


class _Loop:
    """A private event loop on a daemon thread: the SDK's coroutines run here, the caller blocks with a timeout."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="chain-edge", daemon=True)
        self._thread.start()

    def run(self, coro: Awaitable[T], timeout_s: float) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TransientChainError(f"the chain did not answer within {timeout_s:g} s") from None

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()


class SdkClient:
    """The connection and state of ``chain.sdk.BittensorChain`` (its base class; module docstring)."""

    def __init__(
        self,
        network: str,
        netuid: int,
        *,
        hotkey: str,
        signer: Callable[[], Any],
        substrate: Any = None,
        timeout_s: float = 60.0,
        submit_timeout_s: float = 180.0,
        mechid: int = 0,
    ) -> None:
        """``hotkey``: the validator's ss58; ``signer()`` returns its keypair (called on the first submit only,
        so a dry run never unlocks a key). ``substrate``: any SDK ``Substrate`` (default: the network's RPC)."""
        self.network = check_network(network)
        if netuid < 0:
            raise ValueError(f"netuid must be non-negative, got {netuid}")
        self.netuid = netuid
        self.mechid = mechid  # the mechanism whose weights are set (SetWeights' mechid)
        self._hotkey = hotkey
        self._signer_factory = signer
        self._signer: Any = None
        self._substrate = substrate
        self.timeout_s = timeout_s
        self.submit_timeout_s = submit_timeout_s
        self._client: Any = None
        self._loop = _Loop()

    @property
    def hotkey(self) -> str:
        return self._hotkey

    # --- plumbing -------------------------------------------------------------------------------------------

    async def _connected(self) -> Any:
        if self._client is None:
            client = bt.Client(self.network, substrate=self._substrate)
            if self._substrate is None:
                await client.connect()
            else:
                # an injected chain (tests): skip Client.connect's display-only token-symbol cache, which the
                # SDK keeps under the user's home directory
                await self._substrate.connect()
            self._client = client
        return self._client

    async def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except Exception:  # closing a connection that already failed: nothing left to do
                pass

    def _run(self, make: Callable[[], Awaitable[T]], what: str, timeout_s: float) -> T:
        async def guarded() -> T:
            try:
                return await make()
            except ChainError:  # already ours (an OSError too): not to be taken for a silent chain
                raise
            except _NO_ANSWER as exc:
                await self._drop_client()
                raise TransientChainError(f"{what}: the chain did not answer ({exc or type(exc).__name__})") from exc

        try:
            return self._loop.run(guarded(), timeout_s)
        except TransientChainError as exc:
            try:  # a connection that timed out is not reused
                self._loop.run(self._drop_client(), 10)
            except TransientChainError:
                pass
            if str(exc).startswith("the chain did not answer within"):
                raise TransientChainError(f"{what}: {exc}") from None
            raise

    def close(self) -> None:
        try:
            self._loop.run(self._drop_client(), 10)
        except TransientChainError:
            pass
        finally:
            self._loop.close()
