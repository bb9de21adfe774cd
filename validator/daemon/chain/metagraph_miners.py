"""The miners of a round in chain mode: the neurons of the metagraph that serve an axon and are miners.

Not asked: the validator itself; other validators (a validator permit and
more stake than ``[chain] validator_stake``, the subnet template's
``vpermit_tao_limit``); and, with ``[chain] private_axons`` skip (auto: on a public
chain, known by its name or its genesis hash, whatever the node's address), axons on private, loopback, link-local or otherwise
unroutable addresses (``routable``), which on a public subnet are
misconfigurations or attempts to make the validator call into its own network.

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

import ipaddress
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


def routable(axon: str) -> bool:
    """Is the host of ``ip:port`` (``[v6]:port``) a public, globally routable address?"""
    host = axon.rpartition(":")[0].strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_global and not ip.is_multicast


def specs_from(
    snapshot: MetagraphSnapshot,
    self_hotkey: str,
    *,
    model: str,
    base_path: str,
    validator_stake: float = float("inf"),
    skip_private: bool = False,
) -> tuple[MinerSpec, ...]:
    """One spec per miner serving an axon, by uid (module docstring: who is not asked); a neuron whose axon does
    not make a valid URL is skipped (logged)."""
    specs = []
    for neuron in snapshot.served(exclude=self_hotkey):
        if neuron.validator_permit and neuron.stake > validator_stake:
            continue  # another validator
        if skip_private and not routable(neuron.axon or ""):
            log.debug("uid %d skipped: its axon %s is not a public address", neuron.uid, neuron.axon)
            continue
        try:
            specs.append(
                MinerSpec(hotkey=neuron.hotkey, base_url=f"{neuron.url}{base_path}", model=model, entity=neuron.coldkey)
            )
        except ConfigError as exc:
            log.warning("uid %d skipped: its axon does not make a miner (%s)", neuron.uid, exc)
    return tuple(specs)


class ChainMiners:
    """The daemon's ``Query`` over the metagraph's miners (module docstring)."""

    def __init__(
        self, settings: Settings, signer: Any, specs: tuple[MinerSpec, ...] = (), *, genesis_hash: str | None = None
    ) -> None:
        """``genesis_hash``: the chain's block 0, which decides whether it is public (None: public, the safe side)."""
        self.settings = settings
        self.signer = signer
        self.specs = specs
        self.skip_private = settings.chain.skips_private_axons(genesis_hash)

    def update(self, snapshot: MetagraphSnapshot, self_hotkey: str) -> tuple[MinerSpec, ...]:
        """The miners of ``snapshot``, from the next round on; returns them."""
        chain = self.settings.chain
        self.specs = specs_from(
            snapshot,
            self_hotkey,
            model=chain.model,
            base_path=chain.base_path,
            validator_stake=chain.validator_stake,
            skip_private=self.skip_private,
        )
        return self.specs

    def __call__(
        self, prompt: str, on_done: Progress | None = None, members: Collection[str] | None = None
    ) -> QueryResult:
        return miners_query(self.specs, self.settings, self.signer)(prompt, on_done, members)
