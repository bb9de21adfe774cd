"""Filters that remove responses before clustering: copies, too short, LOF outliers.

Every function is pure: it takes arrays and indices and returns which of the
candidates it removes. The pipeline applies them in the order
copies -> length -> outliers, each on what the previous left.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from consensus.similarity import distances

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """Case-folded word tokens (letters/digits), accents kept."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


_SYMBOLS = re.compile(r"[^\w\s]+", re.UNICODE)


_MARKUP = frozenset("<>|~")  # math symbols (Sm) that HTML tags, Markdown tables and quotes are made of


def _is_math_symbol(ch: str) -> bool:
    return unicodedata.category(ch) == "Sm" and ch not in _MARKUP


def word_count(text: str, math_symbols: bool = False) -> int:
    """Number of words; with ``math_symbols`` a run of non-word characters holding a math symbol (Unicode
    category Sm: "=", "+", "√", "×", "≤", "→"; not the markup characters < > | ~, so an HTML tag or a
    Markdown table row is no longer) counts as one more: it reads as a word ("equals", "times")."""
    text = unicodedata.normalize("NFKC", text)
    n = len(_WORD.findall(text))
    if math_symbols:
        if text.isascii():  # ASCII's math symbols are + < = > | ~; only + and = are not markup
            n += len(_ASCII_MATH_RUN.findall(text))
        else:
            n += sum(any(_is_math_symbol(ch) for ch in run) for run in _SYMBOLS.findall(text))
    return n


# a whole run of non-word characters (as _SYMBOLS finds them) that holds + or =: one match per such run
_ASCII_MATH_RUN = re.compile(r"[^\w\s]*[+=][^\w\s]*", re.UNICODE)


@dataclass(frozen=True)
class CopyGroups:
    """copy_of[i] = index of the original that response i copies, or -1.

    ``tied``: groups of identical answers that arrived within the tie window of
    each other: none of them is the original; they share one payout.
    """

    copy_of: np.ndarray  # (n,) intp
    tied: tuple[tuple[int, ...], ...] = ()


def find_copies(
    texts: list[str],
    sim: np.ndarray,
    latencies: np.ndarray,
    candidates: np.ndarray,
    *,
    cosine: float,
    text_ratio: float,
    tie_window_s: float = 0.0,
    bag_ratio: float = 0.0,
    text_words: Sequence[Sequence[str]] | None = None,
    jaccard: np.ndarray | None = None,
) -> CopyGroups:
    """Group identical and near-identical responses; keep the earliest of each group.

    Two candidates are copies when their normalised word sequences are equal,
    or when their word-level match ratio (difflib) is at least ``text_ratio``.
    The ratio is computed only for candidate pairs: cosine similarity at least
    ``cosine`` or word-set Jaccard at least ``JACCARD_CANDIDATE`` (embeddings
    alone miss edits such as a "Sure! " prefix: that one moves MiniLM's
    cosine to 0.87). With ``bag_ratio`` > 0 a pair whose word multisets
    overlap at least that much is a copy whatever the order (difflib's
    sequence ratio collapses on long texts with repeated structure: 0.37 for
    a 660-word answer with every 13th word dropped). Lexical confirmation keeps independent paraphrases of a
    short fact from being called copies. Groups are the connected
    components of that relation. Within a group the original is the fastest
    response (lowest latency, then lowest index); every other member is a copy
    of it. A copier therefore cannot earn unless it was first, and a group of
    sybils answering identically earns as one response. Arrival order within
    ``tie_window_s`` of the fastest (network jitter: milliseconds) is no
    evidence of who wrote the answer: those members are all "tied", none is
    the original, and they share the one payout (``CopyGroups.tied``); later
    ones are copies of the fastest. With a window of 0 the fastest is the
    original by any margin (the legacy rule). ``text_words`` (every text's ``words``) and ``jaccard``
    (``jaccard_matrix`` of them, (n, n)): when the caller has them already.
    """
    n = len(texts)
    copy_of = np.full(n, -1, dtype=np.intp)
    cand = [int(i) for i in candidates]
    if len(cand) < 2:
        return CopyGroups(copy_of)
    normal = {i: tuple(words(texts[i]) if text_words is None else text_words[i]) for i in cand}
    parent = {i: i for i in cand}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    by_text: dict[tuple[str, ...], int] = {}
    for i in cand:
        if normal[i] in by_text:
            union(by_text[normal[i]], i)
        else:
            by_text[normal[i]] = i
    sub = sim[np.ix_(cand, cand)]
    lex = jaccard_matrix([normal[i] for i in cand]) if jaccard is None else jaccard[np.ix_(cand, cand)]
    close = (sub >= cosine) | (lex >= JACCARD_CANDIDATE)
    rows, cols = np.nonzero(np.triu(close, k=1))
    for r, c in zip(rows.tolist(), cols.tolist()):
        a, b = cand[r], cand[c]
        if find(a) == find(b):
            continue
        la, lb = len(normal[a]), len(normal[b])
        if la + lb == 0 or 2 * min(la, lb) / (la + lb) < text_ratio:
            continue  # the ratio can never reach the bar with lengths this different
        matcher = difflib.SequenceMatcher(None, normal[a], normal[b], autojunk=False)
        quick = matcher.quick_ratio()
        if (bag_ratio > 0 and quick >= bag_ratio) or (quick >= text_ratio and matcher.ratio() >= text_ratio):
            union(a, b)
    groups: dict[int, list[int]] = {}
    for i in cand:
        groups.setdefault(find(i), []).append(i)
    tied: list[tuple[int, ...]] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        original = min(members, key=lambda i: (float(latencies[i]), i))
        ties = [i for i in members if tie_window_s > 0 and latencies[i] - latencies[original] <= tie_window_s]
        if len(ties) >= 2:
            tied.append(tuple(sorted(ties)))
        for i in members:
            if i != original and i not in ties:
                copy_of[i] = original
    return CopyGroups(copy_of, tuple(sorted(tied)))


JACCARD_CANDIDATE = 0.5


def jaccard_matrix(token_lists: Sequence[tuple[str, ...]]) -> np.ndarray:
    """(m, m) Jaccard similarity of the word sets, via one sparse product."""
    # lazy: start-up cost, SciPy takes 0.7 s to import
    from scipy.sparse import csr_matrix

    vocab: dict[str, int] = {}
    sets = [set(toks) for toks in token_lists]
    cols = [vocab.setdefault(t, len(vocab)) for s in sets for t in s]
    m = len(token_lists)
    rows = np.repeat(np.arange(m), [len(s) for s in sets])
    x = csr_matrix((np.ones(len(cols), dtype=np.float64), (rows, cols)), shape=(m, max(len(vocab), 1)))
    inter = (x @ x.T).toarray()
    size = np.asarray(x.sum(axis=1)).ravel()
    union = size[:, None] + size[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def length_threshold(
    word_counts: np.ndarray, candidates: np.ndarray, sensitivity: float, cap: float = math.inf
) -> float:
    """Minimum word count: (1 - sensitivity) * median word count of the candidates, at most ``cap``.

    The seed says "average length"; the median is used so that one padded
    3,000-word response cannot raise the bar and filter honest answers. The
    cap keeps a concise right answer ("The capital of Australia is Canberra.")
    in play when long junk answers set the median; length still counts in
    the quality part of the score.
    """
    if len(candidates) == 0:
        return 0.0
    return float(min(cap, (1.0 - sensitivity) * np.median(word_counts[candidates])))


def too_short(word_counts: np.ndarray, candidates: np.ndarray, threshold: float) -> np.ndarray:
    """Candidates (indices) whose word count is below ``threshold``."""
    cand = np.asarray(candidates, dtype=np.intp)
    return cand[word_counts[cand] < threshold]


# words that state no answer of their own: a reply ("Yes.", "Sure", "OK") is not the short answer others explain
_NO_ANSWER = frozenset({"yes", "yeah", "yep", "no", "nope", "not", "ok", "okay", "sure", "maybe", "thanks", "hello"})


def agreed_short(
    text_words: Sequence[Sequence[str]], prompt_words: frozenset[str], candidates: np.ndarray, short: np.ndarray
) -> np.ndarray:
    """The ``short`` candidates that state the round's short answer: every word of theirs that is not the
    prompt's, a reply ("yes", "ok") or under three letters (a number counts: "408") is said by at least half of
    the other candidates. "408" or "The skin." among long explanations that all state it is a correct one-word
    answer, not junk; "Yes." or a word nobody else says is not."""
    said = {int(i): frozenset(text_words[int(i)]) for i in candidates}
    out = []
    for i in (int(i) for i in short):
        own = {w for w in said[i] if w not in prompt_words and w not in _NO_ANSWER and (len(w) >= 3 or w.isdigit())}
        others = [ws for j, ws in said.items() if j != i]
        if own and others and all(2 * sum(w in ws for ws in others) >= len(others) for w in own):
            out.append(i)
    return np.array(out, dtype=np.intp)


def lof_outliers(
    sim: np.ndarray, candidates: np.ndarray, *, neighbors: int, min_samples: int, contamination: float
) -> tuple[np.ndarray, str]:
    """LocalOutlierFactor on cosine distances among candidates.

    Returns (outlier indices, how it ran). With fewer than ``min_samples``
    candidates LOF is skipped (local density is meaningless among 1-4 points;
    clustering and the consensus threshold still judge agreement). LOF never
    removes half or more of the candidates: if it would, it removes none and
    says so, since "most answers are outliers" means there is no dense core to
    be an outlier from.
    """
    # lazy: start-up cost, scikit-learn takes 4.7 s to import
    from sklearn.neighbors import LocalOutlierFactor

    cand = np.asarray(candidates, dtype=np.intp)
    if len(cand) < min_samples:
        return cand[:0], f"skipped: {len(cand)} candidates < lof_min_samples={min_samples}"
    dist = distances(sim[np.ix_(cand, cand)])
    # k must stay below the size of the inlier group: with k = n - 1 a lone
    # far point sits in every neighbourhood and LOF sees nothing unusual.
    k = max(2, min(neighbors, (len(cand) - 1) // 2))
    lof = LocalOutlierFactor(
        n_neighbors=k, metric="precomputed", contamination="auto" if contamination == 0 else contamination
    )
    with warnings.catch_warnings():
        # sklearn warns when duplicates make k-distances zero; LOF stays defined (it adds 1e-10)
        warnings.simplefilter("ignore")
        labels = lof.fit_predict(dist)
    out = cand[labels == -1]
    if 2 * len(out) >= len(cand):
        return cand[:0], f"ran (n_neighbors={k}); flagged {len(out)} of {len(cand)}, kept all (no dense core)"
    return out, f"ran (n_neighbors={k})"
