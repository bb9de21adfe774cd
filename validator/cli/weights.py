"""``validator weights show STORE``: a stored run's weights from its ledger (offline), and with a chain configured
what it would submit on chain now (nothing is sent)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chain.errors import ChainError
from validator.app import store_for
from validator.cli.common import add_command, add_config_arg, app_errors, fail, load
from validator.daemon.chain import edge as chain_edge
from validator.daemon.chain.flags import add_chain_args, chain_overrides
from validator.daemon.chain.show import render, weights_view
from validator.review import load_store
from validator.review.unpaid import Tally, explained, stored_identical, tally_rounds, weights_table
from validator.terminal import safe

ABOUT = """\
`weights show STORE`: the ledger's weights and why each 0; with --netuid what a subnet would receive

Weights on chain (docs/chain.md).
"""

ABOUT_SHOW = """\
print the ledger's weights (offline) and, with --netuid, what would be submitted on chain

Reads the ledger of STORE (ledger.json of a daemon run; else rebuilt from its records) and prints every
miner's weight, EMA of its paid share, canary accuracy, emissions, rounds in consensus, the round it was last
seen and, for a weight of 0, why (from the stored records). This needs no wallet and no chain. With --netuid
(or [chain] netuid) it also maps its hotkeys to the subnet's uids at the chain's head, and prints every uid
with its hotkey, ledger weight, share after the subnet's max-weight clip and u16 weight (what the SDK sends),
the vector's kind (ledger, padded with fillers to min_allowed_weights, keep-alive self-weight), deregistered
hotkeys, the SDK's dry run (set or commit, version key, fee, warnings, violations) and whether a submission is
due. Nothing is signed or sent.
"""

EPILOG_SHOW = """\
examples:  validator weights show runs/daemon
           validator weights show ./rounds --netuid 1 --network test --wallet validator"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "weights", ABOUT)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = add_command(
        actions, "show", ABOUT_SHOW, epilog=EPILOG_SHOW, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    show.add_argument("store", metavar="STORE", help="store URI or directory of a daemon run")
    add_chain_args(show, daemon=False)
    add_config_arg(show)
    show.set_defaults(run=run_show)


def run_show(args: argparse.Namespace) -> int:

    try:
        settings, _ = load(args, overrides=chain_overrides(args))
        store = store_for(args.store, settings)
        print(offline_view(store, args.store))
        if not settings.chain.enabled:
            return 0
        print()
        edge = chain_edge.open_edge(settings.chain)
        try:
            print(render(weights_view(store, edge, settings.chain.network, settings.chain.version_key)))
        finally:
            edge.close()
    except (ChainError, *app_errors()) as exc:
        return fail("weights show", " ".join(str(exc).split()))
    return 0


def offline_view(store, uri: str) -> str:
    """The ledger's weights with why each 0 (``validator.review.unpaid``), from the store alone."""

    review = load_store(store)
    for s in review.skipped:  # as `validator report` says them: the reasons below leave these rounds out
        print(f"skipped {safe(s.key, 120)}: {safe(s.reason, 200)}", file=sys.stderr)
    ledger = review.ledger
    if ledger is None and review.rounds:
        ledger = review.ledger_trajectory()[-1]
    if ledger is None and "://" not in uri and not Path(uri).is_dir():
        raise ValueError(f"{uri}: no such directory, so no ledger to show (give the --store of a daemon run)")
    if ledger is None:
        raise ValueError(f"{uri} holds no ledger and no evaluated round: nothing to weight")
    tally = tally_rounds(review.rounds)
    lines = [
        f"ledger of {uri} after round {ledger.last_sequence}: {ledger.emitted:,} units emitted in "
        f"{ledger.rounds} rounds ({len(ledger.miners)} miners; weight = EMA x canary accuracy, normalised)",
        *weights_table(ledger, tally),
    ]
    lines += explained(ledger, tally, stored_identical(store, tally.last[-Tally.KEEP :]))
    return "\n".join(lines)
