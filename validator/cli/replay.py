"""``validator replay SOURCE``: evaluate rounds from a JSONL file, or re-evaluate rounds in a store, offline."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from datetime import datetime, timezone
from pathlib import Path

from consensus.errors import ConfigError
from embedding.warmup import open_then_preload, preload
from storage.base import StoreError
from validator.cli.common import (
    add_command,
    add_config_arg,
    add_engine_args,
    add_lm_arg,
    add_selection_args,
    app_errors,
    committees_command,
    fail,
    failure_line,
    load,
    open_engine,
    selection_from,
    with_progress,
)
from validator.replaying.ray_engine import RayEngineError
from validator.replaying.replay_run import replay_file, replay_id_for, replay_store
from validator.terminal import miner_table, safe

ABOUT = """\
evaluate a JSONL file of rounds, or re-evaluate the rounds in a store, without miners

SOURCE is a JSON Lines file (see docs/round-format.md): every round is evaluated; per round OUT/rounds/<id>/
gets input.json, evaluation.json, heatmap.png and embeddings.npz; OUT/summary.json gets per-miner totals and
failures; bad lines are reported by line and field and skipped. SOURCE can also be a store (a directory the
daemon wrote, or s3://bucket/prefix): the stored rounds (filtered by --round-ids/--since/--until) are
re-evaluated with the current or --config settings, stored embeddings reused when the model is the same, and
the LM's evidence stored with each round reused (no LM call; --lm asks the LM again, its answers cached on
disk); settings that do not apply offline (the LM's, the daemon's pace and limits) are the original round's;
new records go to rounds/<id>/replays/<replay-id>/ beside the originals (never overwriting) and a diff is
printed: who moved in or out of consensus, emission changes per miner. The exit code is 1 if any round failed.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "replay", ABOUT)
    p.add_argument("rounds", metavar="SOURCE", help="JSON Lines file, or a store URI / directory with rounds/")
    p.add_argument("--out", default="runs/replay", help="output store: a directory (default: runs/replay)")
    add_config_arg(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_selection_args(p, "store replay: ")
    p.add_argument("--replay-id", default=None, help="store replay: name of this replay (default: time + config hash)")
    add_lm_arg(
        p,
        "false for replay: a store's rounds reuse the LM's stored evidence; --lm asks the LM again "
        "(repeated calls answered from the disk cache)",
    )
    p.add_argument(
        "--committee-size",
        type=int,
        default=None,
        metavar="K",
        help="store replay: split every stored round into committees of about K as the daemon splits a tick, "
        "as `validator whatif --committee-size` (OUT/committees.json; nothing is written to the store)",
    )
    p.add_argument("--committee-seed", default=None, help="seed of the draw (default: committees.secret)")
    add_engine_args(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:

    source = args.rounds
    from_store = not Path(source).is_file()
    if from_store:  # a file replay opens the model first (below)
        preload()  # scikit-learn imports on a background thread while the model loads and embeds
    if from_store and "://" not in source and not (Path(source) / "rounds").is_dir():
        return fail("replay", f"{source} is neither a rounds file nor a store with rounds/")
    try:
        # offline: LM checks are not time-bound, so a replay with a warm LM cache gives the same records
        settings, env = load(args, defaults={"lm": {"round_budget_s": 0.0}})
    except (ConfigError, ValueError) as exc:
        return fail("replay", f"configuration error: {exc}")
    if args.engine == "ray" and settings.lm.enabled:
        return fail("replay", "--engine ray runs without the LM (--no-lm)")
    try:
        selection = selection_from(args) if from_store else None
    except ValueError as exc:
        print(f"validator replay: bad time: {exc}", file=sys.stderr)
        return 2
    if args.committee_size is not None:
        if not from_store:
            return fail("replay", "--committee-size splits a store's rounds: replay the file with --out first")

        offline = dataclasses.replace(settings, lm=dataclasses.replace(settings.lm, enabled=False))
        return committees_command(args, offline, env, selection, command="replay", source=source)

    try:
        # repeated LM calls are answered from the cache: a replay re-asks nothing it asked before
        with open_engine(args, settings, env, source if from_store else str(args.out), lm_cache=True) as engine:
            if from_store:
                return _replay_store(args, engine, selection)
            summary = _replay_file(args, engine)
    except StoreError as exc:
        return fail("replay", f"store: {exc}")
    except (RayEngineError, *app_errors()) as exc:
        return fail("replay", exc)
    return _print_file_summary(args, summary)


def _print_file_summary(args: argparse.Namespace, summary) -> int:
    print(miner_table(summary))
    print(
        f"\n{len(summary.evaluated)} round(s) evaluated, {summary.reached} reached consensus, "
        f"{len(summary.failures)} failed. Output: {args.out}"
    )
    for failure in summary.failures:
        print(f"  failed: {safe(failure.error, 300)}", file=sys.stderr)
    return 0 if summary.ok else 1


def _replay_file(args: argparse.Namespace, engine):
    """A rounds file evaluated into ``--out``, in this process or on Ray: the same files either way."""

    if engine.embedder is not None:
        open_then_preload(engine.embedder)  # the model opens while the file is read; the imports follow it
    return with_progress(
        args.no_progress, replay_file, args.rounds, engine.store, engine.settings, executor=engine.executor
    )


def _replay_store(args: argparse.Namespace, engine, selection) -> int:

    now = datetime.fromtimestamp(engine.clock(), timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    replay_id = args.replay_id or replay_id_for(engine.settings, now)
    result = with_progress(
        args.no_progress,
        replay_store,
        engine.store,
        engine.settings,
        replay_id=replay_id,
        selection=selection,
        executor=engine.executor,
    )
    return _print_store_replay(replay_id, result)


def _print_store_replay(replay_id: str, result) -> int:
    print(
        f"replay {replay_id}: {len(result.diffs)} round(s) re-evaluated, {result.skipped} outside the filter, "
        f"{len(result.failures)} failed"
    )
    for d in result.diffs:
        moved = []
        if d.joined:
            moved.append("joined consensus: " + ", ".join(safe(m, 32) for m in d.joined))
        if d.left:
            moved.append("left consensus: " + ", ".join(safe(m, 32) for m in d.left))
        before, after = d.consensus_before, d.consensus_after
        score = f"consensus {before if before is None else round(before, 3)} -> {after if after is None else round(after, 3)}"
        print(
            f"  {safe(d.round_id, 40)}: {score}; "
            + ("; ".join(moved) if moved else "no membership change")
            + ("" if d.embeddings_reused else " (re-embedded)")
        )
    changes = result.miner_changes()
    if changes:
        print("emission changes per miner:")
        for miner, change in sorted(changes.items(), key=lambda kv: (kv[1], kv[0])):
            print(f"  {safe(miner, 42):<42} {change:+,}")
    else:
        print("no emission changes")
    for failure in result.failures:
        print(failure_line(failure), file=sys.stderr)
    return 0 if not result.failures else 1
