"""Facts of short texts, compared by rule: numbers at the coarser precision, content words by prefix.

The rules ``consensus.factual_stage`` (the LM's short answers) and ``consensus.reference`` (the round's
reference answer) share; ``consensus.factual_stage``'s docstring states them. Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?")
_TOKEN = re.compile(r"[a-z0-9]+\([^()]*\)|[a-z][a-z0-9]*")
_STOP = frozenset(
    """a an the is are was were be been it its it's this that these those of in on at to for from by with and
or as but so than then there their they he she we you your i my our do does did done use using used call run can could
would should will just only also very about approximately roughly around nearly almost some any answer short respondent
says say said which what who whom whose when where why how into onto over under per one vs versus etc""".split()
)
# negations read as "no" (apostrophes are dropped before: "isn't" -> "isnt")
_NO = {w: "no" for w in ("not", "nope", "never", "isnt", "doesnt", "dont", "arent", "wasnt", "cant", "wont")}
_NO.update(yeah="yes", yep="yes")


@dataclass(frozen=True)
class Facts:
    """What a short answer asserts: its numbers (those the prompt does not give) and content words."""

    numbers: tuple[Decimal, ...]
    words: frozenset[str]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _numbers(text: str) -> list[Decimal]:
    out = []
    for m in _NUMBER.findall(text):
        try:
            out.append(Decimal(m.replace(",", "")))
        except InvalidOperation:  # pragma: no cover - the pattern only matches decimals
            continue
    return out


def _words(text: str) -> set[str]:
    words = set()
    for raw in _TOKEN.findall(re.sub(r"(\w)'(\w)", r"\1\2", text)):
        word = _NO.get(raw, raw)
        if "(" in word:  # an expression is one word, and its inner words count too ("o(log n)": "log")
            words.add(word.replace(" ", ""))
            words |= _words(word[word.index("(") + 1 : -1])
        elif word not in _STOP and len(word) > 1:
            words.add(_stem(word))
    return words


def facts_of(answer: str, prompt: str = "", *, yes_no: bool = False) -> Facts:
    """The numbers and content words of a short answer, the prompt's own left out (the module docstring's rule).

    ``yes_no``: the prompt asks yes or no, so the answer's fact is its "yes" or "no" alone.
    """
    text = unicodedata.normalize("NFKC", answer).lower().replace("`", " ").replace("*", " ")
    if yes_no:
        return Facts((), frozenset(_words(text) & {"yes", "no"}))
    asked = unicodedata.normalize("NFKC", prompt).lower()
    given = set(_numbers(asked))
    numbers = tuple(n for n in _numbers(text) if n not in given)
    words = {w for w in _words(text) - _words(asked) if not w.isdigit()}
    return Facts(numbers, frozenset(words))


def _equal_at_precision(a: Decimal, b: Decimal) -> bool:
    exp = max(a.as_tuple().exponent, b.as_tuple().exponent)  # the coarser of the two (e.g. -1 for 3.1)
    quantum = Decimal(1).scaleb(int(exp))
    try:
        return a.quantize(quantum) == b.quantize(quantum)
    except InvalidOperation:  # more digits than the context holds (miner text can be any length): exact only
        return a == b


def same_answer(a: Facts, b: Facts) -> bool:
    """Do two short answers state the same answer? (The module docstring's rule; symmetric.)"""
    if a.numbers and b.numbers:
        few, many = (a, b) if len(a.numbers) <= len(b.numbers) else (b, a)
        return all(any(_equal_at_precision(x, y) for y in many.numbers) for x in few.numbers)
    if not a.words or not b.words:
        return not a.words and not b.words and not a.numbers and not b.numbers
    shared = max(
        sum(any(_match(x, y) for y in b.words) for x in a.words),
        sum(any(_match(x, y) for y in a.words) for x in b.words),
    )
    return 2 * shared >= min(len(a.words), len(b.words))


def _match(x: str, y: str) -> bool:
    """Equal, or one a prefix of the other of at least 3 letters ("log" ~ "logarithmic", "tilt" ~ "tilted")."""
    short, long_ = (x, y) if len(x) <= len(y) else (y, x)
    return short == long_ or (len(short) >= 3 and long_.startswith(short))


def stated_in(short: str, text: str, prompt: str = "") -> bool:
    """Does the answer's ``text`` state the facts of its ``short`` answer? (The module docstring's rule.)

    True when the short answer has nothing to look for (it does not vote anyway).
    """
    own = facts_of(short, prompt)
    if not (own.numbers or own.words):
        return True
    said = facts_of(text, prompt)
    if any(any(_equal_at_precision(x, y) for y in said.numbers) for x in own.numbers):
        return True
    if any(any(_match(w, v) for v in said.words) for w in own.words):
        return True
    return bool(own.numbers) and not own.words and not said.numbers


def unstated(
    answers: Mapping[int, str], texts: Mapping[int, str], prompt: str = "", *, yes_no: bool = False
) -> frozenset[int]:
    """Members whose short answer their own text does not state (``stated_in``); none on a yes/no prompt."""
    if yes_no:
        return frozenset()
    return frozenset(i for i, short in answers.items() if i in texts and not stated_in(short, texts[i], prompt))


def compare(
    answers: Mapping[int, str], texts: Mapping[int, str], prompt: str = "", *, yes_no: bool = False
) -> tuple[frozenset[int], dict[int, tuple[float, tuple[int, ...]]]]:
    """(members whose text does not state their short answer, ``support`` of the others): one vote per stated answer."""
    silent = unstated(answers, texts, prompt, yes_no=yes_no)
    return silent, support({i: a for i, a in answers.items() if i not in silent}, prompt, yes_no=yes_no)


def support(
    answers: Mapping[int, str], prompt: str = "", *, yes_no: bool = False
) -> dict[int, tuple[float, tuple[int, ...]]]:
    """Member -> (share of the other answered members whose short answer agrees, those members).

    A lone answer has support 1.0 (nobody contradicts it). A short answer that states no number or word
    of its own ("ANSWER", or only the question's words; on a yes/no prompt, neither yes nor no: "I'd avoid
    it") is no signal: it gets no entry and no vote.
    """
    facts = {
        i: f
        for i, f in ((i, facts_of(text, prompt, yes_no=yes_no)) for i, text in answers.items())
        if f.numbers or f.words
    }
    out = {}
    for i in sorted(facts):
        others = [j for j in sorted(facts) if j != i]
        agree = tuple(j for j in others if same_answer(facts[i], facts[j]))
        out[i] = (len(agree) / len(others) if others else 1.0, agree)
    return out


def agrees_with_reference(
    answers: Mapping[int, str], reference: str, prompt: str = "", *, yes_no: bool = False
) -> dict[int, bool]:
    """Member -> does its short answer state the reference's answer (``same_answer``)? Short answers that
    state nothing, or a reference that states nothing of its own, give no entry (no signal)."""
    ref = facts_of(reference, prompt, yes_no=yes_no)
    if not (ref.numbers or ref.words):
        return {}
    out = {}
    for i, text in sorted(answers.items()):
        own = facts_of(text, prompt, yes_no=yes_no)
        if own.numbers or own.words:
            out[i] = same_answer(own, ref)
    return out


def answer_groups(answers: Mapping[int, str], prompt: str = "", *, yes_no: bool = False) -> tuple[tuple[int, ...], ...]:
    """The distinct short answers: members grouped by ``same_answer`` with the first member of a group (in index
    order; the rule is not transitive, so a group is the answers its first one states). Short answers that state
    nothing are left out."""
    groups: list[list[int]] = []
    heads: list[Facts] = []
    for i, text in sorted(answers.items()):
        own = facts_of(text, prompt, yes_no=yes_no)
        if not (own.numbers or own.words):
            continue
        for head, group in zip(heads, groups):
            if same_answer(own, head):
                group.append(i)
                break
        else:
            heads.append(own)
            groups.append([i])
    return tuple(tuple(g) for g in groups)


# a sentence's end; what a leading "No" is followed by up to the first of these is its own statement
_SENTENCE_END = re.compile(r"[.!?;:\n]")
_LEADING_NO = re.compile(r"^\W*no\b\W*", re.IGNORECASE)
_QUESTION = re.compile(r"[^.!?\n]*\?")


def _sequence(text: str) -> list[str]:
    """The content words of ``text`` in their order (``_words``'s filter and stems, negations read as "no")."""
    out = []
    for raw in re.findall(r"[a-z][a-z0-9]*", re.sub(r"(\w)'(\w)", r"\1\2", text)):
        word = _NO.get(raw, raw)
        if word not in _STOP and len(word) > 1:
            out.append(_stem(word))
    return out


def says_no_then_yes(text: str, prompt: str) -> bool:
    """Does an answer to a yes/no ``prompt`` open with "No" and then restate the question's claim word for word
    with no negation ("No, water boils at a lower temperature at high altitude than at low altitude." to "Does
    water boil at a lower temperature at high altitude?")? Such an answer contradicts itself: its "no" is no vote.

    The claim is the content words of the prompt's first sentence ending in "?", its first word (the auxiliary)
    left out: at least three, no negation among them. The sentence right after the "No" must hold them in the
    same order with no other content word between them ("No, toads and frogs are different species" restates
    nothing: two words; "No, organic farming is farming that prohibits all pesticides" has words between), and
    no negation anywhere ("No, water does not boil ...", "... lower, not higher" keep the "no"). Pure."""
    asked = _QUESTION.search(unicodedata.normalize("NFKC", prompt).lower())
    said = unicodedata.normalize("NFKC", text).lower().replace("*", " ").replace("\u2019", "'")
    opening = _LEADING_NO.match(said)
    if asked is None or opening is None:
        return False
    claim = _sequence(" ".join(re.findall(r"[a-z][a-z0-9']*", asked.group(0))[1:]))
    if len(claim) < 3 or "no" in claim:
        return False
    first = _SENTENCE_END.split(said[opening.end() :], maxsplit=1)[0]
    stated = _sequence(first)
    negated = {"no", "not", "never", "cannot", "nor", "neither", "nothing", "none", "without"}
    if "no" in stated or "n't" in first or set(re.findall(r"[a-z]+", first)) & negated:
        return False
    return any(
        all(_match(w, s) for w, s in zip(claim, stated[k : k + len(claim)], strict=True))
        for k in range(len(stated) - len(claim) + 1)
    )


# The one list of openings whose negation answers nothing, for every reader of an answer's opening (this module's
# ``opening_yes_no``, ``consensus.reference.opening_side``): "No problem at all", "No doubt about it: ...", "No reason
# not to", "No one knows", "No longer ...", "Not only can you ...", "Nothing wrong with it" (issues 45 and 46)
NO_IDIOMS = ("problem", "doubt", "question", "wonder", "worries", "matter", "reason", "one", "longer", "more", "less")
# a negated problem noun affirms ("Not a problem", "No harm in it", "Never an issue"; issue 45)
_PROBLEMS = r"(?:problems?|issues?|harm|trouble|concerns?|worry|worries|downside|objection|bad\s+idea)"
IDIOM = re.compile(
    rf"^\W*(?:no\s+(?:{'|'.join(NO_IDIOMS)})|no\s+(?:real\s+|big\s+)?{_PROBLEMS}|not\s+only|nothing\s+wrong|"
    r"no\s+(?:\w+\s+){1,2}about\s+it|"  # "No two ways about it", "No ifs about it": emphasis, not a no
    rf"(?:not|never)\s+(?:a|an|any)\s+(?:real\s+|big\s+)?{_PROBLEMS})\b",
    re.IGNORECASE,
)
# "Yes" or "No" that answers: followed by a clause break or a short reply ("No, it does not", "Yes it is")
_LEAD = re.compile(
    r"^\W*(yes|no)(?:\s*(?:[,.!;:\u2014\u2013)-]|$)|\s+(?=(?:it|they|you|we|i|he|she|that|this|there|not|never)\b))",
    re.IGNORECASE,
)


def opening_yes_no(text: str, prompt: str = "") -> bool | None:
    """True / False when ``text`` opens with the word "Yes" / "No" answering (before a clause break or a short reply,
    not an idiom of ``NO_IDIOMS``); with ``prompt``, a "No" that then restates the question's claim
    (``says_no_then_yes``) is None; None otherwise. The one reader of an answer's opening word: what a member the
    LM's short answers did not reach says (``validator.round.gather_evidence``), and an answer's side against a
    yes/no reference (``consensus.reference.opening_side``). Pure."""
    plain = unicodedata.normalize("NFKC", text).replace("*", " ").strip()
    said = None if IDIOM.match(plain) else _LEAD.match(plain)
    if said is None:
        return None
    if said.group(1).lower() == "yes":
        return True
    return None if prompt and says_no_then_yes(text, prompt) else False


def yes_no_labels(answers: Mapping[int, str]) -> dict[int, bool | None]:
    """Member -> True (its short answer says yes), False (no), None (both or neither): the polarity of a
    yes/no prompt read off the factual check's short answers."""
    out = {}
    for i, text in sorted(answers.items()):
        words = facts_of(text, yes_no=True).words
        out[i] = True if words == {"yes"} else False if words == {"no"} else None
    return out
