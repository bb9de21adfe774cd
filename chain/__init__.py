"""The Bittensor chain edge: miners from a subnet's metagraph, signed requests, weights on chain.

Pure parts (no SDK needed): the snapshot and submission types
(``chain.types``), the ledger-to-uids weight vector with the SDK's own
normalisation (``chain.weights``), when to submit (``chain.schedule``),
Epistula v2 signing and verification (``chain.epistula``; verifying loads the
SDK's sr25519), the ``Chain`` protocol (``chain.base``) and the errors
(``chain.errors``). The SDK itself (``pip install 'consensus-validator[chain]'``)
is imported only by ``chain.sdk`` (``open_chain``, ``BittensorChain``; its connection
``chain.sdk_client`` and its keys ``chain.sdk_wallet``) and by ``chain.testing``
(an in-memory chain for tests). docs/chain.md describes the edge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chain.base import NETWORKS, Chain, check_network
from chain.errors import ChainError, PermanentChainError, TransientChainError, WeightsError
from chain.schedule import Backoff, Due, blocks_until_inactive, weights_due
from chain.types import Hyperparameters, MetagraphSnapshot, Neuron, Submission, SubmissionPlan
from chain.weights import WeightVector, problems, weight_vector

if TYPE_CHECKING:
    from chain.sdk import BittensorChain

__all__ = [
    "NETWORKS",
    "Chain",
    "check_network",
    "ChainError",
    "PermanentChainError",
    "TransientChainError",
    "WeightsError",
    "Backoff",
    "Due",
    "blocks_until_inactive",
    "weights_due",
    "Hyperparameters",
    "MetagraphSnapshot",
    "Neuron",
    "Submission",
    "SubmissionPlan",
    "WeightVector",
    "problems",
    "weight_vector",
    "open_chain",
]


def open_chain(network: str, netuid: int, **kwargs: Any) -> BittensorChain:
    """``chain.sdk.open_chain``, importing the SDK only now (``PermanentChainError`` when the extra is missing)."""
    # lazy: bittensor is the optional [chain] extra
    from chain.sdk import open_chain as _open

    return _open(network, netuid, **kwargs)
