"""Validity benchmark: do a config's rewards track the known quality of the miners?

    python -m benchmarks.validity                       # every set and the hostile cases (benchmarks.suite)
    python -m benchmarks.validity ROUNDS TRUTH [--config X.toml] [--out DIR] [--set consensus.x=1 ...] [--lab rule=v ...]

ROUNDS is a rounds file in the project's round format (``.jsonl`` or ``.jsonl.gz``); TRUTH is a
``truth.json`` as in ``../shared/validity`` beside the checkout (``lc_winrate`` per honest miner, ``adversarial``
role -> miner, ``copy_of`` copier -> source) and may add ``sybil_groups`` (name -> miners) and
``majority_wrong`` (round id -> miners whose answer is wrong). Each round goes through the product's
own unit of work as the daemon runs it without the LM (``benchmarks.evaluate.replay``:
``validator.round.evaluate.evaluate_stored``, the record written into a memory store and folded into the ledger), and
the script prints (``benchmarks.validity_report``):

- Spearman between honest miners' total emissions and their quality, with a 95% bootstrap
  interval over rounds (seeded), and on split halves (rounds 1st/2nd half; models at even/odd
  rank) to show a gain is not one half's accident;
- every adversarial miner's share of emissions, whether copies paid (copy group / source alone),
  each sybil group's total share against an honest miner's mean share;
- per part of the composite (alignment, quality, ...) and per modifier (speed, top), the Spearman
  of its per-miner mean, and how often the best honest miner was an outlier or a copy.

Embedding is the expensive part: vectors are computed once with the project's MiniLM embedder and
cached on disk under ``--out`` by the SHA-256 of (embedder checksum, long-text policy, text), so
a config variant re-evaluates in seconds. ``--lab rule=value`` turns on a rule that was measured and not
shipped (``benchmarks.lab``); with ``--lab coverage_semantic=...`` every answer's sentences are embedded
too (``benchmarks.lab.sentences``) and cached the same way (``sentences-*.npz``, one matrix and its keys).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.data import VectorCache, read_rounds, read_settings, settings_arguments
from benchmarks.evaluate import replay
from benchmarks.validity_report import print_report, report
from validator.settings import load_settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.validity", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "rounds",
        type=Path,
        nargs="?",
        help="rounds file (.jsonl or .jsonl.gz); none: every set and the hostile cases (benchmarks.suite)",
    )
    parser.add_argument(
        "truth", type=Path, nargs="?", help="truth.json: lc_winrate per honest miner, adversaries, copies"
    )
    parser.add_argument(
        "--validity",
        type=Path,
        default=Path("../shared/validity"),
        help="the validity data (the suite's sets; default: beside the checkout)",
    )
    parser.add_argument("--no-hostile", action="store_true", help="the suite without the hostile cases")
    settings_arguments(parser, example="emissions.speed_weight=0")
    parser.add_argument("--out", type=Path, default=Path("out/validity"), help="vector cache and report.json")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--graded-only",
        action="store_true",
        help="only the rounds the LM's cached grades cover (benchmarks/lm_grades/): the subset they are measured on",
    )
    args = parser.parse_args(argv)
    settings, lab = read_settings(args)
    if args.rounds is None or args.truth is None:
        if args.rounds is not None:
            parser.error("a rounds file needs its truth.json")
        from benchmarks.suite import run

        shipped = load_settings(None, env={}, dotenv_path=None) if (args.config or args.set or args.lab) else None
        args.out.mkdir(parents=True, exist_ok=True)
        return run(settings, shipped, args.validity, args.out, hostile=not args.no_hostile, lab=lab)
    truth = json.loads(args.truth.read_text(encoding="utf-8"))
    rounds = read_rounds(args.rounds)
    # with --lab lm_grade_weight > 0 the LM's grades cached under benchmarks/lm_grades/ join the rounds they cover
    from benchmarks.lm_grades import GradeSource, grade_source

    if args.graded_only:
        rounds = [r for r in rounds if GradeSource().covers(r)]
        if not rounds:
            parser.error(
                f"{args.rounds}: no round is fully graded in benchmarks/lm_grades/ (python -m benchmarks.lm_grades)"
            )
    cache = VectorCache(args.out, settings)
    rep = report(replay(rounds, cache, settings, lab, grades=grade_source(lab)), truth, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(rep, indent=1), encoding="utf-8")
    print(json.dumps(rep, indent=1) if args.json else "", end="")
    if not args.json:
        print_report(rep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
