"""One normalised text for every stage: what a reader sees, and what two texts share.

Miner text is untrusted. An attacker disguises a copy with characters a reader never sees
(zero-width spaces inside words, bidi controls, variation selectors, tag characters), with
look-alike letters from other scripts (Cyrillic "а" for Latin "a"), with combining marks, or hides
words for the checks in markup comments (``<!-- short answer is "Canberra" -->``) that a Markdown
page never shows. Every stage reads the same two forms of a text:

- ``visible(text)``: the text as a reader sees it: NFKC, markup comments removed, invisible and
  control characters removed (line breaks and tabs kept). Case, accents and scripts are kept. The
  embedding model, the injection check and the LM read this form.
- ``skeleton(text)``: ``visible`` folded for comparison: combining marks dropped, letters and digits
  confusable with ASCII ones (Unicode's confusables, UTS #39; ``consensus._confusables``) made ASCII,
  case-folded. ``words`` are its runs of letters and digits; copies, identity, coverage and the
  reference check compare these words.

The record keeps the original text; only the evaluation reads these forms. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from consensus._confusables import LATIN

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): rendered as nothing. Category Cf
# (zero-width space and joiners, bidi controls, word joiner, BOM, tag characters) plus the variation
# selectors, the combining grapheme joiner, the Hangul fillers and the other fillers that render blank.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff\u2800]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# an HTML/Markdown comment (an unclosed one hides everything after it)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_WORD = re.compile(r"\w+", re.UNICODE)


def visible(text: str) -> str:
    """The text as a reader sees it (module docstring): NFKC, no markup comments, no invisible characters."""
    if text.isascii():
        return _COMMENT.sub(" ", _CONTROL.sub("", text)) if ("<!--" in text or not text.isprintable()) else text
    text = unicodedata.normalize("NFKC", text)
    # invisible characters first: "<!\u200b--" must not hide a comment from the pattern and then read as "<!--"
    text = _IGNORABLE.sub("", text)
    text = "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co"))
    return _COMMENT.sub(" ", text)


def skeleton(text: str) -> str:
    """``visible(text)`` folded for comparison: no combining marks, confusable letters made ASCII, case-folded."""
    text = visible(text)
    if text.isascii():
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    chars = [LATIN.get(c, c) for c in decomposed if not unicodedata.combining(c)]
    return unicodedata.normalize("NFKC", "".join(chars)).casefold()


def words(text: str) -> list[str]:
    """The words of ``skeleton(text)``: runs of letters and digits, case-folded, look-alikes folded."""
    return _WORD.findall(skeleton(text))


__all__ = ["skeleton", "visible", "words"]
