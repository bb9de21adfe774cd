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
PUBLIC_NETWORKS = ("finney", "test", "archive", "devnet")  # "local" is only an address: ws://127.0.0.1:9944
# the genesis hashes of the public chains: a node at any address (a finney lite node on 127.0.0.1) serves one of them
PUBLIC_GENESIS = {
    "0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03": "finney",
    "0x8f9cf856bf558a14440e75569c9e58594757048d7b3a84b5d25f6bd978263105": "test",
}


def development_uri(uri: str) -> bool:
    """Is ``uri`` a development key (``//Alice``, ``//Bob//stash``...)? A URI that starts with ``//`` derives from
    the well-known development phrase: anyone holds its private key (and so the committee secret derived from it)."""
    return uri.strip().startswith("//") or uri.strip().startswith("bottom drive obey lake curtain smoke basket")


def refuse_development_key(uri: str, network: str, genesis_hash: str | None) -> None:
    """``PermanentChainError`` (one line, exit 2) for a development URI as the hotkey on a public chain."""
    if uri and development_uri(uri) and public_network(network, genesis_hash):
        raise PermanentChainError(
            f"the hotkey is a development URI on a public chain ({network}): its private key is public, so are "
            f"its signatures and the committee draw",
            kind="wrong wallet",
            hint="use a wallet's hotkey (--wallet/--hotkey; [chain] hotkey_uri is for development chains)",
        )


def public_network(network: str, genesis_hash: str | None) -> bool:
    """Is this a public chain? From its name, else from the genesis hash its node serves (None: not read yet: public,
    the safe answer); never from the node's address, which says where the node runs, not which chain it follows."""
    if network in PUBLIC_NETWORKS:
        return True
    return genesis_hash is None or genesis_hash.lower() in PUBLIC_GENESIS


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

    def weights_row(self, uid: int) -> tuple[tuple[int, int], ...]:
        """The weights ``uid`` has on chain now, (dest uid, u16) as subtensor stores them (max-upscaled)."""
        ...

    def genesis_hash(self) -> str:
        """The hash of the chain's block 0 (``0x...``): which chain the node follows (``public_network``)."""
        ...

    def signer(self) -> Signer:
        """The hotkey's keypair (it signs the requests to miners, ``chain.epistula``): unlocked on first use."""
        ...

    def close(self) -> None: ...
