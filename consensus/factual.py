"""The factual stage: a member whose short answer the rest of the dominant cluster contradicts leaves.

Embeddings measure topic, not truth ("boils at about 90 °C" sits beside
"boils at 100 °C"). With the LM on, the edge (``lm.factual``) has the LM write
each member's answer in a few words ("90 °C", "Sydney", "O(n)"), and this
module compares those short answers, SelfCheckGPT-style: the other members are
the samples, and a fact that no majority of them states is the suspect one.

Comparing two short answers (``same_answer``) is a rule, not an LM call (the
1.5B LM's yes/no on "same answer?" leans to yes: "Sydney" vs "Canberra" gave
P(yes) 0.39 against 0.53 for two right answers, docs/validity.md):

- on a yes/no prompt (the edge decides, ``lm.gating.is_yes_no_question``)
  the fact is the answer's "yes" or "no" ("nope", "not" read as no); a
  short answer with neither ("I'd avoid it") does not vote;
- the prompt's own numbers and words ("17 * 24", "seasons", "causes") are
  dropped: restating the question states no fact;
- numbers are the facts when both answers hold one: the two agree when
  every number of the answer with fewer numbers equals one of the other's at
  the coarser precision of the two (3.1 = 3.107 = 3.11; 408 != 418);
- otherwise words: at least half of the shorter answer's content words (stop
  words dropped, negations read as "no", light stemming) match one of the
  other's, equal or one a prefix of the other of 3 letters or more ("axial
  tilt" ~ "Earth's tilted axis"; "Sydney" !~ "Canberra"). A bracketed
  expression is one word plus its inner words ("o(n)" != "o(log n)" ~
  "logarithmic"). Lenient on purpose: a false "same" keeps a wrong answer
  paid, a false "different" costs an honest one.

``support``: each member's share of the other checked members whose short
answer agrees with its own. The stage (after polarity) removes a lone answer
against a common one:

- the round has a common answer when the median checked member's short
  answer is shared by at least ``config.factual_min_agreement`` (default
  1/2) of the other checked members (most members agree with most others),
  and at least 3 members were checked;
- then a member whose short answer no other checked member states leaves
  (reason ``factual``; like a polarity dissenter it earns nothing), unless
  such lone answers are at least half of the checked ones (the LM wrote the
  answers badly): nobody leaves, a note says so.

An answer must state its own short answer (``stated_in``; ``config.factual_requires_stated``): the LM
writes a short answer for any text, and for one that states none (a prompt injection that only quotes
the question, a fluent non-answer) it writes the answer from its own knowledge ("Canberra") and so
votes with the majority. A short answer none of whose facts (numbers at the coarser precision, content
words by the prefix rule; the prompt's own left out) appear in the answer's text is *not stated*: it
does not vote, and the member counts as a lone answer above (it leaves under the same quorum). A short
answer of numbers only is taken as stated when the text has no digits at all (a number spelled out,
"four hundred and eight", cannot be checked by rule). Not on yes/no prompts: "yes" is rarely written
out ("Lists are mutable").

Only a lone answer leaves: when a prompt has two right answers ("reverse()"
or slicing) both come in groups and both stay; a wrong answer that two
independent members give stays too (rewordings of one are a sybil group,
``consensus.groups``, before this). Members without a short answer (LM budget
spent, LM failure) are never removed and do not vote.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Mapping

import numpy as np

from consensus.stages import Context, Stage
from consensus.types import Reason

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?")
_TOKEN = re.compile(r"[a-z0-9]+\([^()]*\)|[a-z][a-z0-9]*")
_STOP = frozenset("""a an the is are was were be been it its it's this that these those of in on at to for from by with and
or as but so than then there their they he she we you your i my our do does did done use using used call run can could
would should will just only also very about approximately roughly around nearly almost some any answer short respondent
says say said which what who whom whose when where why how into onto over under per one vs versus etc""".split())
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
            words |= _words(word[word.index("(") + 1:-1])
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
    shared = max(sum(any(_match(x, y) for y in b.words) for x in a.words),
                 sum(any(_match(x, y) for y in a.words) for x in b.words))
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


def unstated(answers: Mapping[int, str], texts: Mapping[int, str], prompt: str = "", *, yes_no: bool = False
             ) -> frozenset[int]:
    """Members whose short answer their own text does not state (``stated_in``); none on a yes/no prompt."""
    if yes_no:
        return frozenset()
    return frozenset(i for i, short in answers.items() if i in texts and not stated_in(short, texts[i], prompt))


def compare(answers: Mapping[int, str], texts: Mapping[int, str], prompt: str = "", *, yes_no: bool = False
            ) -> tuple[frozenset[int], dict[int, tuple[float, tuple[int, ...]]]]:
    """(members whose text does not state their short answer, ``support`` of the others): one vote per stated answer."""
    silent = unstated(answers, texts, prompt, yes_no=yes_no)
    return silent, support({i: a for i, a in answers.items() if i not in silent}, prompt, yes_no=yes_no)


def support(answers: Mapping[int, str], prompt: str = "", *, yes_no: bool = False
            ) -> dict[int, tuple[float, tuple[int, ...]]]:
    """Member -> (share of the other answered members whose short answer agrees, those members).

    A lone answer has support 1.0 (nobody contradicts it). A short answer that states no number or word
    of its own ("ANSWER", or only the question's words; on a yes/no prompt, neither yes nor no: "I'd avoid
    it") is no signal: it gets no entry and no vote.
    """
    facts = {i: f for i, f in ((i, facts_of(text, prompt, yes_no=yes_no)) for i, text in answers.items())
             if f.numbers or f.words}
    out = {}
    for i in sorted(facts):
        others = [j for j in sorted(facts) if j != i]
        agree = tuple(j for j in others if same_answer(facts[i], facts[j]))
        out[i] = (len(agree) / len(others) if others else 1.0, agree)
    return out


def agrees_with_reference(answers: Mapping[int, str], reference: str, prompt: str = "", *, yes_no: bool = False
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


def yes_no_labels(answers: Mapping[int, str]) -> dict[int, bool | None]:
    """Member -> True (its short answer says yes), False (no), None (both or neither): the polarity of a
    yes/no prompt read off the factual check's short answers."""
    out = {}
    for i, text in sorted(answers.items()):
        words = facts_of(text, yes_no=True).words
        out[i] = True if words == {"yes"} else False if words == {"no"} else None
    return out


def factual(ctx: Context, alive: np.ndarray) -> Stage:
    """Lone short answers against a common one, removed (the rules in the module docstring)."""
    scores = ctx.signals.factual_agreement
    if scores is None or not ctx.config.factual_check:
        return Stage()
    quorum = ctx.config.factual_min_agreement
    members = {int(i) for i in alive}
    silent = {int(i) for i in (ctx.signals.factual_unstated or ()) if int(i) in members and int(i) not in scores} \
        if ctx.config.factual_requires_stated else set()
    checked = sorted({i for i in members if i in scores} | silent)
    lone = [i for i in checked if i in silent or scores[i] <= 0.0]
    if not lone:
        return Stage()
    # the typical member, not the best-connected one: in a round of procedures ("how do I make coffee?") one
    # short answer can overlap half of the others while no two of those agree with each other
    top = float(np.median([0.0 if i in silent else scores[i] for i in checked]))
    if len(checked) < 3 or top < quorum or 2 * len(lone) >= len(checked):
        note = (f"factual: {len(lone)} of {len(checked)} checked members give a short answer no other states, or "
                f"one their text does not state, but the round has no common answer (the median member's is shared "
                f"by {top:.2f} of the others, quorum {quorum:g}); nobody removed")
        return Stage(notes=(note,))
    common = f"the median member's is shared by {top:.2f} of the others (quorum {quorum:g})"
    why = f"no other checked member states its short answer, while {common}"
    not_said = f"its text does not state the short answer the LM wrote for it (no answer of its own), while {common}"
    return Stage({i: (Reason.FACTUAL, not_said if i in silent else why) for i in lone})
