"""Lab (2026-11-26, issue 38): would MiniLM read a long reference's claims where the word rule cannot?

    python -m benchmarks.claim_sentences [--out DIR] [--case NAME ...]

``consensus.reference.claim_shares`` reads a claim as its words: an honest answer in plain other words ("a saucer
of apple vinegar", "a fortnight") states few of them, a glossary of the reference's terms many. This measures the
alternative the word rule leaves open, on every hostile case whose round has a long reference: each claim (an
asserted sentence of the reference, ``consensus.reference.asserted``) against each sentence or line of an answer,
embedded by the project's MiniLM (vectors cached under ``--out`` as ``benchmarks.hostile`` caches them); an answer's
sentence-level claim similarity is the mean over the claims of the best cosine of any of its sentences. Prints,
per case and answer, its role, the word rule's claim share and that similarity, so one can see whether a threshold
would separate the honest plain-words answers from the glossaries, half copies and listers. Nothing in the product
reads it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

from benchmarks.data import CachedEmbedder, VectorCache, read_settings, settings_arguments
from benchmarks.hostile_spec import load_cases
from consensus.reference import asserted, claim_shares, short_answer

_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences and lines of ``text`` that have a word."""
    return [s.strip() for s in _SPLIT.split(text) if re.search(r"[^\W\d_]", s)]


def sentence_claim_similarity(claims: np.ndarray, parts: np.ndarray) -> float:
    """Mean over the claims (rows of ``claims``) of the best cosine of any row of ``parts``; unit rows."""
    if not len(claims) or not len(parts):
        return 0.0
    return float(np.mean(np.max(claims @ parts.T, axis=1)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.claim_sentences", description=__doc__.split("\n\n")[0])
    settings_arguments(parser)
    parser.add_argument("--out", type=Path, default=Path("out/hostile"), help="vector cache")
    parser.add_argument("--case", action="append", default=[], metavar="NAME")
    args = parser.parse_args(argv)
    settings, _ = read_settings(args)
    embedder = CachedEmbedder(VectorCache(args.out, settings))
    print("| case | answer | role | word claim share | sentence claim similarity |")
    print("|---|---|---|---|---|")
    for case in load_cases(names=args.case or None):
        r = case.round
        if not r.reference or short_answer(r.reference, r.prompt):
            continue
        claims = sentences(asserted(r.reference))
        role = {m: name for name, members in case.roles.items() for m in members}
        shares = claim_shares({i: x.text for i, x in enumerate(r.responses)}, r.reference, r.prompt)
        claim_vectors = embedder.embed(claims).vectors
        for i, x in enumerate(r.responses):
            parts = sentences(x.text)
            similarity = sentence_claim_similarity(claim_vectors, embedder.embed(parts).vectors if parts else [])
            print(
                f"| {case.name} | {x.miner} | {role.get(x.miner, '')} | {shares.get(i, 0.0):.3f} | {similarity:.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
