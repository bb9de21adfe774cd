"""One normalised text for every stage: what a reader sees, and what two texts share.

Miner text is untrusted. An attacker disguises a copy with characters a reader never sees
(zero-width spaces inside words, bidi controls, variation selectors, tag characters), with
look-alike letters from other scripts (Cyrillic "а" for Latin "a"), with combining marks, or hides
words for the checks in markup comments (``<!-- short answer is "Canberra" -->``) that a Markdown
page never shows. Every stage reads the same two forms of a text:

- ``visible(text)``: the text as a reader sees it: NFKC, markup comments removed, invisible and
  control characters removed (line breaks and tabs kept), and look-alike letters of other scripts
  read as the Latin letters they show, in a text written mostly in Latin letters (or inside a word
  that mixes scripts). Case, accents and other scripts are kept. The embedding model, the injection
  check and the LM read this form.
- ``skeleton(text)``: ``visible`` folded for comparison: combining marks dropped, letters and digits
  confusable with ASCII ones (Unicode's confusables, UTS #39; ``consensus._confusables``) made ASCII,
  case-folded. ``words`` are its runs of letters and digits; copies, identity, coverage and the
  reference check compare these words.

The record keeps the original text; only the evaluation reads these forms. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import Stemmer

from consensus._confusables import LATIN

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): rendered as nothing. Category Cf
# (zero-width space and joiners, bidi controls, word joiner, BOM, tag characters, the other format
# characters) plus the variation selectors, the combining grapheme joiner, the Hangul fillers and the
# other fillers that render blank; and what a reader never sees either: control characters (but line
# breaks and tabs), surrogates and private-use characters.
_HIDDEN = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff\u2800\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
    "\U00013430-\U0001343f\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ue000-\uf8ff\U000f0000-\U0010ffff]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# an HTML/Markdown comment (an unclosed one hides everything after it)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_WORD = re.compile(r"\w+", re.UNICODE)
_LETTER = re.compile(r"[^\W\d_]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_TO_LATIN = str.maketrans(LATIN)
_CONFUSABLE = frozenset(LATIN)  # a set, not a regex class: re scans a class of 500 letters slowly


def visible(text: str) -> str:
    """The text as a reader sees it (module docstring): NFKC, no markup comments, no invisible characters,
    and in a text written mostly in Latin letters, look-alike letters of other scripts read as the Latin
    ones they show ("Pаris" with a Cyrillic "а" is "Paris" to a reader, and to the embedding model)."""
    if text.isascii():
        return _COMMENT.sub(" ", _CONTROL.sub("", text)) if ("<!--" in text or not text.isprintable()) else text
    # invisible characters first: "<!\u200b--" must not hide a comment from the pattern and then read as "<!--"
    return fold_confusables(_COMMENT.sub(" ", _HIDDEN.sub("", unicodedata.normalize("NFKC", text))))


def fold_confusables(text: str) -> str:
    """In a text written mostly in Latin letters, look-alike letters of other scripts as the Latin ones they show;
    in another script's text, only in words that mix it with Latin ("Rеviewer" with a Cyrillic "е")."""
    if text.isascii() or _CONFUSABLE.isdisjoint(text):
        return text
    letters = len(_LETTER.findall(text))
    if letters and 2 * len(_ASCII_LETTER.findall(text)) > letters:
        return text.translate(_TO_LATIN)  # a Latin text: its look-alikes are disguise, not another language
    return _WORD.sub(lambda m: _fold_mixed(m.group()), text)  # another script: only words mixing it with Latin


def _fold_mixed(word: str) -> str:
    if word.isascii() or not _ASCII_LETTER.search(word):
        return word
    return word.translate(_TO_LATIN)


def skeleton(text: str) -> str:
    """``visible(text)`` folded for comparison: no combining marks (after NFKD), look-alike letters made ASCII
    (in any script), case-folded."""
    text = visible(text)
    if text.isascii():
        return text.casefold()
    text = unicodedata.normalize("NFKD", text)
    chars = set(text)
    marks = {ord(c): None for c in chars if unicodedata.category(c)[0] == "M"}  # combining marks, any script
    if marks:
        text = text.translate(marks)
    if not _CONFUSABLE.isdisjoint(chars):
        text = text.translate(_TO_LATIN)
    return text.casefold()


def words(text: str) -> list[str]:
    """The words of ``skeleton(text)``: runs of letters and digits, case-folded, look-alikes folded."""
    return _WORD.findall(skeleton(text))


def model_text(text: str, normalise: bool = True) -> str:
    """What the embedding model reads of a text: ``visible(text)`` (legacy, ``normalise`` false: as written)."""
    return visible(text) if normalise else text


def stems(words: Iterable[str]) -> frozenset[str]:
    """The Snowball (Porter2) English stems of ``words`` ("antibodies" and "antibody" are "antibodi",
    "vaccines" and "vaccinated" "vaccin"); numbers and words of other scripts are kept as they are.
    PyStemmer (the Snowball project's C stemmers, a stemmer per call: they are not thread-safe); each word's stem is
    kept (up to ``_STEMS_KEPT`` words, then the memo starts again: miner text can hold any number of
    distinct words)."""
    found = {w: _STEMS.get(w) for w in set(words)}
    missing = [w for w, s in found.items() if s is None]
    if missing:
        new = dict(zip(missing, _stemmer().stemWords(missing)))
        if len(_STEMS) + len(new) > _STEMS_KEPT:
            _STEMS.clear()
        _STEMS.update(new)
        found.update(new)
    return frozenset(s for s in found.values() if s is not None)


_STEMS: dict[str, str] = {}
_STEMS_KEPT = 200_000


def _stemmer() -> Any:

    return Stemmer.Stemmer("english")  # a new one per call: a stemmer is not thread-safe, and one costs 0.4 us


__all__ = ["fold_confusables", "model_text", "skeleton", "stems", "visible", "words"]
