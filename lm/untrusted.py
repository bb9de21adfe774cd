"""Untrusted text (miner answers, model outputs) made safe to put in an LM prompt.

Every prompt the validator sends that carries text it did not write (a
polarity check, reference judging, SelectIT, the narrative) puts that text
between two markers (``<<<ANSWER`` ... ``ANSWER>>>``) or the seed judge's dash
fences (``-------``) and says it is data. ``quote_untrusted`` makes sure the
text cannot end its own quotation or start a new turn:

- any run of three or more angle brackets (``<``, ``>`` and look-alikes such
  as ``‹ « ⟨ 〈 ❮ ＜``) becomes ``<<`` or ``>>``, so neither marker can appear
  (``ANSWER>>>`` -> ``ANSWER>>``) while ``a << b`` in code is kept;
- any run of three or more dashes (``-`` and look-alikes such as ``— – − ─ －``)
  becomes ``--``, so no dash fence can appear;
- spaces and invisible format characters (zero-width joiners, bidi overrides)
  between the characters of a run do not split it (``- - -``, ``<\u200b<<``);
- chat-template role tokens (``<|im_end|>``, ``<|user|>``) are broken
  (``< |im_end| >``), and control characters other than newline and tab go;
- the result is cut at ``limit`` characters (`` [...]`` marks the cut).

Everything else is kept as written (no Unicode normalisation of the text
itself), so an honest answer reaches the LM unchanged. The guarantee, tested
in tests/lm/test_untrusted.py: whatever the input, the quoted text, folded
as a reader would see it (``fold``), holds no marker, no run of three
brackets or dashes and no role token. It does not make an LM ignore
instructions written in plain words; that is the prompt's job, and the checks
downstream (clamped scores, the narrative's fact check) bound what such text
can do.
"""

from __future__ import annotations

import re
import unicodedata

OPEN, CLOSE = "<<<ANSWER", "ANSWER>>>"

_LEFT = "<\ufe64\uff1c\ufe3f\u2039\u00ab\u27e8\u3008\u2329\u276e\u276c\u1438\u02c2\u226a\u22d8"
_RIGHT = ">\ufe65\uff1e\ufe40\u203a\u00bb\u27e9\u3009\u232a\u276f\u276d\u1433\u02c3\u226b\u22d9"
# the Unicode dash punctuation (category Pd), minus signs, a bullet and box-drawing lines that render as dashes
_DASHES = (
    "\u002d\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2e17\u2e1a\u2e3a\u2e3b"
    "\u2e40\u2e5d\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
    "\u2212\u207b\u208b\uff70\u2043\u2500\u2501\u2504\u2505\u2508\u2509\u254c\u254d\u23af\u2796\u30fc"
)
# every invisible format character (Unicode category Cf)
_INVISIBLE = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_GAP = rf"(?:[^\S\r\n\x85\u2028\u2029]|[{_INVISIBLE}])*"  # within a line: a line break ends a run


def _run(chars: str) -> re.Pattern[str]:
    one = f"[{re.escape(chars)}]"
    return re.compile(f"{one}(?:{_GAP}{one}){{2,}}")


_LEFT_RUN = _run(_LEFT)
_RIGHT_RUN = _run(_RIGHT)
_DASH_RUN = _run(_DASHES)
_PIPE = "|\uff5c"
_ROLE = re.compile(rf"[<\ufe64\uff1c]{_GAP}([{_PIPE}][^\n]{{0,40}}?[{_PIPE}]){_GAP}[>\ufe65\uff1e]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f]")


def fold(text: str) -> str:
    """The text as a reader sees it: NFKC, invisible format characters dropped, look-alikes made ASCII."""
    out = []
    for char in unicodedata.normalize("NFKC", text):
        if unicodedata.category(char) == "Cf":
            continue
        out.append("<" if char in _LEFT else ">" if char in _RIGHT else "-" if char in _DASHES else char)
    return "".join(out)


def quote_untrusted(text: str, limit: int = 4000) -> str:
    """``text`` made safe to quote between markers or dash fences in a prompt; at most ``limit`` characters."""
    cleaned = _CONTROL.sub("", text.replace("\r\n", "\n"))
    cleaned = _ROLE.sub(lambda m: f"< {m.group(1)} >", cleaned)
    cleaned = _LEFT_RUN.sub("<<", cleaned)
    cleaned = _RIGHT_RUN.sub(">>", cleaned)
    cleaned = _DASH_RUN.sub("--", cleaned)
    if len(cleaned) > limit:
        cleaned = cleaned[:limit] + " [...]"
    return cleaned


def fenced(text: str, limit: int = 4000, *, open_: str = OPEN, close: str = CLOSE) -> str:
    """``text`` quoted between its markers on their own lines, ready to put in a prompt."""
    return f"{open_}\n{quote_untrusted(text, limit)}\n{close}"


__all__ = ["CLOSE", "OPEN", "fenced", "fold", "quote_untrusted"]
