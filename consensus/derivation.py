"""Copies in any disguise: which answers restate earlier ones, and what is new in them.

A later answer that restates an earlier one (verbatim, near-verbatim, with invisible characters or
look-alike letters, sentences shuffled, words dropped, padded with a paragraph of its own, or
stitched together from several earlier answers) is paid only for what is new in it. Three kinds of
evidence, each read from the normalised words (``consensus.text``) and arrival order:

- containment: most of the later answer's content words (idf-weighted over the round, the prompt's
  words left out) are in one earlier answer (near-copies, perturbed copies, disguised copies), or the
  later answer holds much of one earlier answer's phrasing (a copy padded with more text);
- phrasing: much of the later answer's own phrasing (runs of ``PHRASE`` words that at most one other
  answer uses; runs three answers use are the topic's common language) appears in earlier answers (a
  union of other answers, a blend of two, a copy with additions): independent writers rarely share
  a run of several words;
- meaning (optional, with sentence vectors): most of the later answer's sentences restate sentences
  of one earlier answer (a paraphrase), measured by embedding.

Agreement is not copying. Content that two or more original earlier answers each hold is common
(a worked sum, a standard recipe): repeating it is agreement, and arrival order gives nobody
ownership of it. An answer with fewer than ``min_words`` distinct words of its own (not the
prompt's) has too little text to be anyone's copy: identical short answers to a question with one
right short answer ("Au", "Canberra is the capital of Australia.") are each paid on their merits and
count as support, whoever was first. The same text from three or more miners is the round's common
answer: nobody owns it (a front-runner that sends the usual answer first takes nothing from the
miners who give it later) and its givers share one payout (``tied``). Two identical texts are a
copy and its source, unless they arrived within ``tie_window_s`` of each other (no order: they share).

What is new in a derived answer is its ``residual``: its content words that none of its sources
says (for a paraphrase, the words of its sentences that restate nothing). ``novelty`` is the
residual's share of the answer's content (idf-weighted). An answer whose novelty is at most
``copy_novelty`` is a copy and earns nothing; above it, the composite grades the residual alone.
Pure: arrays, word sequences and latencies in, ``Derivation`` out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

PHRASE = 5  # words in a phrasing n-gram: independent answers share few runs of five words


@dataclass(frozen=True)
class Derivation:
    """copy_of[i]: the earlier answer i copies (novelty at most the bar), or -1.

    novelty[i]: the share of answer i's content that is its own (1 for an original).
    sources[i]: the earlier answers i restates (empty for an original).
    residual[i]: the content words of i none of its sources says (None for an original).
    evidence[i]: why i is derived ("" for an original), for the record.
    tied: identical answers that arrived within the tie window of each other: no original, one payout.
    """

    copy_of: np.ndarray
    novelty: np.ndarray
    sources: tuple[tuple[int, ...], ...]
    residual: tuple[frozenset[str] | None, ...]
    evidence: tuple[str, ...]
    tied: tuple[tuple[int, ...], ...] = ()

    @property
    def derived(self) -> tuple[int, ...]:
        """Answers that restate earlier ones but keep content of their own (not copies)."""
        return tuple(i for i, s in enumerate(self.sources) if s and self.copy_of[i] < 0)


def _idf(sets: Sequence[frozenset[str]]) -> dict[str, float]:
    df: dict[str, int] = {}
    for s in sets:
        for t in s:
            df[t] = df.get(t, 0) + 1
    n = max(len(sets), 1)
    return {t: float(np.log1p(n / d)) for t, d in df.items()}


def _mass(words: frozenset[str], idf: dict[str, float]) -> float:
    return float(sum(idf.get(t, 0.0) for t in words))


def _phrases(sequence: Sequence[str]) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(sequence[k:k + PHRASE]) for k in range(len(sequence) - PHRASE + 1))


def sentence_restatement(own: np.ndarray, other: np.ndarray, threshold: float) -> np.ndarray:
    """(k,) bool: which of ``own``'s sentence vectors (k, d) restate a sentence of ``other`` (m, d)."""
    if own.size == 0 or other.size == 0:
        return np.zeros(len(own), dtype=bool)
    return (np.asarray(own, np.float64) @ np.asarray(other, np.float64).T).max(axis=1) >= threshold


def find_derivations(sequences: Sequence[Sequence[str]], latencies: np.ndarray, candidates: np.ndarray, *,
                     prompt_words: frozenset[str] = frozenset(), min_words: int = 12, containment: float = 0.85,
                     contains: float = 0.5, phrasing: float = 0.5, copy_novelty: float = 0.15,
                     tie_window_s: float = 0.0,
                     sentence_vectors: Sequence[np.ndarray] | None = None,
                     sentence_words: Sequence[Sequence[frozenset[str]]] | None = None,
                     restates: float = 0.85, paraphrase: float = 0.6) -> Derivation:
    """Which candidates restate earlier ones (module docstring).

    sequences: each answer's normalised words, in order (``consensus.text.words``).
    latencies: (n,) arrival times; candidates: the indices still in play.
    min_words: an answer needs this many distinct words that are not the prompt's to be a copy or a source.
    containment: share of a later answer's content in one earlier answer that makes it derived.
    contains: share of an earlier answer's word n-grams inside a later one that makes the later derived (padding).
    phrasing: share of a later answer's word n-grams found in earlier answers that makes it derived (stitching).
    copy_novelty: at or below this novelty a derived answer is a copy.
    sentence_vectors / sentence_words: per answer, its sentences' unit vectors (k_i, d) and their words;
        with them, a later answer whose sentences restate (cosine >= ``restates``) sentences of one
        earlier answer, ``paraphrase`` of them or more, is derived from it.
    """
    n = len(sequences)
    cand = sorted(int(i) for i in candidates)
    copy_of = np.full(n, -1, dtype=np.intp)
    novelty = np.ones(n, dtype=np.float64)
    sources: list[tuple[int, ...]] = [()] * n
    residual: list[frozenset[str] | None] = [None] * n
    evidence = [""] * n
    own = {i: frozenset(sequences[i]) - prompt_words for i in cand}
    idf = _idf([own[i] for i in cand])
    mass = {i: _mass(own[i], idf) for i in cand}
    distinctive = {i for i in cand if len(own[i]) >= min_words and mass[i] > 0}
    # a run of words three or more answers use is the topic's common language (recipes share "1/4 cup
    # vegetable oil"): only runs at most one other answer has are evidence of copying
    every = {i: _phrases(sequences[i]) for i in distinctive}
    df: dict[tuple[str, ...], int] = {}
    for runs in every.values():
        for p in runs:
            df[p] = df.get(p, 0) + 1
    phrases = {i: frozenset(p for p in runs if df[p] <= 2) for i, runs in every.items()}
    order = sorted(cand, key=lambda i: (float(latencies[i]), i))
    tied_pairs: list[tuple[int, int]] = []
    # the same text from three or more miners is the round's common answer (miners serving one model
    # answer word for word): nobody owns it, whoever sent it first, and its givers share one payout
    same: dict[tuple[str, ...], list[int]] = {}
    for i in distinctive:
        same.setdefault(tuple(sequences[i]), []).append(i)
    common = {i: g for g in same.values() if len(g) >= 3 for i in g}
    for g in same.values():
        if len(g) >= 3:
            tied_pairs += [(min(g), j) for j in g if j != min(g)]
    for i in order:
        if i not in distinctive:
            continue
        earlier = [j for j in order if float(latencies[j]) < float(latencies[i]) - tie_window_s and j != i
                   and j not in common.get(i, ())]
        close = [j for j in distinctive if j != i and j not in earlier
                 and abs(float(latencies[j]) - float(latencies[i])) <= tie_window_s]
        found: dict[int, str] = {}
        holders = []
        for j in earlier:
            if j not in distinctive:
                continue
            shared = _mass(own[i] & own[j], idf)
            if shared >= containment * mass[i]:
                holders.append((j, f"{shared / mass[i]:.0%} of its content is in response {j}"))
            elif len(phrases[j]) >= min_words and len(phrases[i] & phrases[j]) >= contains * len(phrases[j]):
                # a padded copy: the later answer holds the earlier one word for word (its phrasing,
                # not only its words: a detailed honest answer uses a concise one's words, not its runs)
                found[j] = f"it holds {len(phrases[i] & phrases[j]) / len(phrases[j]):.0%} of response {j}'s phrasing"
        # content that two or more original earlier answers each hold is common (a worked sum, a standard
        # recipe): saying it again is agreement, and the first to say it does not own it
        originals = [(j, why) for j, why in holders if not sources[j]]
        if len(originals) == 1 or (holders and not originals):
            for j, why in holders:
                found[j] = why
        if len(phrases[i]) >= min_words:
            reused = {j: len(phrases[i] & phrases[j]) for j in earlier if j in distinctive}
            taken = set().union(*(phrases[i] & phrases[j] for j, k in reused.items() if k)) if reused else set()
            if len(taken) >= phrasing * len(phrases[i]):
                for j, k in reused.items():
                    if k and j not in found:
                        found[j] = f"{len(taken) / len(phrases[i]):.0%} of its phrasing is in earlier answers"
        if sentence_vectors is not None and sentence_words is not None and len(sentence_vectors[i]):
            for j in earlier:
                if j in found or j not in distinctive or not len(sentence_vectors[j]):
                    continue
                hit = sentence_restatement(sentence_vectors[i], sentence_vectors[j], restates)
                if hit.mean() >= paraphrase:
                    found[j] = f"{hit.mean():.0%} of its sentences restate response {j}'s"
        for j in close:
            if _mass(own[i] & own[j], idf) >= containment * max(mass[i], mass[j]):
                tied_pairs.append((min(i, j), max(i, j)))
        if not found:
            continue
        taken_words: set[str] = set()
        for j in found:
            taken_words |= own[j]
        left = own[i] - taken_words
        if sentence_vectors is not None and sentence_words is not None and len(sentence_vectors[i]):
            restated = np.zeros(len(sentence_vectors[i]), dtype=bool)
            for j in found:
                if len(sentence_vectors[j]):
                    restated |= sentence_restatement(sentence_vectors[i], sentence_vectors[j], restates)
            for k, hit in enumerate(restated):
                if hit and k < len(sentence_words[i]):
                    left = left - sentence_words[i][k]
        sources[i] = tuple(sorted(found))
        residual[i] = frozenset(left)
        novelty[i] = _mass(frozenset(left), idf) / mass[i]
        evidence[i] = "; ".join(found[j] for j in sorted(found))
        if novelty[i] <= copy_novelty:
            copy_of[i] = min(found, key=lambda j: (float(latencies[j]), j))
    return Derivation(copy_of, novelty, tuple(sources), tuple(residual), tuple(evidence), _components(tied_pairs))


def _components(pairs: list[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for i in list(parent):
        groups.setdefault(find(i), []).append(i)
    return tuple(sorted(tuple(sorted(g)) for g in groups.values() if len(g) >= 2))
