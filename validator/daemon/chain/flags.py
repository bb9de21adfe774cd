"""The chain flags of ``validator daemon`` and ``validator weights show``: the top layer of the ``[chain]`` settings."""

from __future__ import annotations

import argparse
from typing import Any

FLAGS = {
    "netuid": "netuid",
    "network": "network",
    "wallet": "wallet",
    "hotkey": "hotkey",
    "wallet_path": "wallet_path",
    "set_weights": "set_weights",
}


def add_chain_args(p: argparse.ArgumentParser, *, daemon: bool) -> None:
    """``--netuid --network --wallet --hotkey --wallet-path``, and ``--set-weights`` for the daemon."""
    g = p.add_argument_group(
        "chain mode",
        "a Bittensor subnet (docs/chain.md; needs the `chain` extra); each flag "
        "overrides its [chain] setting (VALIDATOR_CHAIN__*, .env)",
    )
    g.add_argument(
        "--netuid",
        type=int,
        default=None,
        metavar="N",
        help="the subnet: miners are its metagraph's neurons serving an axon, other validators and (on a public "
        "network) private addresses left out, re-read every [chain] refresh_blocks (100) blocks; each request "
        "signed with the validator's hotkey (default: [chain] netuid; none: the miners file or the embedded pool)"
        if daemon
        else "the subnet whose uids the ledger's hotkeys are mapped to (default: [chain] netuid)",
    )
    g.add_argument(
        "--network",
        default=None,
        metavar="NET",
        help="finney, test, local, archive, devnet or ws://HOST:PORT (default: finney)",
    )
    g.add_argument(
        "--wallet",
        default=None,
        metavar="NAME",
        help="wallet of the validator's hotkey (default: default); it signs requests and weights, and "
        "is never weighted itself",
    )
    g.add_argument("--hotkey", default=None, metavar="NAME", help="hotkey name in the wallet (default: default)")
    g.add_argument(
        "--wallet-path",
        default=None,
        metavar="DIR",
        help="directory of the wallets (default: the SDK's, ~/.bittensor/wallets; under the systemd unit "
        "/etc/consensus-validator/wallets, docs/deploy.md)",
    )
    if daemon:
        g.add_argument(
            "--set-weights",
            action="store_true",
            default=None,
            help="submit the ledger's weights on chain (at most once per tempo, never faster than "
            "weights_rate_limit; the SDK commits them when the subnet uses commit-reveal); "
            "without it they are only planned, and the plans stored and reported",
        )


def chain_overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """``{"chain": {...}}`` of the chain flags given (none: nothing to override)."""
    given = {field: getattr(args, flag) for flag, field in FLAGS.items() if getattr(args, flag, None) is not None}
    return {"chain": given} if given else {}
