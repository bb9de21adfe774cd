"""What an answer says, as the quality part grades it: specificity and prose.

Factors on the coverage of ``consensus.quality``: specificity (the share of an answer's content words
that are specific and agreed, relative to the members'), prose (the share of function words: a list of
terms states no relation), and the word sets they and coverage compare (stems with ``quality_stems``).
Pure functions; docs/consensus.md section 8 gives the rules, docs/validity.md the measurements. Rules
measured and not shipped (own detail, figures, glossary, a floor or cap on specificity) live in
``benchmarks/lab/quality_rules.py``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from consensus._common_words import COMMON
from consensus.text import stems, words

if TYPE_CHECKING:
    from consensus.context import Context


def specificity(
    word_sets: Mapping[int, frozenset[str]],
    prompt_words: frozenset[str] = frozenset(),
    groups: Sequence[Sequence[int]] = (),
    common: frozenset[str] = COMMON,
) -> dict[int, float]:
    """Each answer's share of its content words that are specific and agreed, in [0, 1].

    Content words: not the prompt's, three letters or more, or a number. Specific: not among the
    most frequent English words (``consensus._common_words``: "important", "check", "make", "sure"
    are generic; "odometer", "antigen", "perihelion", "1927" are not). Agreed: another voice (a group
    counts once) says it too, so a string of rare words nobody else uses buys nothing. A vague answer
    ("take your time, check the condition, trust your instincts") has almost none; a padded essay
    dilutes what it has. Words of other languages are all "specific": the share is compared within
    the round (``with_specificity``), so a round in one language is graded on its own terms.
    """
    content, voice, users = specific_words(word_sets, prompt_words, groups, common)
    out = {}
    for i, ws in content.items():
        hits = sum(1 for w in ws if w not in common and users[w] - {voice.get(i, i)})
        out[i] = hits / len(ws) if ws else 0.0
    return out


def specific_words(
    word_sets: Mapping[int, frozenset[str]],
    prompt_words: frozenset[str] = frozenset(),
    groups: Sequence[Sequence[int]] = (),
    common: frozenset[str] = COMMON,
) -> tuple[dict[int, frozenset[str]], dict[int, int], dict[str, set[int]]]:
    """(each answer's content words, each grouped answer's voice, each specific word's voices): what
    ``specificity`` counts from (content words: not the prompt's, three letters or more, or a number;
    specific: not in ``common``; a group's answers are one voice, its lowest index)."""
    content = {
        i: frozenset(w for w in ws if w not in prompt_words and (len(w) >= 3 or w.isdigit()))
        for i, ws in word_sets.items()
    }
    voice = {i: min(g) for g in groups for i in g}
    users: dict[str, set[int]] = {}
    for i, ws in content.items():
        for w in ws:
            if w not in common:
                users.setdefault(w, set()).add(voice.get(i, i))
    return content, voice, users


_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)  # a fenced code block (an unclosed one runs to the end)


def prose_share(text: str) -> float:
    """The share of an answer's words outside fenced code that are English function words (scikit-learn's
    stop words: "the", "of", "which", ...): sentences have many, a list of terms has almost none."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    found = words(_FENCED.sub(" ", text))
    return sum(1 for w in found if w in ENGLISH_STOP_WORDS) / len(found) if found else 0.0


def with_prose(
    qualities: Mapping[int, float],
    shares: Mapping[int, float],
    members: np.ndarray,
    graded: frozenset[int],
    fraction: float,
    least_median: float = 0.1,
) -> dict[int, float]:
    """``quality * min(1, share / (fraction * the graded members' median share))`` for the ``graded``
    answers: an answer that is a list of terms (almost no function words, where the round's answers
    are written in sentences) loses quality in proportion. Unchanged when the median is under
    ``least_median`` (a round in another language, or of code) or ``fraction`` is 0."""
    inside = [shares[int(i)] for i in members if int(i) in graded and int(i) in shares]
    median = float(np.median(inside)) if inside else 0.0
    if fraction <= 0 or median < least_median:
        return dict(qualities)
    bar = fraction * median
    return {i: float(q * min(1.0, shares.get(i, bar) / bar)) if i in graded else q for i, q in qualities.items()}


def with_specificity(
    qualities: Mapping[int, float],
    spec: Mapping[int, float],
    members: np.ndarray,
    weight: float,
    mean_when_none: bool = False,
) -> dict[int, float]:
    """``quality * (specificity / the members' median specificity) ** weight``, capped at 1.

    Relative to the round: an answer as specific as the typical member keeps its quality; one with
    half the specific words loses ``1 - 0.5 ** weight`` of it. No member with a specific word: unchanged
    (with ``mean_when_none``: compared with the members' mean instead, while any member has one).
    """
    inside = [spec[int(i)] for i in members if int(i) in spec]
    median = float(np.median(inside)) if inside else 0.0
    if median <= 0 and mean_when_none and inside:
        median = float(np.mean(inside))
    if weight <= 0 or median <= 0:
        return dict(qualities)

    return {i: float(min(1.0, q * (spec.get(i, median) / median) ** weight)) for i, q in qualities.items()}


def quality_words(ctx: Context, residual: Mapping[int, frozenset[str]] | None = None) -> list[frozenset[str]]:
    """Each response's word set as the quality part compares it: its residual when it restates earlier
    answers, its stems with ``quality_stems``."""
    residual = residual or {}
    if not ctx.config.quality_stems:
        return [residual.get(i, frozenset(w)) for i, w in enumerate(ctx.text_words)]
    return [stems(residual[i]) if i in residual else w for i, w in enumerate(ctx.word_stems)]


def quality_prompt_words(ctx: Context) -> frozenset[str]:
    """The prompt's words (stems with ``quality_stems``)."""
    return stems(ctx.prompt_words) if ctx.config.quality_stems else ctx.prompt_words


def quality_common(ctx: Context) -> frozenset[str]:
    """The generic English words (their stems with ``quality_stems``)."""
    return _common_stems() if ctx.config.quality_stems else COMMON


@functools.cache
def _common_stems() -> frozenset[str]:
    return stems(COMMON)
