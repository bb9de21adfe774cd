"""``validator weights show STORE``: the weights a stored run would submit on chain now (nothing is sent)."""

from __future__ import annotations

import argparse

from validator.chain_mode.flags import add_chain_args, chain_overrides
from validator.cli.common import add_config_arg, app_errors, fail, load


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "weights",
        help="the ledger's weights as a subnet would receive them (docs/chain.md)",
        description="Weights on chain (docs/chain.md).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show",
        help="print what would be submitted: uids, hotkeys, float and u16 weights, the plan",
        description="Reads the ledger of STORE (ledger.json of a daemon run; else rebuilt from its records), maps "
        "its hotkeys to the subnet's uids at the chain's head, and prints every uid with its hotkey, "
        "ledger weight, share after the subnet's max-weight clip and u16 weight (what the SDK sends), "
        "the vector's kind (ledger, padded with fillers to min_allowed_weights, keep-alive "
        "self-weight), deregistered hotkeys, the SDK's dry run (set or commit, version key, fee, "
        "warnings, violations) and whether a submission is due. Nothing is signed or sent.",
        epilog="example:  validator weights show ./rounds --netuid 1 --network test --wallet validator",
    )
    show.add_argument("store", metavar="STORE", help="store URI or directory of a daemon run")
    add_chain_args(show, daemon=False)
    add_config_arg(show)
    show.set_defaults(run=run_show)


def run_show(args: argparse.Namespace) -> int:
    from chain.errors import ChainError
    from validator.app import store_for
    from validator.chain_mode import edge as chain_edge
    from validator.chain_mode.show import render, weights_view

    try:
        settings, _ = load(args, overrides=chain_overrides(args))
        if not settings.chain.enabled:
            return fail("weights show", "which subnet? give --netuid N (or [chain] netuid)")
        store = store_for(args.store, settings)
        edge = chain_edge.open_edge(settings.chain)
        try:
            print(render(weights_view(store, edge, settings.chain.network)))
        finally:
            edge.close()
    except (ChainError, *app_errors()) as exc:
        return fail("weights show", " ".join(str(exc).split()))
    return 0
