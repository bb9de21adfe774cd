"""Sentence vectors: each answer cut into sentences, each sentence embedded by the same model.

The lab rule ``coverage_semantic`` (benchmarks/lab, docs/validity.md) grades an answer
by how much of its peers' content it also says, sentence by sentence; this module is its edge.
``split_sentences`` is pure (a small rule-based splitter: line breaks, list items, and ``.``, ``!``
or ``?`` before a capital or a digit); ``sentence_vectors`` embeds every sentence of a round in one
call to the ``Embedder`` (whose memo embeds a sentence met before only once) and returns one
(k_i, d) array of unit rows per answer, which the lab's coverage factor reads
(``benchmarks.lab.extensions``; ``benchmarks.validity`` caches them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from consensus.embedder import Embedder

# a sentence ends at . ! ? (closing quotes or brackets allowed) followed by a space and a capital,
# a digit or an opening quote / bracket / markdown mark; "e.g. the" and "3.5 m" do not end one
_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]*])|(?<=[.!?][\"')\]*]{2}))\s+(?=[\"'(\[*_]*[A-Z0-9])")
# list bullets, numbered items, headings and quote marks at the start of a line carry no content
_LEAD = re.compile(r"^\s*(?:[-*+•>#]+|\d{1,3}[.)])\s+")
_WORD = re.compile(r"\w+")
MAX_SENTENCES = 40  # per answer; longer answers are cut into this many runs of sentences (cost bound)


def split_sentences(text: str, *, max_sentences: int = MAX_SENTENCES, min_words: int = 2) -> list[str]:
    """The sentences of ``text``, in order: at most ``max_sentences``, each of at least ``min_words`` words.

    Lines are split first (answers are often lists), then sentences within a line. Pieces with
    fewer than ``min_words`` words ("**Step 1:**", "---") are dropped, unless nothing else is
    left: a short answer ("Yes.") is its own one sentence; an empty text has none. An answer with
    more than ``max_sentences`` sentences is cut into that many balanced runs of consecutive
    sentences (joined by a space), so every sentence is still embedded and the cost is bounded.

    >>> split_sentences("Paris is the capital. It is in France!\\n- Lyon is not.")
    ['Paris is the capital.', 'It is in France!', 'Lyon is not.']
    >>> split_sentences("Yes.")
    ['Yes.']
    """
    if max_sentences < 1:
        raise ValueError(f"max_sentences must be >= 1, got {max_sentences}")
    pieces = []
    for line in text.splitlines():
        line = _LEAD.sub("", line).strip()
        pieces.extend(p.strip() for p in _END.split(line) if p.strip())
    kept = [p for p in pieces if len(_WORD.findall(p)) >= min_words]
    if not kept:
        whole = " ".join(text.split())
        return [whole] if whole else []
    if len(kept) <= max_sentences:
        return kept
    edges = [round(k * len(kept) / max_sentences) for k in range(max_sentences + 1)]
    return [" ".join(kept[a:b]) for a, b in zip(edges[:-1], edges[1:])]


def sentence_vectors(
    embedder: Embedder, texts: Sequence[str], *, max_sentences: int = MAX_SENTENCES
) -> tuple[np.ndarray, ...]:
    """One (k_i, d) float32 array of unit sentence vectors per text (k_i = 0 for an empty text).

    Every sentence of every text goes to the model in one ``embed`` call (batched and
    de-duplicated there).
    """
    split = [split_sentences(t, max_sentences=max_sentences) for t in texts]
    flat = [s for ss in split for s in ss]
    vectors = embedder.embed(flat).vectors if flat else np.zeros((0, 0), dtype=np.float32)
    dim = vectors.shape[1] if flat else 0
    out, pos = [], 0
    for ss in split:
        out.append(np.asarray(vectors[pos : pos + len(ss)], dtype=np.float32).reshape(len(ss), dim))
        pos += len(ss)
    return tuple(out)
