"""Measured, not shipped: identical texts from several identities as a "common answer" with no first sender.

The product (``consensus.restatements``) makes the first of several identical long texts to reach the validator
their source and every later one a copy (issue 46: the first sender keeps its pay, copies sent after it never lower
it). The hostile case ``front-running`` shows the price: three honest miners of one popular model send one text
and an identity that sends it 0.5 s earlier is paid for it. This module replaces that, for measurement only, by
one of two rules for a text sent verbatim (the same normalised words, ``copy_min_words`` of their own) by at least
``min_count`` identities:

- ``share``: nobody owns it; the identities share one payout (as answers tied in arrival do);
- ``voices``: nobody owns it; each identity is paid on its merits as an original.

Run a benchmark under one of them (the rest of its command line as usual):

    python -m benchmarks.lab.common_answer share 3 hostile
    python -m benchmarks.lab.common_answer voices 3 validity ../shared/validity/rounds.jsonl.gz \
        ../shared/validity/truth.json --no-hostile

Figures and why neither ships: benchmarks/journal/validity.md, "First sender, common answers and public quotes".
"""

from __future__ import annotations

import contextlib
import dataclasses
import runpy
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

import consensus.stages
from consensus.groups import components
from consensus.restatements import Derivation, find_derivations

MODES = ("share", "voices")


def common_groups(
    sequences: Sequence[Sequence[str]], candidates: np.ndarray, min_words: int, min_count: int
) -> list[list[int]]:
    """Groups of at least ``min_count`` candidates whose normalised words are identical (``min_words`` distinct)."""
    by_text: dict[tuple[str, ...], list[int]] = {}
    for i in sorted(int(i) for i in candidates):
        if len(set(sequences[i])) >= min_words:
            by_text.setdefault(tuple(sequences[i]), []).append(i)
    return [g for g in by_text.values() if len(g) >= min_count]


def as_common(found: Derivation, groups: Sequence[Sequence[int]], mode: str) -> Derivation:
    """``found`` with every member of ``groups`` an original (``voices``), or tied with its group (``share``)."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: one of {MODES}")
    copy_of = found.copy_of.copy()
    novelty = found.novelty.copy()
    sources, residual, evidence = list(found.sources), list(found.residual), list(found.evidence)
    for g in groups:
        for i in g:
            copy_of[i], novelty[i], sources[i], residual[i], evidence[i] = -1, 1.0, (), None, ""
    pairs = [(min(a, b), max(a, b)) for t in found.tied for a, b in zip(t, t[1:])]
    if mode == "share":
        pairs += [(g[0], j) for g in groups for j in g[1:]]
    return dataclasses.replace(
        found,
        copy_of=copy_of,
        novelty=novelty,
        sources=tuple(sources),
        residual=tuple(residual),
        evidence=tuple(evidence),
        tied=components(pairs),
    )


@contextlib.contextmanager
def common_answer(mode: str, min_count: int) -> Iterator[None]:
    """Within the block, every round's copy stage applies ``mode`` to identical texts of ``min_count`` identities."""

    def patched(
        sequences: Sequence[Sequence[str]], latencies: np.ndarray, candidates: np.ndarray, **kw: Any
    ) -> Derivation:
        found = find_derivations(sequences, latencies, candidates, **kw)
        groups = common_groups(sequences, candidates, int(kw.get("min_words", 12)), min_count)
        return as_common(found, groups, mode) if groups else found

    original = getattr(consensus.stages, "find_derivations")  # noqa: B009 (the stage's own name for it)
    setattr(consensus.stages, "find_derivations", patched)  # noqa: B010
    try:
        yield
    finally:
        setattr(consensus.stages, "find_derivations", original)  # noqa: B010


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[0] not in MODES or not args[1].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    mode, count, bench, rest = args[0], int(args[1]), args[2], args[3:]
    with common_answer(mode, count):
        sys.argv = [f"benchmarks.{bench}", *rest]
        runpy.run_module(f"benchmarks.{bench}", run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
