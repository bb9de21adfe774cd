"""The daemon in chain mode (docs/chain.md): miners from a subnet's metagraph, signed requests, weights on chain.

``validator daemon --netuid N`` (or ``[chain] netuid``) opens a ``session``
before anything else starts: the edge (``edge.open_edge``, the only place
the chain is opened from settings) and the start-up checks (wallet, subnet,
registration; a missing validator permit is a state the loop waits out). The session's ``miners``
are the daemon's ``Query`` (``miners.ChainMiners``); ``start`` runs
``loop.ChainMode`` beside the rounds (metagraph every tempo, weights when
due, every attempt stored: ``attempts``); ``after_round`` lets the daemon
forget deregistered hotkeys. Without a netuid the session is None and the
daemon runs as before (the miners file, or the embedded pool).

    edge.py       open_edge, the start-up checks, request_signer (a miners file's requests)
    miners.py     ChainMiners: the served neurons as MinerSpecs (hotkey = miner, coldkey = entity)
    loop.py       ChainMode: refresh, prune, weights, backoff, standing, in a thread of its own
    metrics.py    ChainMetrics: the chain's health as Prometheus metrics
    attempts.py   WeightsAttempt: the stored record of a submission or plan
    reveals.py    Reveals: each landed commit checked on chain after its reveal window
    flags.py      the daemon's and `weights show`'s chain flags
    show.py       `validator weights show`: what would be submitted
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chain.base import refuse_development_key
from validator.daemon.chain import edge as _edge
from validator.daemon.chain.loop import ChainMode
from validator.daemon.chain.metagraph_miners import ChainMiners
from validator.daemon.chain.metrics import ChainMetrics

if TYPE_CHECKING:
    from chain.base import Chain
    from chain.types import MetagraphSnapshot
    from storage.base import Store
    from validator.settings import Settings

__all__ = ["ChainMiners", "ChainMode", "Session", "session"]


@dataclass
class Session:
    """An opened and checked chain edge for one daemon run (module docstring)."""

    settings: Settings
    edge: Chain
    snapshot: MetagraphSnapshot
    miners: ChainMiners
    mode: ChainMode | None = field(default=None)

    @property
    def fatal(self) -> Exception | None:
        return None if self.mode is None else self.mode.fatal

    def describe(self) -> str:
        c = self.settings.chain
        me = self.snapshot.by_hotkey(self.edge.hotkey)
        waits = c.set_weights and me is not None and not me.validator_permit
        permit = " (no validator permit yet: weights wait for one)" if waits else ""
        return (
            f"netuid {c.netuid} on {c.network} at block {self.snapshot.block}, validator {self.edge.hotkey}, "
            f"{'submitting weights' if c.set_weights else 'planning weights only (no --set-weights)'}{permit}"
        )

    def start(
        self,
        daemon: Any,
        store: Store,
        *,
        on_line: Callable[[str], None] | None = None,
        on_fatal: Callable[[], None] | None = None,
        background: bool = True,
        metrics: ChainMetrics | None = None,
    ) -> ChainMode:
        """Run the chain side beside ``daemon`` (in a thread unless ``background`` is False: then each
        ``after_round`` ticks); the chain metrics go on the daemon's registry unless ``metrics`` is given."""
        c = self.settings.chain
        self.mode = ChainMode(
            self.edge,
            self.miners,
            self.snapshot,
            store=store,
            ledger=lambda: daemon.ledger,
            set_weights=c.set_weights,
            block_time_s=c.block_time_s,
            refresh_blocks=c.refresh_blocks,
            version_key=c.version_key,
            clock=daemon.clock,
            on_line=on_line,
            on_fatal=on_fatal,
            metrics=metrics if metrics is not None else _chain_metrics(daemon),
        )
        return self.mode.start() if background else self.mode

    def after_round(self, daemon: Any) -> None:
        if self.mode is not None:
            self.mode.after_round(daemon)

    def close(self) -> None:
        if self.mode is not None:
            self.mode.stop()
        self.edge.close()


def _chain_metrics(daemon: Any) -> ChainMetrics | None:
    registry = getattr(getattr(daemon, "metrics", None), "registry", None)
    return None if registry is None else ChainMetrics(registry)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def session(
    settings: Settings, *, stop: threading.Event | None = None, on_line: Callable[[str], None] = _stderr
) -> Iterator[Session | None]:
    """The chain session of ``settings`` (None without a netuid), checked before the block runs, closed after.

    Raises ``chain.PermanentChainError`` (one line, exit 2) for a wrong wallet, an unknown subnet or network, a
    hotkey that is not registered, or a development URI (``//Alice``) as the hotkey of a public chain; ``chain.TransientChainError`` (exit 2) when the chain has not answered within
    ``[chain] startup_wait_s``, after a line every 10 s (``on_line``: standard error).
    """
    if not settings.chain.enabled:
        yield None
        return
    chain = _edge.open_edge(settings.chain)
    try:
        snapshot, signer = _edge.checked_snapshot(chain, settings.chain, stop=stop, on_line=on_line)
        genesis = chain.genesis_hash()
        refuse_development_key(settings.chain.hotkey_uri, settings.chain.network, genesis)
        miners = ChainMiners(settings, signer, genesis_hash=genesis)
        miners.update(snapshot, chain.hotkey)
        opened = Session(settings, chain, snapshot, miners)
    except BaseException:
        chain.close()
        raise
    try:
        yield opened
    finally:
        opened.close()
