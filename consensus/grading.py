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


_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$|^\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.MULTILINE)
_MATH = re.compile(r"\$\$.*?\$\$|\\\[.*?\\\]|\\begin\{(\w+\*?)\}.*?\\end\{\1\}|\$[^$\n]+\$|\\\(.*?\\\)", re.DOTALL)
_CODE_CHARS = frozenset("()[]{}=;<>\"'_/*+#%&|\\$@`^~")
CODE_SHARE = 0.04  # a fenced block with at least this share of code characters is code; fewer, it is words
PROSE_MIN_WORDS = 8  # an answer with fewer words outside code, tables and formulas is in another form


# a line of code or of a shell: a statement keyword or comment, an assignment, a call, a command's option or file
_CODE_LINE = re.compile(
    r"^\s*(import|from|def|class|return|#|//|\$|>>>|pip3?|npm|yarn|sudo|apt(-get)?|git|cd|ls|python3?|brew|conda|"
    r"docker|curl|wget|make|cargo|mkdir|echo|export)\s|\w\s*=\s*\S|\w\(|\s--?[A-Za-z]|"
    r"\b\w+\.(py|js|ts|sh|tex|dvi|pdf|txt|json|csv|html|md|c|cpp|h|java|rs|go|rb|sql|yml|yaml|toml)\b",
    re.MULTILINE,
)


def is_code(block: str) -> bool:
    """Does a fenced block hold code (brackets, operators, quotes: ``CODE_SHARE`` of its visible characters; or a
    line of code or of a shell: ``_CODE_LINE``)? A fence around a list of the topic's keywords is words, read as
    the answer's text."""
    body = block.strip("`").split("\n", 1)[-1] if "\n" in block else block.strip("`")
    visible = [c for c in body if not c.isspace()]
    if not visible:
        return False
    return sum(c in _CODE_CHARS for c in visible) >= CODE_SHARE * len(visible) or bool(_CODE_LINE.search(body))


def prose_text(text: str) -> str:
    """An answer's text without what has a form of its own: fenced code (``is_code``), Markdown tables and
    formulas (LaTeX). A fence around plain words stays (it is not code)."""
    body = _FENCED.sub(lambda m: " " if is_code(m.group()) else m.group().replace("`", " "), text)
    return _MATH.sub(" ", _TABLE_ROW.sub(" ", body))


# a comment in code ("# TLS handshake, session key"), and a table's cells: words a reader reads (issue 45)
_COMMENT = re.compile(r"(?:^|(?<=\s))(?:#|//|--)\s?([^\n]*)|/\*(.*?)\*/|<!--(.*?)-->", re.DOTALL | re.MULTILINE)
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$", re.MULTILINE)


def worded_text(text: str) -> str:
    """``prose_text`` with the words that hide in the other forms put back as words: a Markdown table's cells and
    the comments of fenced code (issue 45: a list of the topic's keywords in a table or in code comments beside one
    line of prose earned 2.6x an honest mean, since the prose rule graded only that line). Code and formulas stay
    out."""

    def code(m: re.Match[str]) -> str:
        block = m.group()
        if not is_code(block):
            return block.replace("`", " ")
        return "\n" + "\n".join("".join(g or "" for g in c.groups()) for c in _COMMENT.finditer(block)) + "\n"

    body = _FENCED.sub(code, text)
    body = _DELIMITER_ROW.sub(" ", body)
    body = _TABLE_ROW.sub(lambda m: m.group().replace("|", " . "), body)
    return _MATH.sub(lambda m: " . ".join(_TEXT_IN_MATH.findall(m.group())) or " ", body)


_TEXT_IN_MATH = re.compile(r"\\(?:text|textrm|textit|textbf|mathrm|operatorname)\{([^{}]*)\}")


def prose_share(text: str) -> float | None:
    """The share of an answer's words outside code, tables and formulas (``prose_text``) that are English function
    words (scikit-learn's stop words: "the", "of", "which", ...): sentences have many, a list of terms has almost
    none. None when fewer than ``PROSE_MIN_WORDS`` words are left: an answer in code, a table or a formula is not
    graded by its prose. Beside prose, the words of its tables' cells and its code's comments (``worded_text``) count
    too, only ever to lower the share: keywords there count no more than in prose (issue 45)."""
    prose = prose_text(text)
    own = _function_share(prose, text)
    if not words(prose):
        return own  # all in a table, code or a formula: a form of its own
    worded = _function_share(worded_text(text), text)
    if own is None or worded is None:
        return worded if own is None else own
    return min(own, worded)


def _function_share(part: str, text: str) -> float | None:
    # lazy: start-up cost, scikit-learn takes 4.7 s to import
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    found = words(part)
    if len(found) < PROSE_MIN_WORDS and len(found) < len(words(text)):
        return None
    return sum(1 for w in found if w in ENGLISH_STOP_WORDS) / len(found) if found else 0.0


def with_prose(
    qualities: Mapping[int, float],
    shares: Mapping[int, float | None],
    members: np.ndarray,
    graded: frozenset[int],
    fraction: float,
    least_median: float = 0.1,
) -> dict[int, float]:
    """``quality * min(1, share / (fraction * the graded members' median share))`` for the ``graded``
    answers: an answer that is a list of terms (almost no function words, where the round's answers
    are written in sentences) loses quality in proportion. Unchanged when the median is under
    ``least_median`` (a round in another language, or of code) or ``fraction`` is 0."""
    known = {i: v for i, v in shares.items() if v is not None}  # None: code, a table, a formula (not prose)
    inside = [known[int(i)] for i in members if int(i) in graded and int(i) in known]
    median = float(np.median(inside)) if inside else 0.0
    if fraction <= 0 or median < least_median:
        return dict(qualities)
    bar = fraction * median
    return {i: float(q * min(1.0, known.get(i, bar) / bar)) if i in graded else q for i, q in qualities.items()}


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
    fenced = {
        i: frozenset(ctx.words(without_term_fences(r.text)))
        for i, r in enumerate(ctx.round.responses)
        if "```" in r.text
    }
    if not ctx.config.quality.quality_stems:
        return [residual.get(i, fenced.get(i, frozenset(w))) for i, w in enumerate(ctx.text_words)]
    return [
        stems(residual[i]) if i in residual else stems(fenced[i]) if i in fenced else w
        for i, w in enumerate(ctx.word_stems)
    ]


TERM_FENCE_WORDS = 5  # a fenced block of at least this many words and no sentence (no code either) is a term list


def without_term_fences(text: str) -> str:
    """``text`` without fenced blocks that hold a list of terms (not code, ``TERM_FENCE_WORDS`` words or more, under
    a tenth of them function words): a fence hides such a list from the prose rule, and its words are no coverage.
    Code, a command ("pip install requests") and quoted sentences stay."""

    def keep(m: re.Match[str]) -> str:
        block = m.group()
        if is_code(block):
            return block
        share = prose_share(block.replace("`", " "))
        return " " if len(words(block)) >= TERM_FENCE_WORDS and (share or 0.0) < 0.1 else block

    return _FENCED.sub(keep, text)


def quality_prompt_words(ctx: Context) -> frozenset[str]:
    """The prompt's words (stems with ``quality_stems``)."""
    return stems(ctx.prompt_words) if ctx.config.quality.quality_stems else ctx.prompt_words


def quality_common(ctx: Context) -> frozenset[str]:
    """The generic English words (their stems with ``quality_stems``)."""
    return _common_stems() if ctx.config.quality.quality_stems else COMMON


@functools.cache
def _common_stems() -> frozenset[str]:
    return stems(COMMON)
