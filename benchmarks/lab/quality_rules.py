"""Quality rules measured and not shipped: own detail, figures, glossary, a floor or cap on specificity.

Each was a setting of the product's quality part (docs/validity.md has their figures); they live here, as
factors handed to the product's scoring through ``consensus.extensions`` (``benchmarks.lab.extensions``
builds them from ``LabConfig``). Pure functions over the product's word sets and texts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np

from consensus._common_words import COMMON
from consensus.grading import specific_words
from consensus.text import words

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)  # a fenced code block (as consensus.grading reads it)
T = TypeVar("T")


def of_members(values: Mapping[int, T], members: np.ndarray, graded: frozenset[int] | None = None) -> list[T]:
    """The values of the round's members that have one (and are ``graded``, when given), in the members' order:
    what each rule's reference (the members' median, a quantile) is taken over."""
    return [values[int(i)] for i in members if int(i) in values and (graded is None or int(i) in graded)]


def own_specific(
    word_sets: Mapping[int, frozenset[str]],
    prompt_words: frozenset[str] = frozenset(),
    groups: Sequence[Sequence[int]] = (),
    common: frozenset[str] = COMMON,
    count: bool = False,
) -> dict[int, float]:
    """Each answer's share of its content words that are specific (not generic English) and that no other
    voice says (a group counts once), in [0, 1]; with ``count`` their number. The product's
    ``consensus.grading.specificity`` counts the specific words another voice says too; both read the
    words of ``consensus.grading.specific_words``, where a specific word's voices always include the
    answer's own."""
    content, voice, users = specific_words(word_sets, prompt_words, groups, common)
    alone = {i: sum(users.get(w) == {voice.get(i, i)} for w in ws) for i, ws in content.items()}
    return {i: float(n) if count else (n / len(content[i]) if content[i] else 0.0) for i, n in alone.items()}


def with_own_detail(
    qualities: Mapping[int, float],
    own: Mapping[int, float],
    members: np.ndarray,
    weight: float,
    floor: float,
    graded: frozenset[int] | None = None,
    fraction: float = 1.0,
) -> dict[int, float]:
    """``quality * min(1, (own + floor) / (median + floor)) ** weight``: fewer own details than the typical member cost.

    graded: the answers long enough to be graded so (default all); the others and the median leave them out.
    """
    graded = frozenset(own) if graded is None else graded
    inside = of_members(own, members, graded)
    median = fraction * float(np.median(inside)) if inside else 0.0
    if weight <= 0 or median <= 0:
        return dict(qualities)
    return {
        i: float(q * min(1.0, (own.get(i, median) + floor) / (median + floor)) ** weight) if i in graded else q
        for i, q in qualities.items()
    }


def with_own_detail_count(
    qualities: Mapping[int, float], counts: Mapping[int, float], graded: frozenset[int], least: int, weight: float
) -> dict[int, float]:
    """``quality * min(1, (own + 1) / (least + 1)) ** weight`` for the ``graded`` answers: an answer long
    enough to have details of its own (specific words no other voice says) but with fewer than ``least``
    of them (a list of the agreed keywords) loses quality; more details buy nothing."""
    if least <= 0 or weight <= 0:
        return dict(qualities)
    return {
        i: float(q * min(1.0, (counts.get(i, least) + 1.0) / (least + 1.0)) ** weight) if i in graded else q
        for i, q in qualities.items()
    }


_ITEM = re.compile(r"^\s*(?:[-*\u2022+]|\d{1,2}[.)])\s+(.*)$")  # a bulleted or numbered line
# "- Antigen: a molecule the immune system recognises." / "**Compressor** — the pump ...": a term of one to five
# words (bulleted, numbered or not), a colon or a dash, then its definition
_DEFINITION = re.compile(
    r"^\s*(?:(?:[-*\u2022+]|\d{1,2}[.)])\s+)?[*_]*[^\W\d_][\w'()/-]*(?:\s+[\w'()/-]+){0,4}?[*_]*"
    r"\s*(?::|\s[-\u2013\u2014]\s|[\u2013\u2014])\s*[*_]*[^\W\d_]"
)
_BULLET = re.compile(r"^\s*(?:[-*\u2022+]|\d{1,2}[.)])\s+")
_DIGIT = re.compile(r"\d")
_TERSE_WORDS = 14  # a definition line of at most this many words defines a term; it explains nothing


def glossary_shares(text: str) -> tuple[float, float]:
    """(defined, listed): the shares of an answer's words (outside fenced code) in short definition lines
    ("- Antigen: a molecule the immune system recognises.": a term, a colon or a dash, then words; at most 14
    words and no digit in all: a detail such as "16 °C" or "270 mm" makes a line a statement) and in list
    items (bulleted or numbered lines) of any length. A glossary is almost all definition lines; an
    explanation, or a list of steps, has none or a few."""
    body = _FENCED.sub(" ", text)
    total = len(words(body))
    if not total:
        return 0.0, 0.0
    defined = listed = 0
    for line in body.splitlines():
        found = len(words(line))
        if _DEFINITION.match(line) and found <= _TERSE_WORDS and not _DIGIT.search(_BULLET.sub("", line)):
            defined += found
        if m := _ITEM.match(line):
            listed += len(words(m.group(1)))
    return defined / total, listed / total


def with_glossary(
    qualities: Mapping[int, float],
    shares: Mapping[int, tuple[float, float]],
    members: np.ndarray,
    graded: frozenset[int],
    bar: float,
    most: float = 0.25,
) -> dict[int, float]:
    """``quality * min(1, (1 - defined) / (1 - bar)) ** 2`` for the ``graded`` answers (``shares``: their
    ``glossary_shares``): an answer made of short definitions, in a round that answers in sentences, loses
    quality in proportion. Unchanged when the graded members' median share of words in definition lines or in
    list items is ``most`` or more (the prompt asks for definitions or a list: then they are a fair form), or
    ``bar`` is 0."""
    inside = of_members(shares, members, graded)
    defined = float(np.median([d for d, _ in inside])) if inside else 0.0
    listed = float(np.median([x for _, x in inside])) if inside else 0.0
    if bar <= 0 or defined >= most or listed >= most:
        return dict(qualities)
    return {
        i: float(q * min(1.0, (1.0 - shares.get(i, (0.0, 0.0))[0]) / (1.0 - bar)) ** 2) if i in graded else q
        for i, q in qualities.items()
    }


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def numbers_stated(text: str, prompt: str = "") -> int:
    """How many distinct numbers an answer states outside fenced code, list markers ("1.", "2)") and the
    prompt's own numbers: "16 °C", "270 mm", "5-10%" are details; a vague answer has none."""
    body = "\n".join(_BULLET.sub("", line) for line in _FENCED.sub(" ", text).splitlines())
    return len(set(_NUMBER.findall(body)) - set(_NUMBER.findall(prompt)))


def with_numbers(
    qualities: Mapping[int, float],
    counts: Mapping[int, int],
    members: np.ndarray,
    graded: frozenset[int],
    weight: float,
    quantile: float = 0.75,
    least: float = 2.0,
) -> dict[int, float]:
    """``quality * min(1, (n + 1) / (ref + 1)) ** weight`` for the ``graded`` answers, ``ref`` the ``quantile``
    of the graded members' counts of stated numbers: where the detailed answers give figures, an answer with
    none loses quality. Unchanged when ``ref`` is under ``least`` (a round without figures) or ``weight`` is 0."""
    inside = of_members(counts, members, graded)
    ref = float(np.quantile(inside, quantile)) if inside else 0.0
    if weight <= 0 or ref < least:
        return dict(qualities)
    return {
        i: float(q * min(1.0, (counts.get(i, ref) + 1.0) / (ref + 1.0)) ** weight) if i in graded else q
        for i, q in qualities.items()
    }


def with_bounded_specificity(
    qualities: Mapping[int, float],
    spec: Mapping[int, float],
    members: np.ndarray,
    weight: float,
    cap: float = 0.0,
    floor: float = 0.0,
    mean_when_none: bool = False,
) -> dict[int, float]:
    """The product's specificity factor (``consensus.grading.with_specificity``) with a floor and a cap:
    ``floor`` times the members' median is added to an answer's specificity and to the median before their
    ratio (an answer with no specific agreed word keeps ``(floor / (1 + floor)) ** weight``); ``cap`` > 0
    bounds the factor. Capped at 1 as the product's."""
    inside = of_members(spec, members)
    median = float(np.median(inside)) if inside else 0.0
    if median <= 0 and mean_when_none and inside:
        median = float(np.mean(inside))
    if weight <= 0 or median <= 0:
        return dict(qualities)

    def factor(i: int) -> float:
        f = float(((spec.get(i, median) + floor * median) / (median * (1.0 + floor))) ** weight)
        return min(f, cap) if cap > 0 else f

    return {i: float(min(1.0, q * factor(i))) for i, q in qualities.items()}
