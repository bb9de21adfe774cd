"""Sentence coverage: how much of what the peers say, sentence by sentence, an answer also says.

The word coverage of ``consensus.quality`` counts shared words; this counts shared statements. Every
answer arrives (``benchmarks.lab.sentences``) as the unit vectors of its sentences; for
a peer answer j, answer i covers each of j's sentences as well as its closest sentence matches
it (BERTScore-style soft recall: the maximum cosine, clipped to [0, 1]), or, with a threshold,
fully when that maximum reaches it and not at all otherwise. share[i, j] is the mean over j's
sentences. Pure numpy: arrays in, an (n, n) matrix out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def sentence_coverage_matrix(
    sentences: Sequence[np.ndarray], *, threshold: float = 0.0, floor: float = 0.0
) -> np.ndarray:
    """(n, n) share[i, j]: the share of answer j's sentences that answer i also says.

    sentences: one (k_i, d) array of unit sentence vectors per answer (k_i = 0: no sentence).
    threshold: 0 = soft recall (each of j's sentences counts its best cosine in i); above 0, a
        sentence counts 1 when its best cosine in i reaches ``threshold``, else 0.
    floor: soft recall only: cosines are rescaled by (c - floor) / (1 - floor), clipped at 0, so
        the similarity any two sentences on one topic share (about 0.3-0.5 under MiniLM) does
        not count as saying the same thing.

    share[j, j] = 1 for an answer with sentences; rows and columns of an answer without any are 0.
    """
    n = len(sentences)
    sizes = np.array([len(s) for s in sentences], dtype=np.intp)
    out = np.zeros((n, n), dtype=np.float64)
    has = np.flatnonzero(sizes > 0)
    if not len(has):
        return out
    stack = np.concatenate([np.asarray(sentences[int(i)], dtype=np.float64) for i in has])
    sim = stack @ stack.T  # (N, N) over every sentence of the round
    starts = np.concatenate([[0], np.cumsum(sizes[has])[:-1]])
    best = np.maximum.reduceat(sim, starts, axis=0)  # (answers, N): each sentence's best match in each answer
    if threshold > 0:
        best = (best >= threshold - 1e-9).astype(np.float64)
    else:
        best = np.clip((best - floor) / (1.0 - floor), 0.0, 1.0)
    out[np.ix_(has, has)] = np.add.reduceat(best, starts, axis=1) / sizes[has][None, :]
    return out
