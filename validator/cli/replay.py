"""``validator replay ROUNDS.jsonl``: evaluate rounds from a file, offline."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from validator.terminal import miner_table, safe


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay", help="evaluate every round of a JSONL file and store records, heatmaps and a summary",
        description="Evaluate every round in ROUNDS (JSON Lines, see docs/round-format.md). Per round, "
                    "OUT/rounds/<id>/ gets input.json, evaluation.json and heatmap.png; OUT/summary.json "
                    "gets per-miner totals and failures. Bad lines are reported by line and field and "
                    "skipped; the exit code is 1 if any round failed.")
    p.add_argument("rounds", type=Path, help="JSON Lines file, one round per line")
    p.add_argument("--out", default="runs/replay", help="output store: a directory (default: runs/replay)")
    p.add_argument("--config", type=Path, default=None, help="TOML settings file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--lm", action=argparse.BooleanOptionalAction, default=None,
                   help="use the LM for polarity and narratives (SERVER_URL, or the embedded local LM); "
                        "replay answers repeated LM calls from the cache (default: the [lm] enabled setting, off)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from consensus.errors import ConfigError, EmbeddingError
    from consensus.warmup import preload
    from storage import open_store

    preload()  # scikit-learn imports on a background thread while the model loads and embeds

    if not args.rounds.is_file():
        print(f"validator replay: no such file: {args.rounds}", file=sys.stderr)
        return 2
    try:
        from validator.settings import load_settings

        settings = load_settings(args.config)
        store = open_store(str(args.out))
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
    with args.rounds.open("rb") as fh:
        total = sum(1 for line in fh if line.strip())
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
        with tqdm(total=total, unit="round", disable=args.no_progress, file=sys.stderr) as bar:
            summary = replay_file(args.rounds, store, settings, embedder, on_line=lambda _line: bar.update(1),
                                  lm=handle)
    print(miner_table(summary))
    print(f"\n{len(summary.evaluated)} round(s) evaluated, {summary.reached} reached consensus, "
          f"{len(summary.failures)} failed. Output: {args.out}")
    for failure in summary.failures:
        print(f"  failed: {safe(failure['error'], 300)}", file=sys.stderr)
    return 0 if summary.ok else 1
