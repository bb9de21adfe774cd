"""A pool of simulated miners on loopback: the embedded default network, test miners and benchmark miners.

A miner-side server, not part of the validator: it imports nothing from
``validator`` and tells a validator where its miners listen (``MinerAddress``;
the validator checks them as it checks a miners file, ``MinerSpec.of``).
The daemon and ``validator round`` start ``embedded_network`` when no miners
file is given.

- ``address``: ``MinerAddress``, where one simulated miner listens;
- ``sim``: ``SimMiner`` (one miner and its behaviour) and ``Call`` (one request);
- ``personas``: the honest personas, their sampling (``honest_sampling``) and the fixed texts;
- ``behaviours``: how each behaviour answers; ``copies``: what copycats copy;
- ``upstream``: the honest miners' forwarding to the local LM; ``wire``: chat API payloads;
- ``server``: ``MinerPool``, the loopback HTTP server; ``networks``: ``default_pool``, ``canned_pool``;
- ``embedded``: ``embedded_network``, the daemon's default network with the honest miners' own LM.
"""

from __future__ import annotations

from minerpool.address import MinerAddress
from minerpool.embedded import embedded_network
from minerpool.networks import canned_pool, default_miners, default_pool
from minerpool.personas import PERSONAS, Persona, honest_sampling
from minerpool.server import MinerPool
from minerpool.sim import BEHAVIOURS, SimMiner

__all__ = [
    "BEHAVIOURS",
    "PERSONAS",
    "MinerAddress",
    "MinerPool",
    "Persona",
    "SimMiner",
    "canned_pool",
    "default_miners",
    "default_pool",
    "embedded_network",
    "honest_sampling",
]
