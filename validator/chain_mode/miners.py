"""The miners of a round in chain mode: every neuron of the metagraph that serves an axon, except the validator.

A served neuron becomes a ``MinerSpec`` like an entry of the miners file:
``http://ip:port`` plus ``[chain] base_path`` (``/v1``) as its
OpenAI-compatible base URL, its hotkey as the miner id (what the ledger is
keyed by, and what each request is signed for) and its coldkey as the entity
(one voice and one payout per coldkey: the core groups responses by
``Response.entity``). ``ChainMiners`` is the daemon's ``Query``: it asks the
miners of the latest snapshot, every request signed with the validator's
hotkey; ``update`` swaps them when the metagraph is read again (from another
thread: the swap is one assignment).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from consensus.errors import ConfigError
from validator.miners.query import Progress, QueryResult, miners_query
from validator.miners.spec import MinerSpec

if TYPE_CHECKING:
    from chain.types import MetagraphSnapshot
    from validator.settings import Settings

log = logging.getLogger(__name__)


def specs_from(snapshot: MetagraphSnapshot, self_hotkey: str, *, model: str, base_path: str) -> tuple[MinerSpec, ...]:
    """One spec per neuron serving an axon, by uid, the validator's own hotkey left out; a neuron whose axon does
    not make a valid URL is skipped (logged)."""
    specs = []
    for neuron in snapshot.served(exclude=self_hotkey):
        try:
            specs.append(
                MinerSpec(hotkey=neuron.hotkey, base_url=f"{neuron.url}{base_path}", model=model, entity=neuron.coldkey)
            )
        except ConfigError as exc:
            log.warning("uid %d skipped: its axon does not make a miner (%s)", neuron.uid, exc)
    return tuple(specs)


class ChainMiners:
    """The daemon's ``Query`` over the metagraph's miners (module docstring)."""

    def __init__(self, settings: Settings, signer: Any, specs: tuple[MinerSpec, ...] = ()) -> None:
        self.settings = settings
        self.signer = signer
        self.specs = specs

    def update(self, snapshot: MetagraphSnapshot, self_hotkey: str) -> tuple[MinerSpec, ...]:
        """The miners of ``snapshot``, from the next round on; returns them."""
        chain = self.settings.chain
        self.specs = specs_from(snapshot, self_hotkey, model=chain.model, base_path=chain.base_path)
        return self.specs

    def __call__(
        self, prompt: str, on_done: Progress | None = None, members: Collection[str] | None = None
    ) -> QueryResult:
        return miners_query(self.specs, self.settings, self.signer)(prompt, on_done, members)
