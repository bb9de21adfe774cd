"""The similarity sybil rule, measured and not shipped: answers far more alike than the round's are one voice.

The baseline is per round (independent honest answers to a factual question can be close, long answers on
one topic are all close under MiniLM): a pair is a sybil pair when its cosine is at least
``median + headroom * (1 - median)`` of the round's pair cosines and at least ``min_cosine``, and its word
sets overlap (Jaccard) at least ``jaccard``: rewording one answer keeps most of its words, independent
answers share few; and they share at least ``min_shared`` words that are not the prompt's (too little text
is no evidence of one author). Off since issue 24 (one round's similarity merged honest families of fine-tunes,
docs/validity.md); handed to the product as a ``voice_pairs`` rule (``consensus.extensions``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from consensus.filters import jaccard_matrix, words
from consensus.similarity import pair_values


def similar_pairs(
    texts: Sequence[str],
    sim: np.ndarray,
    candidates: np.ndarray,
    *,
    headroom: float,
    min_cosine: float,
    jaccard: float,
    min_shared: int = 0,
    prompt: str = "",
    text_words: Sequence[Sequence[str]] | None = None,
    lexical: np.ndarray | None = None,
) -> list[tuple[int, int]]:
    """Pairs (i, j) of candidates that are far more alike than the round's baseline (module docstring).

    min_shared: a pair must also share at least this many distinct words that are not the
        ``prompt``'s. Two independent right answers to a short factual prompt ("Australia's
        capital is Canberra." / "The capital of Australia is Canberra.") share the question's
        words and the one fact it asks for, and nothing else: that is agreement, not evidence of
        one author. Rewording an answer keeps many of its own words.
    text_words (every text's ``words``) and lexical (``jaccard_matrix`` of them, (n, n)): when the
        caller has them already.
    """
    cand = [int(i) for i in candidates]
    if len(cand) < 2:
        return []
    values = pair_values(sim, np.asarray(cand, dtype=np.intp))
    median = float(np.median(values))
    # a MAD-based z-score fails exactly when sybils are many: the pair cosines become bimodal and
    # the spread explodes; the headroom above the median does not depend on the spread
    bar = max(min_cosine, median + headroom * (1.0 - median))
    tokens = [tuple(words(texts[i]) if text_words is None else text_words[i]) for i in cand]
    lex = jaccard_matrix(tokens) if lexical is None else lexical[np.ix_(cand, cand)]
    sub = sim[np.ix_(cand, cand)]
    rows, cols = np.nonzero(np.triu((sub >= bar) & (lex >= jaccard), k=1))
    pairs = list(zip(rows.tolist(), cols.tolist()))
    if min_shared > 0:  # only for the pairs that are close already: set intersections are the costly part
        asked = set(words(prompt))
        own = [set(t) - asked for t in tokens]
        pairs = [(r, c) for r, c in pairs if len(own[r] & own[c]) >= min_shared]
    return [(cand[r], cand[c]) for r, c in pairs]
