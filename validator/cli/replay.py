"""``validator replay SOURCE``: evaluate rounds from a JSONL file, or re-evaluate rounds in a store, offline."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from validator.terminal import miner_table, safe


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay", help="evaluate a JSONL file of rounds, or re-evaluate the rounds in a store, without miners",
        description="SOURCE is a JSON Lines file (see docs/round-format.md): every round is evaluated; per round "
                    "OUT/rounds/<id>/ gets input.json, evaluation.json and heatmap.png; OUT/summary.json gets "
                    "per-miner totals and failures; bad lines are reported by line and field and skipped. "
                    "SOURCE can also be a store (a directory the daemon wrote, or s3://bucket/prefix): the stored "
                    "rounds (filtered by --round-ids/--since/--until) are re-evaluated with the current or --config "
                    "settings, stored embeddings reused when the model is the same, LM answers taken from the cache; "
                    "new records go to rounds/<id>/replays/<replay-id>/ beside the originals (never overwriting) "
                    "and a diff is printed: who moved in or out of consensus, emission changes per miner. "
                    "The exit code is 1 if any round failed.")
    p.add_argument("rounds", metavar="SOURCE", help="JSON Lines file, or a store URI / directory with rounds/")
    p.add_argument("--out", default="runs/replay", help="output store: a directory (default: runs/replay)")
    p.add_argument("--config", type=Path, default=None, help="TOML settings file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--round-ids", default=None, help="store replay: only these round ids (comma-separated)")
    p.add_argument("--since", default=None, help="store replay: rounds started at or after this ISO time (UTC)")
    p.add_argument("--until", default=None, help="store replay: rounds started before this ISO time (UTC)")
    p.add_argument("--replay-id", default=None, help="store replay: name of this replay (default: time + config hash)")
    p.add_argument("--lm", action=argparse.BooleanOptionalAction, default=None,
                   help="use the LM for polarity and narratives (SERVER_URL, or the embedded local LM); "
                        "replay answers repeated LM calls from the cache (default: the [lm] enabled setting, off)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from consensus.errors import ConfigError, EmbeddingError
    from consensus.warmup import preload
    from storage import open_store

    preload()  # scikit-learn imports on a background thread while the model loads and embeds

    source = args.rounds
    from_store = not Path(source).is_file()
    if from_store and "://" not in source and not (Path(source) / "rounds").is_dir():
        print(f"validator replay: {source} is neither a rounds file nor a store with rounds/", file=sys.stderr)
        return 2
    try:
        from validator.settings import load_settings

        settings = load_settings(args.config)
        store = open_store(source if from_store else str(args.out))
    except (ConfigError, ValueError) as exc:
        print(f"validator replay: configuration error: {exc}", file=sys.stderr)
        return 2
    from tqdm import tqdm

    from consensus.embed import load_embedder
    from validator.replay import replay_file

    try:
        embedder = load_embedder(settings.embedding.runtime, threads=settings.embedding.threads,
                                 long_texts=settings.embedding.policy())
    except EmbeddingError as exc:
        print(f"validator replay: {exc}", file=sys.stderr)
        return 2
    use_lm = settings.lm.enabled if args.lm is None else args.lm
    with contextlib.ExitStack() as stack:
        handle = None
        if use_lm:
            from lm.errors import LocalServerError
            from validator.lm_session import open_client
            from validator.round import LMHandle
            from validator.settings import load_lm_config

            try:
                lm_config = load_lm_config()
                client = stack.enter_context(open_client(lm_config, cache=True))
            except (ConfigError, LocalServerError) as exc:
                print(f"validator replay: LM: {exc}", file=sys.stderr)
                return 2
            handle = LMHandle(client, lm_config)
        if from_store:
            return _replay_store(args, store, settings, embedder, handle)
        with open(source, "rb") as fh:
            total = sum(1 for line in fh if line.strip())
        with tqdm(total=total, unit="round", disable=args.no_progress, file=sys.stderr) as bar:
            summary = replay_file(source, store, settings, embedder, on_line=lambda _line: bar.update(1),
                                  lm=handle)
    print(miner_table(summary))
    print(f"\n{len(summary.evaluated)} round(s) evaluated, {summary.reached} reached consensus, "
          f"{len(summary.failures)} failed. Output: {args.out}")
    for failure in summary.failures:
        print(f"  failed: {safe(failure['error'], 300)}", file=sys.stderr)
    return 0 if summary.ok else 1


def _replay_store(args: argparse.Namespace, store, settings, embedder, handle) -> int:
    from datetime import datetime, timezone

    from storage.base import StoreError
    from validator.replay import RoundSelection, replay_id_for, replay_store

    ids = frozenset(x.strip() for x in args.round_ids.split(",") if x.strip()) if args.round_ids else None
    selection = RoundSelection(ids, args.since, args.until)
    try:
        for bound in (args.since, args.until):
            if bound is not None:
                datetime.fromisoformat(bound.replace("Z", "+00:00"))
    except ValueError as exc:
        print(f"validator replay: bad time: {exc}", file=sys.stderr)
        return 2
    replay_id = args.replay_id or replay_id_for(settings, datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
    try:
        result = replay_store(store, settings, embedder, replay_id=replay_id, selection=selection, lm=handle)
    except StoreError as exc:
        print(f"validator replay: store: {exc}", file=sys.stderr)
        return 2
    print(f"replay {replay_id}: {len(result.diffs)} round(s) re-evaluated, {result.skipped} outside the filter, "
          f"{len(result.failures)} failed")
    for d in result.diffs:
        moved = []
        if d.joined:
            moved.append("joined consensus: " + ", ".join(safe(m, 32) for m in d.joined))
        if d.left:
            moved.append("left consensus: " + ", ".join(safe(m, 32) for m in d.left))
        before, after = d.consensus
        score = f"consensus {before if before is None else round(before, 3)} -> {after if after is None else round(after, 3)}"
        print(f"  {safe(d.round_id, 40)}: {score}; " + ("; ".join(moved) if moved else "no membership change")
              + ("" if d.embeddings_reused else " (re-embedded)"))
    changes = result.miner_changes()
    if changes:
        print("emission changes per miner:")
        for miner, change in sorted(changes.items(), key=lambda kv: (kv[1], kv[0])):
            print(f"  {safe(miner, 42):<42} {change:+,}")
    else:
        print("no emission changes")
    for failure in result.failures:
        print(f"  failed: {safe(str(failure), 300)}", file=sys.stderr)
    return 0 if not result.failures else 1
