"""The chain edge as the rest of the program sees it: one small protocol, and the names of the networks.

``Chain`` is all the daemon, the CLI and their tests use: a metagraph snapshot
in, a weight submission out (``plan`` is the dry run, ``submit`` executes and
returns the record to store), and the hotkey that signs requests to miners. ``chain.sdk.BittensorChain`` implements it over
the Bittensor SDK (a live endpoint, or ``chain.testing.InMemorySubstrate``).
Errors are those of ``chain.errors``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from chain.errors import PermanentChainError

if TYPE_CHECKING:
    from chain.epistula import Signer
    from chain.types import MetagraphSnapshot, Submission, SubmissionPlan
    from chain.weights import WeightVector

# the SDK's named networks (bittensor/settings.py NETWORKS; tests/chain/test_contract.py keeps them in step)
NETWORKS = ("finney", "test", "local", "archive", "devnet")


def check_network(network: str) -> str:
    """``network`` when it names a network or a ``ws://``/``wss://`` endpoint, else ``PermanentChainError``."""
    if network in NETWORKS:
        return network
    if network.startswith(("ws://", "wss://")) and len(network.split("://", 1)[1]) > 0:
        return network
    raise PermanentChainError(
        f"unknown network {network!r}",
        kind="unknown network",
        hint=f"use one of {', '.join(NETWORKS)} or a ws://HOST:PORT endpoint",
    )


class Chain(Protocol):
    """A subnet seen from one validator hotkey."""

    netuid: int

    @property
    def hotkey(self) -> str:
        """The validator's hotkey (ss58): it signs submissions and is skipped among the miners."""
        ...

    def snapshot(self) -> MetagraphSnapshot:
        """The subnet at the chain head: neurons, tempo, weight-setting hyperparameters."""
        ...

    def plan(self, vector: WeightVector) -> SubmissionPlan:
        """The SDK's dry run of submitting ``vector``: nothing is signed or sent."""
        ...

    def submit(self, vector: WeightVector) -> Submission:
        """Sign and submit ``vector``; the record of what happened (a chain refusal is a failed record)."""
        ...

    def signer(self) -> Signer:
        """The hotkey's keypair (it signs the requests to miners, ``chain.epistula``): unlocked on first use."""
        ...

    def close(self) -> None: ...
