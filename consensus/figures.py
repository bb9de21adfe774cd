"""Long answers' figures against the round's agreed facts (issue 38, item 2): which answers the LM is asked about.

The factual check's short answers cover one fact per answer, and on a prompt that asks for an explanation ("Why
does water boil at a lower temperature on a mountain?") they are not asked at all: an explanation's gist in eight
words is no fact to vote on. Its figures are: "water boils at 100 °C at sea level" is one fact most answers state,
and a long, fluent answer that puts it at 110 °C contradicts them however well it explains the rest.

The rule (pure, no LM) finds the round's **agreed figures** and the answers that state another value:

- each member's figures are ``consensus.quantity.quantities`` of its visible text that are measures (``MEASURED``:
  a unit, "100 °C", "4 g", "43%", or a calendar year), the prompt's own numbers left out; durations, counts and
  the nouns after numbers are not read (recipes and estimates vary them between honest answers);
- a value of a quantity is **agreed** when at least ``AGREED_MIN`` members state it (at the coarser precision of two
  values: 100 = 100.0) and they are more than half of the members that state that quantity at all;
- the agreed fact's **context** is the content words (not the prompt's, not the unit's) that three quarters of the
  agreeing clauses (between commas) share ("sea", "level" in "water boils at 100 °C at sea level"); a figure without one is no fact
  ("1/4 cup" of sugar, of honey, of oil in a round of recipes);
- a member that never states the agreed value and has a clause with the context's words and another value of the
  quantity dissents; a dissenter is a **suspect** when it is the only one (``DISSENT_MAX``) and the agreed value's
  members are at least ``DISSENT_RATIO`` times as many (a fact nearly all answers give one value, not a setting honest answers vary: an oven at 350 °F or
  375 °F). A suspect's figure may contradict the agreed fact ("110 °C at sea level"), or count something else in
  the same words.

A rule cannot tell those two apart; the LM is asked (``lm.figures``), and only about suspects: it writes the value
the suspect's answer gives for the thing the agreed sentence states. When that value is one of the suspect's own
other values and not the agreed one, the LM has confirmed the contradiction and the edge gives it as
``Signals.figure_contradictions``; ``consensus.factual_stage`` then removes the member (reason ``factual``), unless the
reference backs it. A suspect the LM did not reach, or whose value it did not find, stays: nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from consensus.fact_match import _equal_at_precision, _match, _stem, facts_of
from consensus.quantity import _QUANTITY, _UNITS, YEAR, _show, quantities

# the quantities read: a unit of measurement ("100 °C", "4 g", "43%") or a calendar year. A noun after a number is
# no fact's measure in long answers ("2 large eggs", "1/2 red pepper", "10 million tokens" of an invented coin)
MEASURED = frozenset({q for q, _ in _UNITS.values()} | {YEAR})
AGREED_MIN = 3  # members stating a value before it is the round's agreed fact
DISSENT_MAX = 1  # a lone dissenter: two answers that give another value are a second opinion, not one slip
DISSENT_RATIO = 3  # the agreed value's members per member that states another value in its context, at least
CONTEXT_SHARE = 0.75  # the agreeing clauses that must share a word before it is the fact's context
_CLAUSE = re.compile(r"[,;:]\s")
# a sentence: up to a full stop, question or exclamation mark before a space or the end (not "3.5"), or a line end
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?](?!\s|$)[^.!?\n]*)*(?:[.!?](?=\s|$)|\n|$)")


@dataclass(frozen=True)
class Suspect:
    """A member whose figure on an agreed quantity is another value than the agreed one."""

    index: int
    quantity: str  # "°C", "calendar year", "bone"
    agreed: Decimal  # the agreed value
    stated: tuple[Decimal, ...]  # the member's values of the quantity (none equals ``agreed``)
    agreed_sentence: str  # an agreeing member's sentence that states the agreed value (miner text)
    sentence: str  # the suspect's sentence that states its first value (miner text)
    blank: str  # ``agreed_sentence`` with the agreed figure blanked (``blanked``): what the LM is asked to fill

    @property
    def detail(self) -> str:
        shown = ", ".join(_show(x) for x in self.stated[:3])
        return f"states {shown} ({self.quantity}) where {AGREED_MIN} or more answers agree on {_show(self.agreed)}"


def figures_of(text: str, prompt: str) -> dict[str, list[Decimal]]:
    """The quantities ``text`` states and their values, the prompt's own numbers left out."""
    given = {n for n, _ in quantities(prompt)}
    out: dict[str, list[Decimal]] = {}
    for n, q in quantities(text):
        if q in MEASURED and n not in given:
            out.setdefault(q, []).append(n)
    return out


def agreed_figures(figures: Mapping[int, Mapping[str, Sequence[Decimal]]]) -> dict[str, Decimal]:
    """Quantity -> its agreed value (the module docstring's rule) over the members' ``figures``."""
    out: dict[str, Decimal] = {}
    for q in sorted({q for f in figures.values() for q in f}):
        stating = {i: f[q] for i, f in figures.items() if f.get(q)}
        candidates = sorted({v for vs in stating.values() for v in vs})
        best, count = None, 0
        for v in candidates:
            n = sum(any(_equal_at_precision(v, x) for x in vs) for vs in stating.values())
            if n > count:
                best, count = v, n
        if best is not None and count >= AGREED_MIN and 2 * count > len(stating):
            out[q] = best
    return out


def suspects(texts: Mapping[int, str], prompt: str) -> tuple[Suspect, ...]:
    """Members (``texts``: index -> visible text) with a clause that states an agreed quantity at another value, in
    the agreed fact's context, and that never state the agreed value; one per member, in index order."""
    figures = {i: figures_of(t, prompt) for i, t in texts.items()}
    found: dict[int, Suspect] = {}
    for q, v in agreed_figures(figures).items():
        backers = [j for j in sorted(texts) if any(_equal_at_precision(v, x) for x in figures[j].get(q, []))]
        said = [sentence_with(texts[j], v, q) for j in backers]
        context = fact_context([clause_with(s, v, q) for s in said], q, prompt)
        if not context:
            continue  # "1/4 cup" of sugar, of honey, of oil: a figure many answers state is no one fact
        dissent: dict[int, Suspect] = {}
        for i in sorted(set(texts) - set(backers) - set(found)):
            for sentence in _SENTENCE.findall(texts[i]):
                hit = [
                    other
                    for clause in _CLAUSE.split(sentence)
                    if (other := [n for n in figures_of(clause, prompt).get(q, []) if not _equal_at_precision(n, v)])
                    and all(any(_match(c, w) for w in _content(clause, q, prompt)) for c in context)
                ]
                if hit:
                    stated = tuple(figures[i].get(q, hit[0]))
                    agreed_sentence = min(said, key=len)
                    blank = blanked(agreed_sentence, v, q)
                    dissent[i] = Suspect(i, q, v, stated, agreed_sentence, sentence.strip()[:400], blank)
                    break
        # a fact, not a setting: the answers that speak of it nearly all give one value ("100 °C at sea level");
        # recipes' oven temperatures and times vary between honest answers, and none of them is the wrong one
        if dissent and len(dissent) <= DISSENT_MAX and len(backers) >= DISSENT_RATIO * len(dissent):
            found.update(dissent)
    return tuple(found[i] for i in sorted(found))


def fact_context(clauses: Sequence[str], quantity: str, prompt: str) -> frozenset[str]:
    """The content words (not the prompt's, not the unit's) that at least ``CONTEXT_SHARE`` of the agreeing
    ``clauses`` share: what the agreed figure is a figure of ("sea", "level" for "100 °C at sea level")."""
    counts: dict[str, int] = {}
    for c in clauses:
        for w in _content(c, quantity, prompt):
            counts[w] = counts.get(w, 0) + 1
    return frozenset(w for w, n in counts.items() if n >= CONTEXT_SHARE * len(clauses))


def clause_with(sentence: str, value: Decimal, quantity: str) -> str:
    """The clause of ``sentence`` (between commas, semicolons, colons) that states ``value`` of ``quantity``."""
    for clause in _CLAUSE.split(sentence):
        if any(q == quantity and _equal_at_precision(n, value) for n, q in quantities(clause)):
            return clause
    return sentence


def _content(text: str, quantity: str, prompt: str) -> frozenset[str]:
    return frozenset(
        w for w in facts_of(text, prompt).words if w not in _NOT_CONTEXT and not w.isdigit() and "°" not in w
    )


# a unit says what a figure counts, not what it is a figure of
_NOT_CONTEXT = (
    frozenset(_UNITS) | {_stem(u) for u in _UNITS} | {"degree", "degrees", "about", "around", "approximately"}
)


def sentence_with(text: str, value: Decimal, quantity: str, limit: int = 400) -> str:
    """The first sentence of ``text`` that states ``value`` of ``quantity`` (the text's start when none does)."""
    for m in _SENTENCE.finditer(text):
        s = m.group(0).strip()
        if any(q == quantity and _equal_at_precision(n, value) for n, q in quantities(s)):
            return s[:limit]
    return text.strip()[:limit]


def blanked(sentence: str, value: Decimal, quantity: str) -> str:
    """``sentence`` with the figures that state ``value`` of ``quantity`` replaced by a blank ("Dyson proposed it in
    ___."): the LM is asked to fill it from the suspect's answer and cannot copy the agreed value."""
    out, last = [], 0
    for m in _QUANTITY.finditer(sentence):
        found = quantities(m.group(0))
        if found and found[0][1] == quantity and _equal_at_precision(found[0][0], value):
            out += [sentence[last : m.start(1)], "___"]
            last = m.end(2) if m.group(2) else m.end(1)
    return "".join(out) + sentence[last:]


def confirms(reply_values: Sequence[tuple[Decimal, str | None]], suspect: Suspect) -> bool | None:
    """Does the LM's value (``quantities`` of its reply) confirm the contradiction? True: it is one of the suspect's
    values and not the agreed one; False: it is the agreed value (the suspect's figure counts something else); None:
    the LM gave neither (no value, another one): nothing is decided."""
    values = [n for n, q in reply_values if q in (None, suspect.quantity)]
    if any(_equal_at_precision(n, suspect.agreed) for n in values):
        return False
    if any(_equal_at_precision(n, x) for n in values for x in suspect.stated):
        return True
    return None


@dataclass(frozen=True)
class FigureCheck:
    index: int
    quantity: str
    agreed: str  # the agreed value, as shown
    reply: str | None  # the LM's value for the agreed thing (miner-derived text: quote it wherever it is shown)
    contradicts: bool | None  # True: the LM confirmed the contradiction; False: cleared; None: decided nothing
    detail: str  # what the rule found (``Suspect.detail``)
    skipped: str | None = None  # why the LM was not asked or gave nothing


def read_figures(
    found: Sequence[Suspect], replies: Mapping[int, str | None], skipped: Mapping[int, str]
) -> tuple[FigureCheck, ...]:
    """Each suspect with the LM's value for the agreed thing (``replies``: index -> the value it wrote, None: none;
    ``skipped``: index -> why it was not asked, the budget), read by ``confirms``; index order."""
    checks = []
    for s in sorted(found, key=lambda s: s.index):
        reply, agreed = replies.get(s.index), _show(s.agreed)
        if s.index in skipped:
            checks.append(FigureCheck(s.index, s.quantity, agreed, None, None, s.detail, skipped[s.index]))
        elif reply is None:
            checks.append(
                FigureCheck(s.index, s.quantity, agreed, None, None, s.detail, "skipped: the LM gave no value")
            )
        else:
            checks.append(FigureCheck(s.index, s.quantity, agreed, reply, confirms(quantities(reply), s), s.detail))
    return tuple(checks)
