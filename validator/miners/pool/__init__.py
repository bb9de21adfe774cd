"""A pool of simulated miners on loopback: the embedded default network, test miners and benchmark miners.

- ``sim``: ``SimMiner`` (one miner and its behaviour) and ``Call`` (one request);
- ``personas``: the honest personas, their sampling (``honest_sampling``) and the fixed texts;
- ``behaviours``: how each behaviour answers; ``copies``: what copycats copy;
- ``upstream``: the honest miners' forwarding to the local LM; ``wire``: chat API payloads;
- ``server``: ``MinerPool``, the loopback HTTP server; ``networks``: ``default_pool``, ``canned_pool``;
- ``embedded``: ``embedded_network``, the daemon's default network with the honest miners' own LM.
"""

from __future__ import annotations

from validator.miners.pool.embedded import embedded_network
from validator.miners.pool.networks import canned_pool, default_miners, default_pool
from validator.miners.pool.personas import PERSONAS, Persona, honest_sampling
from validator.miners.pool.server import MinerPool
from validator.miners.pool.sim import BEHAVIOURS, SimMiner

__all__ = ["BEHAVIOURS", "PERSONAS", "MinerPool", "Persona", "SimMiner", "canned_pool", "default_miners",
           "default_pool", "embedded_network", "honest_sampling"]
