"""Reading a miner's answer to a task as honest models write it (pure).

The request asks for a last line ``Answer: ...``; models also write ``**Answer:** 42``, ``The answer is 42.``,
``\\boxed{42}``, a bold ``**42**``, units (``188 legs``), a trailing period, or a number in words. ``extract``
finds the answer's span, in this order of evidence:

1. the last line that states it: ``Answer: X`` / ``Final answer: X`` (markdown around it allowed);
2. the last ``\\boxed{X}``;
3. the last ``the (final) answer is X``;
4. the last bold span ``**X**``;
5. the whole reply when it is one short line.

The span is cleaned (markdown, quotes, a trailing period, ``$...$`` around it) and given to the verifier with at
most a few readings more: the leading number when the rest is only a unit (``188 legs`` -> ``188``), the number
without its thousands separators or currency (``$42,000``), what follows the last ``=`` (``x = 13``,
``36 - 26 = 10``), the one number of a sentence that states only one and denies nothing (``he needs 18 minutes``
-> ``18``; not ``the total is not 4``), a number written in words (``twelve`` -> ``12``), a product written with
another sign (``3 * 5 * 31``, ``2 \\times 3``) and the one value a sentence restating the question states
(``stated``: ``The Least Common Multiple (LCM) of 9 and 2 is 18`` -> ``18``). The verifier decides;
``tasks.verify`` keeps its best score over those readings of the one span (never over several spans, so a reply
listing guesses gains nothing). A reply with no span is unreadable, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SPAN = 200  # characters: a longer "answer" is an explanation, not an answer
SHORT_REPLY = 60  # a whole reply this short (one line) is its own answer

_ANSWER_LINE = re.compile(
    r"^[\s>*_#`-]*(?:the\s+)?(?:final\s+)?answer\s*[*_]*\s*(?:is)?\s*[:：=]\s*[*_]*\s*(?P<span>.+?)\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_BOXED = re.compile(r"\\boxed\s*\{")
_ANSWER_IS = re.compile(r"\b(?:the\s+)?(?:final\s+)?answer\s+is\s*:?\s*(?P<span>[^\n]+)", re.IGNORECASE)
_BOLD = re.compile(r"\*\*(?P<span>[^*\n]+?)\*\*")
_UNIT = re.compile(
    r"^(?P<number>[-+]?\$?\d[\d,]*(?:\.\d+)?)\s*(?:%|°\w*|[A-Za-z][A-Za-z'’]*(?:\s+[A-Za-z][A-Za-z'’]*)?)$"
)

# the one statement of a sentence that restates the question and gives its value ("The LCM of 9 and 2 is 18")
_STATES = re.compile(
    r"(?<![\w'’])(?:is(?:\s+equal\s+to)?|are|equals|evaluates\s+to|comes\s+to)(?![\w'’])\s*:?|=|:(?=\s)",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"(?<![\w'’])(?:or|not|no|nor|never|maybe|perhaps|either|possibly|probably|might|could|would|should|guess|"
    r"wrong|incorrect|instead|rather|but|if|than|unless|except|because|and\s+(?:so|then)|also|answer)(?![\w'’])|n[’']t\b|[?;]",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"(?<![\w'’])(?:not|no|never|nor|wrong|incorrect)(?![\w'’])|n[’']t\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!])\s+(?=[A-Z])")
_NUMBER = r"[-+]?\$?\d[\d,]*(?:\.\d+)?"
_PRODUCT_SIGN = r"\s*(?:[x*·×]|\\times|\\cdot)\s*"
_VALUE = re.compile(
    rf"(?P<number>{_NUMBER})(?:\s+(?P<unit>[A-Za-z]+))?"
    rf"|(?P<fraction>\d+\s*/\s*\d+)"
    rf"|(?P<product>\d+(?:{_PRODUCT_SIGN}\d+)+)"
    r"|(?P<words>[A-Za-z]+(?:[-\s][A-Za-z]+)?)"
)

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORDS = {w: i for i, w in enumerate(_ONES)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}


@dataclass(frozen=True)
class Extracted:
    """What was read: the readings to verify (the cleaned span first), how it was found, or why nothing was."""

    readings: tuple[str, ...]
    how: str  # "answer line", "boxed", "answer is", "bold", "whole reply"; "" when unreadable
    reason: str = ""  # why nothing was read (empty when something was)

    @property
    def answer(self) -> str | None:
        return self.readings[0] if self.readings else None


def _boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (braces balanced)."""
    starts = [m.end() for m in _BOXED.finditer(text)]
    if not starts:
        return None
    depth, i = 1, starts[-1]
    begin = i
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[begin : i - 1] if depth == 0 else None


def clean(span: str) -> str:
    """The span without what surrounds an answer: markdown, quotes, ``$...$``, ``\\boxed{}``, a trailing period."""
    s = span.strip()
    inner = _boxed(s)
    if inner is not None:
        s = inner
    for _ in range(4):
        before = s
        s = s.strip().strip("*_`").strip()
        if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'“”":
            s = s[1:-1]
        if len(s) >= 2 and s[0] == "“" and s[-1] == "”":
            s = s[1:-1]
        if s.startswith("$") and s.endswith("$") and len(s) > 2 and "$" not in s[1:-1]:
            s = s[1:-1]
        if s.startswith("\\(") and s.endswith("\\)"):
            s = s[2:-2]
        s = s.rstrip()
        if s.endswith((".", "!")):
            s = s[:-1]
        if s == before:
            break
    return s.strip()


def number_in_words(text: str) -> int | None:
    """``twelve`` -> 12, ``forty-two`` / ``forty two`` -> 42, ``minus three`` -> -3 (0..99); None otherwise."""
    words = re.sub(r"[-\s]+", " ", text.strip().lower()).split()
    sign = 1
    if words[:1] in (["minus"], ["negative"]):
        sign, words = -1, words[1:]
    if len(words) == 1 and words[0] in _WORDS:
        return sign * _WORDS[words[0]]
    if len(words) == 2 and words[0] in _TENS and words[1] in _ONES[1:10]:
        return sign * (_WORDS[words[0]] + _WORDS[words[1]])
    return None


def readings(span: str, question: str | None = None) -> tuple[str, ...]:
    """The cleaned span, then the readings of it the module docstring names (none repeated); ``question``, when
    given, bounds the ``stated`` reading (its restatement may only name the question's numbers)."""
    s = clean(span)
    out = [s]
    unit = _UNIT.match(s)
    if unit is not None:
        out.append(unit.group("number").replace("$", "").replace(",", ""))
    if re.fullmatch(r"[-+]?\$?\d{1,3}(?:,?\d{3})*(?:\.\d+)?", s):  # $42,000 -> 42000
        out.append(s.replace(",", "").replace("$", ""))
    if re.fullmatch(rf"\d+(?:{_PRODUCT_SIGN}\d+)+", s):  # a product written with another sign: 3 * 5 * 31
        out.append(" × ".join(re.split(_PRODUCT_SIGN, s)))
    if "=" in s:  # a solved equation or a worked sum (x = 13, 36 - 26 = 10): what follows the last "="
        out.append(s.rsplit("=", 1)[1].strip())
    numbers = re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?", s)
    # a sentence stating one number: "he needs 18 minutes" (not one denying it: "the total is not 4")
    if len(numbers) == 1 and len(s.split()) > 1 and not _NEGATION.search(s):
        out.append(numbers[0].replace(",", ""))
    spoken = number_in_words(s)
    if spoken is not None:
        out.append(str(spoken))
    value = stated(s, question)
    if value is not None:
        out.append(value)
    return tuple(dict.fromkeys(r for r in out if r))


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


def stated(sentence: str, question: str | None = None) -> str | None:
    """The one value a sentence states after its one "is" / "=" / "equals" / ":" (``The Least Common Multiple
    (LCM) of 9 and 2 is 18`` -> ``18``, ``The prime factorization of 52 is: 2 × 2 × 13`` -> ``2 × 2 × 13``).

    None unless the sentence is one statement of one value: exactly one such sign; after it only a number (with
    at most one unit word), a fraction, a product or a number in words; before it no hedge, negation or second
    clause (``or``, ``not``, ``but``, ``if``, ``answer``, ``?``, ``;`` ...) and, when the question is given, no number the
    question does not hold (the words before the sign restate the question, they offer no candidate). So
    ``18 is not right, it is 36``, ``x = 3 and y is 5`` and ``12, or rather the LCM is 24`` read nothing here.

    A span of several sentences (``The GCD of 6 and 20 is 2. The GCD is the largest integer that divides both 6
    and 20.``) states its value only when the question is given, exactly one sentence states one, and the others
    hold no hedge and no number the question lacks (``The LCM is 18. Or maybe 36.`` reads nothing)."""
    parts = _SENTENCES.split(sentence.strip())
    if len(parts) == 1:
        return _one_statement(sentence, question)
    if question is None or len(sentence) > MAX_SPAN:
        return None
    values = [_one_statement(clean(p), question) for p in parts]
    if sum(v is not None for v in values) != 1:
        return None
    value = next(v for v in values if v is not None)
    for part, v in zip(parts, values, strict=True):
        if v is None and (_HEDGE.search(part) or not _numbers(part) <= _numbers(question)):
            return None
    return value


def _one_statement(sentence: str, question: str | None) -> str | None:
    """``stated`` of one sentence."""
    signs = list(_STATES.finditer(sentence))
    if len(signs) != 1 or len(sentence) > MAX_SPAN:
        return None
    head, tail = sentence[: signs[0].start()], clean(sentence[signs[0].end() :])
    if not head.strip() or _HEDGE.search(head) or (signs[0].group() == ":" and not re.search(r"[A-Za-z]{2}", head)):
        return None  # a hedged or chained head states no one value; "12: 14" is a list, not a label
    if question is not None and not _numbers(head) <= _numbers(question):
        return None
    value = _VALUE.fullmatch(tail)
    if value is None:
        return None
    if value.group("number") is not None:
        unit = value.group("unit")
        if unit is not None and _HEDGE.fullmatch(unit):
            return None
        return value.group("number").replace(",", "").replace("$", "")
    if value.group("fraction") is not None:
        return re.sub(r"\s+", "", value.group("fraction"))
    if value.group("product") is not None:
        return " × ".join(re.split(_PRODUCT_SIGN, value.group("product")))
    spoken = number_in_words(value.group("words"))
    return None if spoken is None else str(spoken)


def extract(text: str, question: str | None = None) -> Extracted:
    """The answer of a reply (module docstring); unreadable replies say why. ``question``: the task's (``stated``)."""
    if not text or not text.strip():
        return Extracted((), "", "empty reply")
    found: list[tuple[str, str]] = []
    lines = list(_ANSWER_LINE.finditer(text))
    if lines:
        found.append((lines[-1].group("span"), "answer line"))
    boxed = _boxed(text)
    if boxed is not None:
        found.append((boxed, "boxed"))
    said = list(_ANSWER_IS.finditer(text))
    if said:
        found.append((said[-1].group("span"), "answer is"))
    bold = list(_BOLD.finditer(text))
    if bold:
        found.append((bold[-1].group("span"), "bold"))
    stripped = text.strip()
    if "\n" not in stripped and len(stripped) <= SHORT_REPLY:
        found.append((stripped, "whole reply"))
    for span, how in found:
        r = readings(span, question)
        if r and len(r[0]) <= MAX_SPAN:
            return Extracted(r, how)
    if found:
        return Extracted((), "", f"the stated answer is empty or longer than {MAX_SPAN} characters")
    return Extracted((), "", "no answer found: no 'Answer:' line, \\boxed{}, 'the answer is' or short reply")
