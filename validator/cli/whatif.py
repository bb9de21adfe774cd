"""``validator whatif STORE --config NEW.toml``: what a changed configuration would have done to every miner."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from consensus.errors import ConfigError
from storage.codec import dumps
from storage.files import write_atomic
from validator.cli.common import (
    add_command,
    add_engine_args,
    add_profile_arg,
    add_selection_args,
    app_errors,
    committees_command,
    fail,
    failure_line,
    load,
    open_engine,
    selection_from,
    unwritable,
    with_progress,
)
from validator.replaying.ray_engine import RayEngineError
from validator.replaying.whatif_run import run_whatif, table, whatif_id_for
from validator.terminal import safe

ABOUT = """\
re-evaluate stored rounds under a changed config and compare every miner's emissions and weight

Re-evaluates the rounds of STORE (a daemon's store or the output of `validator replay ROUNDS.jsonl --out DIR`;
a directory or s3://bucket/prefix) under the settings of --config and/or --profile (`--profile seed`: what
the seed's rules would have paid), reusing the stored embeddings (embedding
again only when the model or the long-text policy changed, or none are stored), replays the ledger from the
first selected round under both configs and reports, per miner, old vs new total emissions, final weight and
rank, and per round whether consensus was reached and who joined or left it. New records go beside the
originals (rounds/<id>/replays/<whatif-id>/), which are never written. Writes OUT/whatif.json (the same bytes
whatever the engine); `validator report STORE --whatif OUT/whatif.json` shows it. The LM is not asked: the
LM's evidence stored with each round (polarity, short answers, arbitration, judge scores, the narrative) is
reused, and settings that do not apply offline (the LM's, the daemon's pace and limits) are the original
round's, so a config that changes nothing changes nothing.
"""

EPILOG = """\
example:  validator whatif runs/daemon --config stricter.toml --since 2026-11-01T00:00:00Z --engine ray --out
runs/whatif"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "whatif", ABOUT, epilog=EPILOG)
    p.add_argument("store", metavar="STORE", help="store URI or directory with rounds/")
    p.add_argument("--config", type=Path, default=None, help="TOML settings file with the changed configuration")
    add_profile_arg(p)
    add_selection_args(p)
    p.add_argument(
        "--out", type=Path, default=Path("runs/whatif"), help="directory of whatif.json (default: runs/whatif)"
    )
    p.add_argument(
        "--whatif-id", default=None, help="name of this what-if (default: a hash of the config and the selection)"
    )
    p.add_argument(
        "--committee-size",
        type=int,
        default=None,
        metavar="K",
        help="split every stored round into committees of about K as the daemon splits a tick (each committee "
        "evaluated as a round of its own, the ledger folded per tick) and compare every miner's weight; writes "
        "OUT/committees.json (docs/daemon.md)",
    )
    p.add_argument(
        "--committee-seed",
        default=None,
        help="seed of the committees' draw for --committee-size (default: the daemon's committees.secret)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_engine_args(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:

    source = args.store
    if args.config is None and args.profile is None:
        return fail("whatif", "name the changed configuration: --config NEW.toml, --profile NAME or both")
    if "://" not in source and not (Path(source) / "rounds").is_dir():
        return fail("whatif", f"{safe(source, 200)} is not a store with rounds/")
    try:
        selection = selection_from(args)
        settings, env = load(args, overrides={"lm": {"enabled": False}})
    except (ConfigError, ValueError) as exc:
        return fail("whatif", f"configuration error: {exc}")
    if (why := unwritable(args.out)) is not None:  # before the computation, not after it
        return fail("whatif", why)
    if args.committee_size is not None:
        return committees_command(args, settings, env, selection)
    whatif_id = args.whatif_id or whatif_id_for(settings, selection)
    try:
        with open_engine(args, settings, env, source) as engine:
            result = with_progress(
                args.no_progress,
                run_whatif,
                engine.store,
                settings,
                whatif_id=whatif_id,
                source=source,
                selection=selection,
                executor=engine.executor,
            )
    except RayEngineError as exc:
        return fail("whatif", exc)
    except app_errors() as exc:
        return fail("whatif", exc)
    report = result.to_json()
    out = args.out / "whatif.json"
    try:
        write_atomic(out, dumps(report))
    except OSError as exc:
        return fail("whatif", f"cannot write {safe(str(out), 200)}: {exc.strerror or exc}")
    print(table(report))
    print(f"\nwhatif.json: {safe(str(out), 200)}; new records: rounds/<id>/replays/{safe(whatif_id, 60)}/")
    for failure in result.failures:
        print(failure_line(failure), file=sys.stderr)
    return 0 if not result.failures else 1
