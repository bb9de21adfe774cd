"""An in-memory Bittensor chain for tests: the SDK's ``Substrate`` protocol over a few small subnets (no network).

``bt.Client(network, substrate=InMemorySubstrate(...))`` (or
``chain_for(substrate, netuid, hotkey_uri)``, which wraps it in our
``BittensorChain``) runs the SDK's OWN code offline: its metagraph decoding
(``bittensor/metagraph.py:_build`` over the ``SubnetInfoRuntimeApi.get_metagraph``
runtime call), its hyperparameter reads, and ``SetWeights``' preflight,
conforming and call building, plain (``set_mechanism_weights``) or
commit-reveal (``commit_timelocked_mechanism_weights``, CRv4: really
timelock-encrypted by ``bittensor_core``, offline).

Every value served here is written from what the SDK 11.3.0 reads, in the
shape it reads it (the module and function are named next to each); nothing
is served that the SDK does not ask for. A storage item or runtime call the
SDK starts reading after an upgrade is not guessed: it raises
``NotImplementedError`` naming it, so the tests fail loudly.

Every call the SDK composes is encoded by the SDK's own SCALE codec over a
metadata written from subtensor's source (``chain.testing.metadata``), signed
by the SDK's own extrinsic builder, then decoded and its signature and nonce
checked as a node's pool does (``chain.testing.extrinsics``). The decoded
arguments meet subtensor's weight rules, written from its Rust source
(``chain.testing.subnet``: ``internal_set_weights`` and
``internal_commit_timelocked_weights`` of
``pallets/subtensor/src/subnets/weights.rs``, the I32F32 arithmetic of
``epoch/math.rs``; nothing of the project's own weight code), are applied
(weights stored max-upscaled, ``LastUpdate`` moved) and included in the next
block; a refusal comes back as a failed ``ExtrinsicResult`` carrying the chain
error's name and docs, as from a live node. ``outage = True`` makes every
call fail as an unreachable node does (``bt.RpcConnectionError``). Tests
change the subnet between calls: register or replace neurons, toggle
commit-reveal, change permits and stake, advance blocks.

Imports the SDK (only for tests and the daemon's tests: the ``chain`` extra). The state and
subtensor's rules are ``chain.testing.subnet``; the protocol is ``chain.testing.substrate``.
"""

from __future__ import annotations

from chain.testing.subnet import RAO_PER_ALPHA, FakeNeuron, FakeSubnet
from chain.testing.substrate import InMemorySubstrate, chain_for

__all__ = ["RAO_PER_ALPHA", "FakeNeuron", "FakeSubnet", "InMemorySubstrate", "chain_for"]
