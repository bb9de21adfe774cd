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

Quoting is not copying either. A run of words that every answer holding it has inside quotation marks
(``"..."``, curly quotes, guillemets, a Markdown ``>`` line), and that two or more answers hold, is a public
text they both quote (a law, a famous sentence): it is no evidence that one restates the other. A copier cannot
quote its way out: its source wrote the text as its own, outside quotation marks.

Agreement is not copying. Content that two or more original earlier answers each hold is common
(a worked sum, a standard recipe): repeating it is agreement, and arrival order gives nobody
ownership of it (answers tied in arrival count as one original). An answer with fewer than
``min_words`` distinct words of its own (not the prompt's) has too little text to be anyone's copy:
identical short answers to a question with one right short answer ("Au", "Canberra is the capital of
Australia.") are each paid on their merits and count as support, whoever was first.

Arrival is the validator's own clock at receipt (``consensus.pipeline.arrivals``): a copier can send
its copy only after it has seen its source, so the source is the answer that reached the validator
first. Identical texts, however many, are a source and its copies: the first to arrive keeps its pay,
and copies sent after it never lower it (two copies sent seconds later used to make a victim's answer
"the round's common answer", shared three ways). Texts that arrived within ``tie_window_s`` of each
other have no order: they share one payout (``tied``).

What is new in a derived answer is its ``residual``: its content words that none of its sources
says. ``novelty`` is the
residual's share of the answer's content (idf-weighted).

A paraphrase that keeps the meaning in other words is not found here: within one round, neither the
embedding (whole answers or sentence by sentence) nor shared rare words tell it from an honest answer of
the same family (benchmarks/journal/validity.md, "Paraphrases in one round"); ``consensus.identity`` finds an
operator who paraphrases round after round. An answer whose novelty is at most
``NOVELTY`` is a copy and earns nothing; above it, the composite grades the residual alone.
Pure: arrays, word sequences and latencies in, ``Derivation`` out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from consensus.groups import components

PHRASE = 5  # words in a phrasing n-gram: independent answers share few runs of five words
# The bars of a restatement, set on the development set's planted copies (docs/validity.md, issue 12): a later
# answer whose content words are CONTAINMENT in one earlier answer, that holds HOLDS of an earlier answer's
# phrases (a padded copy), or whose phrases are PHRASING in earlier answers (a blend) restates them; one whose
# own share of content is at most NOVELTY is a copy and earns nothing
CONTAINMENT, HOLDS, PHRASING, NOVELTY = 0.85, 0.5, 0.5, 0.15


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
    return frozenset(zip(*(sequence[k:] for k in range(PHRASE))))


# a quotation: straight, curly or low double quotes, guillemets, or a Markdown quote line ("> ...")
_QUOTED = re.compile(
    r'"([^"]+)"|\u201c([^\u201d]+)\u201d|\u201e([^\u201c\u201d]+)[\u201c\u201d]|\u00ab([^\u00bb]+)\u00bb|^[ \t]*>[ \t]?(.+)$',
    re.M,
)


def quoted_runs(text: str, words: Callable[[str], Sequence[str]]) -> frozenset[tuple[str, ...]]:
    """The runs of ``PHRASE`` words (as ``words`` reads them) that ``text`` has inside quotation marks."""
    runs: set[tuple[str, ...]] = set()
    for m in _QUOTED.finditer(text):
        span = next(g for g in m.groups() if g is not None)
        runs |= _phrases(list(words(span)))
    return frozenset(runs)


def find_derivations(
    sequences: Sequence[Sequence[str]],
    latencies: np.ndarray,
    candidates: np.ndarray,
    *,
    prompt_words: frozenset[str] = frozenset(),
    min_words: int = 12,
    containment: float = CONTAINMENT,
    contains: float = HOLDS,
    phrasing: float = PHRASING,
    copy_novelty: float = NOVELTY,
    tie_window_s: float = 0.0,
    quoted: Sequence[frozenset[tuple[str, ...]]] | None = None,
) -> Derivation:
    """Which candidates restate earlier ones (module docstring).

    sequences: each answer's normalised words, in order (``consensus.text.words``).
    latencies: (n,) arrival times; candidates: the indices still in play.
    min_words: an answer needs this many distinct words that are not the prompt's to be a copy or a source.
    containment: share of a later answer's content in one earlier answer that makes it derived.
    contains: share of an earlier answer's word n-grams inside a later one that makes the later derived (padding).
    phrasing: share of a later answer's word n-grams found in earlier answers that makes it derived (stitching).
    copy_novelty: at or below this novelty a derived answer is a copy.
    quoted: each answer's runs inside quotation marks (``quoted_runs``); None: nothing is read as quoted.
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
    shared_mass = _shared_mass(own, idf, sorted(distinctive))
    # a run of words three or more answers use is the topic's common language (recipes share "1/4 cup
    # vegetable oil"): only runs at most one other answer has are evidence of copying
    every = {i: _phrases(sequences[i]) for i in distinctive}
    owners: dict[tuple[str, ...], list[int]] = {}
    for i, runs in every.items():
        for p in runs:
            owners.setdefault(p, []).append(i)
    common_runs = {p for p, who in owners.items() if len(who) > 2}
    if quoted is not None:  # a public text two answers quote: each holder has the run inside quotation marks
        common_runs |= {p for p, who in owners.items() if len(who) > 1 and all(p in quoted[i] for i in who)}
    phrases = {i: runs - common_runs for i, runs in every.items()}
    # shared[i][j]: how many of i's own runs j has (a run at most two answers use has one other owner)
    shared_runs: dict[int, dict[int, int]] = {}
    for i, runs in phrases.items():
        counts: dict[int, int] = {}
        for p in runs:
            for j in owners[p]:
                if j != i:
                    counts[j] = counts.get(j, 0) + 1
        shared_runs[i] = counts
    order = sorted(cand, key=lambda i: (float(latencies[i]), i))
    tied_pairs: list[tuple[int, int]] = []
    parent: dict[int, int] = {}  # union-find over answers tied in arrival: one original, however many they are

    def tie_of(j: int) -> int:
        while parent.get(j, j) != j:
            j = parent[j]
        return j

    at = {i: float(latencies[i]) for i in cand}
    for i in order:
        if i not in distinctive:
            continue
        earlier = [j for j in order if at[j] < at[i] - tie_window_s and j != i]
        before = set(earlier)
        close = [j for j in distinctive if j != i and j not in before and abs(at[j] - at[i]) <= tie_window_s]
        found: dict[int, str] = {}
        holders = []
        for j in earlier:
            if j not in distinctive:
                continue
            shared = shared_mass(i, j)
            if shared >= containment * mass[i]:
                holders.append((j, f"{shared / mass[i]:.0%} of its content is in response {j}"))
            elif len(phrases[j]) >= min_words and shared_runs[i].get(j, 0) >= contains * len(phrases[j]):
                # a padded copy: the later answer holds the earlier one word for word (its phrasing,
                # not only its words: a detailed honest answer uses a concise one's words, not its runs)
                found[j] = f"it holds {shared_runs[i][j] / len(phrases[j]):.0%} of response {j}'s phrasing"
        # content that two or more original earlier answers each hold is common (a worked sum, a standard
        # recipe): saying it again is agreement, and the first to say it does not own it
        originals = {tie_of(j) for j, _ in holders if not sources[j]}
        if len(originals) == 1 or (holders and not originals):
            for j, why in holders:
                found[j] = why
        if len(phrases[i]) >= min_words:
            reused = {j: k for j, k in shared_runs[i].items() if j in before}
            # each of i's own runs has at most one other owner: the runs taken are the sum over the earlier ones
            taken = sum(reused.values())
            if taken >= phrasing * len(phrases[i]):
                for j in reused:
                    if j not in found:
                        found[j] = f"{taken / len(phrases[i]):.0%} of its phrasing is in earlier answers"
        for j in close:
            if shared_mass(i, j) >= containment * max(mass[i], mass[j]):
                tied_pairs.append((min(i, j), max(i, j)))
                a, b = sorted((tie_of(i), tie_of(j)))
                parent[b] = a
        if not found:
            continue
        taken_words: set[str] = set()
        for j in found:
            taken_words |= own[j]
        left = own[i] - taken_words
        sources[i] = tuple(sorted(found))
        residual[i] = frozenset(left)
        novelty[i] = _mass(frozenset(left), idf) / mass[i]
        evidence[i] = "; ".join(found[j] for j in sorted(found))
        if novelty[i] <= copy_novelty:
            copy_of[i] = min(found, key=lambda j: (float(latencies[j]), j))
    return Derivation(copy_of, novelty, tuple(sources), tuple(residual), tuple(evidence), components(tied_pairs))


def _shared_mass(own: dict[int, frozenset[str]], idf: dict[str, float], rows: list[int]) -> Callable[[int, int], float]:
    """A function (i, j) -> the idf mass of the words answers i and j share, from one sparse product."""
    # lazy: start-up cost, SciPy takes 0.7 s to import
    from scipy.sparse import csr_matrix

    vocab = {t: k for k, t in enumerate(sorted(set().union(*(own[i] for i in rows))))} if rows else {}
    weight = np.array([idf[t] for t in sorted(vocab, key=vocab.__getitem__)], dtype=np.float64)
    r = [k for k, i in enumerate(rows) for _ in own[i]]
    c = [vocab[t] for i in rows for t in sorted(own[i])]
    x = csr_matrix((np.ones(len(r)), (r, c)), shape=(len(rows), max(len(vocab), 1)))
    shared = (x.multiply(weight[None, :] if len(vocab) else 1.0).tocsr() @ x.T).toarray()
    at = {i: k for k, i in enumerate(rows)}
    return lambda i, j: float(shared[at[i], at[j]])
