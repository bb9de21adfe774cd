"""A reference answer decides: which answers state its facts, which contradict them.

MiniLM puts "Lyon is the capital of France" beside "Paris is the capital of France" and "212
bones" beside "206 bones": the embedding cannot tell a right answer from a wrong one on the same
topic. A round that carries a reference answer (a canary, or a task with a known answer) is judged
on the reference's facts, read by the rules of ``consensus.fact_match`` (no LM):

- the reference's facts are its numbers and its content words that the prompt does not give
  (``facts.facts_of``: "Paris is the capital of France." asked "What is the capital of France?"
  -> {"paris"}; "An adult has 206 bones." -> 206);
- an answer's ``agreement`` is the share of those facts it states: a reference number counts when
  the answer states it at the coarser precision of the two (100 = 100.0; 206 != 212), a word by the
  prefix rule ("tilt" ~ "tilted"). When the reference has numbers and the answer states numbers,
  the numbers decide: stating only other numbers contradicts the reference (agreement 0).

``clusters`` ranks the clusters by their members' mean ``support`` (the reference decides, not the count: issue 45,
below) before counting voices; an answer that contradicts the reference leaves with reason ``reference``, one that
states none of its facts is scored low, not removed. The composite's reference part reads the agreement. Only a reference
that states a short answer decides (``short_answer``: at most three content words of its own, or a number in
one sentence, as "Paris is the capital of France." or "An adult has 206 bones."): an explanation can be said in other
words, and its rounds keep the embedding similarity to the reference (``Signals.reference_similarity``).

Claims decide before any similarity (``claims_of``, ``contradiction``; session 16, issue 38), whatever the reference's
length:

- a reference that opens with "Yes" or "No" decides the round's yes/no: an answer that opens with the other side
  (or, in its first sentence, says only the other: "Cracking your knuckles does not cause arthritis.") states the
  reference's claim wrongly, agreement 0; one on the reference's side agrees (1.0, or its share of a short
  reference's facts); one that takes no side is neither (0.5 when the reference is an explanation);
- a reference number with a quantity (the unit or noun after it, "4 g", "206 bones"; a bare year, "in 1989"),
  outside a worked example ("For example, 100 °C is 212 °F": ``asserted``), decides every number an answer states on the same quantity: an answer that states that quantity, and never at
  the reference's value, contradicts it (agreement 0), however long and otherwise right it is ("8 g a day" against
  "at most 4 g a day"; "fell in 1991" against "1989"). Numbers on other quantities are not read.

A long reference (more than one sentence, or more than three content words and no number) is read by its claims
(``claim_shares``, session 18): one per asserted sentence, an answer's share the mean of how fully it states each;
the composite's reference and quality parts read it (``consensus.score``).

Canaries read the same rules (``contradiction``, ``validator.canaries``). Pure.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from consensus.claims import numerals, offers_forbidden, prohibitions
from consensus.fact_match import _STOP, Facts, _equal_at_precision, _match, _stem, facts_of, yes_no_labels


def reference_facts(reference: str, prompt: str) -> Facts:
    """The facts of a reference answer: its numbers and content words the prompt does not give."""
    return facts_of(reference, prompt)


def agreement(text: str, facts: Facts, prompt: str) -> float | None:
    """Share of the reference's ``facts`` that ``text`` states, in [0, 1]; None when the reference states none."""
    if not (facts.numbers or facts.words):
        return None
    said = facts_of(text, prompt)
    if facts.numbers and said.numbers:
        return sum(any(same_value(y, x) for y in said.numbers) for x in facts.numbers) / len(facts.numbers)
    if not facts.words:
        return 0.0  # numbers asked, none stated
    return sum(any(_match(w, v) for v in said.words) for w in facts.words) / len(facts.words)


DECISIVE_WORDS = 3  # a reference states a short answer when it has a number or at most this many content words


def decisive(facts: Facts) -> bool:
    """Does the reference state a short answer (a number, a name: "Paris", "206") that an answer either states or
    not? An explanation ("a function mapping data to a fixed-size value") can be said in other words ("it turns
    input into a short digest"): its words are no test of an answer."""
    return bool(facts.numbers) or 0 < len(facts.words) <= DECISIVE_WORDS


def short_answer(reference: str, prompt: str, facts: Facts | None = None) -> bool:
    """Is the reference a short answer (``decisive``) rather than an explanation? A number decides in one sentence
    ("An adult has 206 bones."); in an explanation of several ("Cool it for 20 minutes. Cover it. ...") an answer
    need not state it at all, and its claims are read by ``claim_shares``."""
    facts = reference_facts(reference, prompt) if facts is None else facts
    if 0 < len(facts.words) <= DECISIVE_WORDS:
        return True
    return bool(facts.numbers) and len(claim_facts(reference, prompt)) <= 1


def agreements(texts: Mapping[int, str], reference: str | None, prompt: str) -> dict[int, float]:
    """Index -> agreement with the reference's claims for every text; empty without a reference, or when it states
    neither a short answer (``short_answer``) nor a claim (a yes/no, a number on a quantity: ``claims_of``)."""
    if not reference:
        return {}
    claims = claims_of(reference, prompt)
    short = short_answer(reference, prompt, claims.facts)
    if not (short or claims.decides):
        return {}
    out = {}
    for i, text in texts.items():
        if contradiction(text, claims) is not None:
            out[i] = 0.0
            continue
        side = opening_side(text)
        if short:
            a = agreement(text, claims.facts, prompt)
            if a is None:
                return {}
            out[i] = 1.0 if claims.yes_no is not None and side is claims.yes_no else a
        else:  # an explanation: only its claims are read; an answer on its side agrees, one on none is neither
            out[i] = 1.0 if claims.yes_no is not None and side is claims.yes_no else NEUTRAL
    return out


NEUTRAL = 0.5  # an answer that neither states nor contradicts a long reference's claims

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
CLAIM_STATED = 0.5  # a claim is stated when an answer states this share of its words (a smaller share, in proportion)


def claim_facts(reference: str, prompt: str = "") -> tuple[Facts, ...]:
    """A reference's claims: each asserted sentence (worked examples left out, ``asserted``) as its facts, the
    prompt's words left out; sentences with no fact of their own ("No.") count when they state a yes or no."""
    out = []
    for sentence in _SENTENCE.split(asserted(reference)):
        facts = facts_of(numerals(sentence), prompt)
        if facts.numbers or facts.words:
            out.append(facts)
    return tuple(out)


def claim_share(text: str, claims: Sequence[Facts], prompt: str = "") -> float:
    """Mean over the reference's ``claims`` of how fully ``text`` states each: the share of a claim's numbers and
    words it states (the rules of ``agreement``), a claim counting whole from ``CLAIM_STATED`` of them."""
    if not claims:
        return 0.0
    said = facts_of(numerals(text), prompt)  # "twenty minutes" states "20 minutes"
    total = 0.0
    for claim in claims:
        hits = sum(any(_equal_at_precision(x, y) for y in said.numbers) for x in claim.numbers)
        hits += sum(any(_match(w, v) for v in said.words) for w in claim.words)
        total += min(1.0, hits / (len(claim.numbers) + len(claim.words)) / CLAIM_STATED)
    return total / len(claims)


def claim_shares(texts: Mapping[int, str], reference: str | None, prompt: str) -> dict[int, float]:
    """Index -> share of a long reference's claims each text states (``claim_share``; 0 when it contradicts one,
    ``contradiction``): how the composite reads agreement with an explanation, which answers say in their own
    words, so an answer stating half of it earns less than one stating all. Empty without a reference or for a
    short one (``short_answer``: ``agreements`` reads it)."""
    if not reference:
        return {}
    claims = claims_of(reference, prompt)
    if short_answer(reference, prompt, claims.facts):
        return {}
    facts = claim_facts(reference, prompt)
    if not facts:
        return {}
    return {i: 0.0 if contradiction(t, claims) is not None else claim_share(t, facts, prompt) for i, t in texts.items()}


@dataclass(frozen=True)
class Claims:
    """What a reference asserts that an answer can contradict: its yes/no and its numbers on a quantity."""

    facts: Facts  # ``reference_facts``
    yes_no: bool | None = None  # the reference opens with "Yes" (True) or "No" (False)
    quantities: tuple[tuple[Decimal, str], ...] = ()  # (number, quantity) pairs: (4, "g"), (1989, "year")
    forbidden: tuple[frozenset[str], ...] = ()  # what its prohibitions forbid ("Do not put ice ...": consensus.claims)

    @property
    def decides(self) -> bool:
        return self.yes_no is not None or bool(self.quantities) or bool(self.forbidden)


def claims_of(reference: str, prompt: str = "") -> Claims:
    """The reference's claims (the module docstring's rules)."""
    given = {n for n, _ in quantities(prompt)}
    return Claims(
        reference_facts(reference, prompt),
        opening_side(reference) if _LEAD.match(_plain(reference)) else None,
        tuple((n, q) for n, q in quantities(asserted(reference)) if q and n not in given and _decides(q, prompt)),
        prohibitions(asserted(reference), prompt),
    )


_EXAMPLE = re.compile(
    r"(?:^|(?<=[.!?;:\n(]))\s*(?:(?:for (?:example|instance)|say|such as|example)\b|e\.\s?g\.)[^.!?;\n)]*[.!?;)]?",
    re.IGNORECASE,
)


def asserted(reference: str) -> str:
    """The reference without its worked examples ("For example, 100 °C is 212 °F."; "(e.g. 20 °C)"): an example's
    figures illustrate a method, an answer that works another example does not contradict them."""
    return _EXAMPLE.sub(" ", reference)


def contradiction(text: str, claims: Claims) -> str | None:
    """Why ``text`` contradicts the reference's ``claims`` (its yes/no, or a quantity it states at another value
    only); None when it does not."""
    if claims.yes_no is not None:
        side = opening_side(text)
        if side is not None and side is not claims.yes_no:
            return f"says {'yes' if side else 'no'}; the reference says {'yes' if claims.yes_no else 'no'}"
    named = offers_forbidden(text, claims.forbidden)
    if named:
        return f"offers {', '.join(named)}, which the reference says not to use"
    if not claims.quantities:
        return None
    stated: dict[str, list[Decimal]] = {}
    bare: list[Decimal] = []
    for n, q in quantities(text):
        if q:
            stated.setdefault(q, []).append(n)
        else:
            bare.append(n)
    for q in sorted({q for _, q in claims.quantities}):
        right = [n for n, k in claims.quantities if k == q]
        said = stated.get(q, [])
        # a factor stated as a decimal ("by 1.8") states the reference's "9/5"; "5/9" beside it is the inverse
        shown_too = bare if q == FRACTION else []
        if said and not any(same_value(x, y) for x in said + shown_too for y in right):
            shown = ", ".join(_show(x) for x in said[:3])
            return f"states {shown} ({q}); the reference says {', '.join(dict.fromkeys(_show(y) for y in right))}"
    return None


def states_otherwise(text: str, claims: Claims) -> bool:
    """Does ``text`` state, besides or instead of the reference's value of a quantity it claims, another value of
    it ("about 90 degrees Celsius; the familiar 100 °C only applies in a lab")? Such an answer does not state the
    reference's claim plainly, so the reference does not vouch for it against a reading of what it says."""
    right: dict[str, list[Decimal]] = {}
    for n, q in claims.quantities:
        right.setdefault(q, []).append(n)
    return any(q in right and not any(same_value(n, y) for y in right[q]) for n, q in quantities(text) if q)


def why_contradicting(text: str, reference: str, prompt: str) -> str:
    """The reason an answer leaves the dominant cluster: the reference's claim it contradicts, else its facts."""
    why = contradiction(text, claims_of(reference, prompt))
    if why is not None:
        return f"contradicts the reference answer: {why}"
    return "states none of the reference answer's facts, which other answers state"


# "Yes" or "No" that answers the question: followed by a clause break or a short reply ("No, it does not", "Yes it
# is"), not the first word of an idiom ("No problem at all", "No doubt about it: ...", "No reason not to")
_LEAD = re.compile(
    r"^\W*(yes|no)(?:\s*(?:[,.!;:\u2014\u2013)-]|$)|\s+(?=(?:it|they|you|we|i|he|she|that|this|there|not|never)\b))",
    re.IGNORECASE,
)
_FIRST = re.compile(r"^(.*?)(?:[.!?;:\n]|$)", re.DOTALL)


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def opening_side(text: str) -> bool | None:
    """True / False when ``text`` opens with yes / no, or its first sentence says only one of them ("X does not
    cause Y" is no); None when it says neither or both."""
    plain = _plain(text)
    lead = _LEAD.match(plain)
    if lead:
        return lead.group(1).lower() == "yes"
    first = _FIRST.match(plain)
    sentence = first.group(1) if first else plain
    if len(sentence.split()) > FIRST_SENTENCE_WORDS or _IDIOM.match(sentence):
        return None
    return yes_no_labels({0: sentence})[0]


# openings whose negation answers nothing: "No problem at all", "Not only can you ...", "No reason not to", "No doubt
# about it" (issue 45: each was read as "no", and the last one agreed with a "No." reference)
_IDIOM = re.compile(
    r"^\W*(?:no\s+(?:problem|doubt|question|wonder|worries|matter|reason\s+not)|not\s+only|nothing\s+wrong)\b",
    re.IGNORECASE,
)
FIRST_SENTENCE_WORDS = 25  # a longer opening sentence is an explanation, not a yes or a no

_QUANTITY = re.compile(
    r"(?<![\w./])(-?\d+(?:,\d{3})*(?:\.\d+)?)(?:/(\d+(?:\.\d+)?)(?![\d/]))?"
    r"\s*(°\s*[cfk]\b|degrees?\s+(?:celsius|fahrenheit|c|f)\b|%|[^\W\d_]+)?",
    re.IGNORECASE,
)
# unit -> (quantity, factor to its base unit): "4 g" and "4,000 mg" state the same mass
_UNITS = {
    "g": ("mass", "1"), "gram": ("mass", "1"), "grams": ("mass", "1"), "gramme": ("mass", "1"),
    "grammes": ("mass", "1"), "mg": ("mass", "0.001"), "milligram": ("mass", "0.001"),
    "milligrams": ("mass", "0.001"), "kg": ("mass", "1000"), "kilogram": ("mass", "1000"),
    "kilograms": ("mass", "1000"), "mcg": ("mass", "0.000001"), "µg": ("mass", "0.000001"),
    "microgram": ("mass", "0.000001"), "micrograms": ("mass", "0.000001"),
    "ml": ("volume", "0.001"), "millilitre": ("volume", "0.001"), "milliliter": ("volume", "0.001"),
    "millilitres": ("volume", "0.001"), "milliliters": ("volume", "0.001"), "l": ("volume", "1"),
    "litre": ("volume", "1"), "liter": ("volume", "1"), "litres": ("volume", "1"), "liters": ("volume", "1"),
    "km": ("length", "1000"), "kilometre": ("length", "1000"), "kilometer": ("length", "1000"),
    "kilometres": ("length", "1000"), "kilometers": ("length", "1000"), "m": ("length", "1"),
    "metre": ("length", "1"), "meter": ("length", "1"), "metres": ("length", "1"), "meters": ("length", "1"),
    "cm": ("length", "0.01"), "mm": ("length", "0.001"),
    "%": ("percent", "1"), "percent": ("percent", "1"),
    "°c": ("°C", "1"), "celsius": ("°C", "1"), "°f": ("°F", "1"), "fahrenheit": ("°F", "1"),
    "degreescelsius": ("°C", "1"), "degreecelsius": ("°C", "1"), "degreesc": ("°C", "1"), "degreec": ("°C", "1"),
    "degreesfahrenheit": ("°F", "1"), "degreefahrenheit": ("°F", "1"), "degreesf": ("°F", "1"), "degreef": ("°F", "1"),
    "°k": ("kelvin", "1"), "kelvin": ("kelvin", "1"),
}  # fmt: skip
# durations: an answer states many of them on one topic (a dose "every 4 to 6 hours" and "in 24 hours"), so they
# decide only when the prompt asks how long
_TIME = frozenset(
    {
        "second",
        "minute",
        "minut",
        "hour",
        "day",
        "days",
        "week",
        "month",
        "year",
        "decade",
        "decad",
        "centurie",
        "centuri",
    }
    | {"century"}
)  # with the stems ``_stem`` gives ("minutes" -> "minut", "days" stays)
_HOW_LONG = re.compile(r"\bhow (long|many (seconds|minutes|hours|days|weeks|months|years))\b", re.IGNORECASE)
# words after a number that name no quantity ("4 or 5", "3 to 4 g")
_NO_QUANTITY = _STOP | {"and", "or", "to", "times", "x", "st", "nd", "rd", "th", "s", "am", "pm"}
YEAR = "calendar year"
FRACTION = "fraction"  # a bare fraction ("multiply by 9/5"): a factor, which another factor ("5/9") contradicts


def quantities(text: str) -> list[tuple[Decimal, str | None]]:
    """Every number of ``text`` with the quantity it counts, in that quantity's base unit: a unit ("4 g", "4,000 mg"
    -> (4, "mass"); "100 °C" -> "°C"), else the noun after it, stemmed ("206 bones" -> "bone"), else a calendar year
    for a whole number from 1000 to 2100 with no word after it ("in 1989."); a fraction is its value ("1/2 cup" ->
    (0.5, "cup")), a bare one a ``FRACTION`` ("by 9/5" -> (1.8, "fraction")); None when nothing says (a number before
    "and", "to")."""
    out: list[tuple[Decimal, str | None]] = []
    for m in _QUANTITY.finditer(unicodedata.normalize("NFKC", text).replace("\u00a0", " ")):
        try:
            n = Decimal(m.group(1).replace(",", ""))
        except InvalidOperation:  # pragma: no cover - the pattern only matches decimals
            continue
        unit = (m.group(3) or "").lower().replace(" ", "")
        q: str | None = None
        if m.group(2):  # a fraction: "9/5" is 1.8, "1/2 cup" half a cup
            denominator = Decimal(m.group(2))
            if not denominator:
                continue
            n = n / denominator
            if not unit or unit in _function_words():
                out.append((n, FRACTION))
                continue
        if unit in _UNITS:
            q, factor = _UNITS[unit]
            n = n * Decimal(factor)
        elif unit and unit not in _function_words() and len(unit) >= 2 and (known := _pint_unit(unit)) is not None:
            q, scale = known  # "238,900 miles", "93 feet": at the figures the answer gave
            n = _figures(n * scale, n)
        elif unit and unit not in _function_words() and len(unit) >= 3:
            q = _stem(unit)
        elif (
            (not unit or (unit in _function_words() and unit != "s"))  # "the 1960s" is a decade, no year
            and n == n.to_integral_value()
            and 1000 <= n <= 2100
            and "," not in m.group(1)
        ):
            q = YEAR
        out.append((n, q))
    return out


# pint's dimensions the quantities above read, and the factor from pint's base unit to theirs (metre, gram, litre)
_PINT = {
    "[length]": ("length", Decimal(1)),
    "[mass]": ("mass", Decimal(1000)),
    "[length] ** 3": ("volume", Decimal(1000)),
}


@functools.cache
def _registry() -> Any:
    import pint  # loaded once, at the first unit the table above does not hold (about 1.5 s)

    return pint.UnitRegistry()


@functools.cache
def _pint_unit(word: str) -> tuple[str, Decimal] | None:
    """A length, mass or volume unit the table does not hold ("miles", "feet", "lb", "ounces") as (quantity, factor
    to the table's base unit); None for any other word ("bones")."""
    if not word.isalpha():
        return None
    try:
        base = (1 * _registry().parse_units(word)).to_base_units()
    except Exception:  # pint raises its own errors for a word that is no unit (UndefinedUnitError, parse errors)
        return None
    known = _PINT.get(str(base.dimensionality))
    return None if known is None else (known[0], Decimal(repr(float(base.magnitude))) * known[1])


def _figures(value: Decimal, written: Decimal) -> Decimal:
    """``value`` (``written`` converted) rounded to the significant figures ``written`` has ("238,900" has 4)."""
    if not value:
        return value
    places = _unit(written).adjusted() - written.copy_abs().adjusted()  # -(figures - 1)
    return value.scaleb(0).quantize(Decimal(1).scaleb(value.adjusted() + places))


def _unit(n: Decimal) -> Decimal:
    """One unit of ``n``'s last significant figure: 0.01 for 7.35, 1 for 7, 1,000 for 384,000 (a whole number's
    trailing zeros are not significant), 100 for 3.845E+8."""
    exponent = n.as_tuple().exponent
    if isinstance(exponent, int) and exponent < 0:
        return Decimal(1).scaleb(exponent)
    reduced = n.normalize().as_tuple().exponent
    return Decimal(1).scaleb(
        max(int(exponent) if isinstance(exponent, int) else 0, int(reduced) if isinstance(reduced, int) else 0)
    )


def same_value(stated: Decimal, reference: Decimal) -> bool:
    """Does an answer's ``stated`` figure state the ``reference``'s value? Within the reference's own precision
    (4.2 for "4 g"; 7 is not 7.35), or the reference rounded at the answer's precision within 1% ("384,000 km",
    "385,000 km" for 384,400 km; 206 is not 212)."""
    if stated == reference:
        return True
    gap = abs(stated - reference)
    return gap <= _unit(reference) / 2 or (gap <= _unit(stated) and gap <= abs(reference) / 100)


@functools.cache
def _function_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return _NO_QUANTITY | frozenset(str(w) for w in ENGLISH_STOP_WORDS)


def _decides(quantity: str, prompt: str) -> bool:
    return quantity not in _TIME or bool(_HOW_LONG.search(prompt))


def _show(n: Decimal) -> str:
    exponent = n.as_tuple().exponent
    text = format(n.quantize(Decimal("0.001")) if isinstance(exponent, int) and exponent < -3 else n, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# With a reference the reference decides, not the count (issue 45): every answer gets a support in [0, 1], read by
# the rules above; the dominant cluster is the one whose answers the reference supports most, an answer the
# reference supports joins the consensus from any cluster, and its composite is scaled by ``support_factor``. An
# answer that neither states nor contradicts the reference is scored low, not removed: removing one that states
# none of a short reference's facts took 8.4% of TruthfulQA's honest answers (benchmarks.truthfulqa_rounds), above
# the 1% a removal rule may cost; a contradiction (a yes/no, a quantity, a prohibition: 0.1%, 0.2%, 0%) still removes.
AGREES = 0.5  # support from which an answer is in consensus whatever cluster it is in
SUPPORT_FLOOR = 0.05  # the composite's factor for an answer the reference does not support (support 0)
CONTRADICTS = -1.0  # the support of an answer that contradicts the reference
UNDENIED = 0.3  # support kept by an answer that denies nothing when the reference denies (see ``denies``)
_DENIAL = re.compile(
    r"\b(?:not|no|never|nothing|none|nobody|neither|nor|cannot|impossible|unclear|myths?|false|fictional|"
    r"isnt|arent|wasnt|werent|doesnt|dont|didnt|cant|wont|shouldnt|couldnt|wouldnt|hasnt|havent)\b|n['\u2019]t\b"
)


def denies(text: str) -> bool:
    """Does ``text`` deny or dispel something ("nothing in particular happens", "X does not cause Y", "a myth")? A
    TruthfulQA best answer denies in 47% of questions and the imitative falsehood affirms the myth: among those
    rounds an answer's denying or not tells a correct one from a false one at AUROC 0.78 (0.47 where the reference
    affirms: there it is not read)."""
    return bool(_DENIAL.search(_plain(text).lower()))


def support(texts: Mapping[int, str], reference: str | None, prompt: str) -> dict[int, float]:
    """Index -> how far the reference supports each text, in [0, 1], or ``CONTRADICTS`` (-1) when the text contradicts
    it (``contradiction``); empty without a reference, or one that states neither a fact nor a claim. Else a yes/no on
    the reference's side, or one of its quantities at its value (``states_quantity``), is 1; against a reference of one sentence, a short one's ``agreement`` or a longer one's
    ``claim_share``, times ``UNDENIED`` when the reference denies (``denies``) and the text does not; against an
    explanation of several sentences no other answer is read (absent: the count and the composite decide)."""
    if not reference:
        return {}
    claims = claims_of(reference, prompt)
    short = short_answer(reference, prompt, claims.facts)
    stated = () if short else claim_facts(reference, prompt)
    if not (short or stated or claims.decides):
        return {}
    # one sentence decides (TruthfulQA's best answers, a canary's short answer); an explanation of several sentences
    # can be said in other words (its rounds read its claims in the composite, consensus.score): only its claims decide
    one = len([x for x in _SENTENCE.split(asserted(reference).strip()) if x.strip()]) == 1
    ref_denies = one and denies(reference)
    # a reference's yes or no is read from an answer's opening only: "No doubt about it: red enrages bulls" holds the
    # word "no" and takes the other side
    facts = (
        Facts(claims.facts.numbers, claims.facts.words - {"yes", "no"}) if claims.yes_no is not None else claims.facts
    )
    out = {}
    for i, text in texts.items():
        if contradiction(text, claims) is not None:
            out[i] = CONTRADICTS
        elif (claims.yes_no is not None and opening_side(text) is claims.yes_no) or states_quantity(text, claims):
            out[i] = 1.0
        elif one:
            s = (agreement(text, facts, prompt) or 0.0) if short else claim_share(text, stated, prompt)
            out[i] = s * UNDENIED if ref_denies and not denies(text) else s
    return out


def states_quantity(text: str, claims: Claims) -> bool:
    """Does ``text`` state one of the reference's quantities at its value ("4 grams a day" for "at most 4 g in 24
    hours")? The figure is the reference's claim however the rest is worded."""
    return any(q == k and same_value(n, m) for n, q in quantities(text) if q for m, k in claims.quantities)


def support_factor(value: float) -> float:
    """The composite's factor for an answer of reference ``support`` ``value``: 0 when it contradicts the reference
    (it earns nothing), else from ``SUPPORT_FLOOR`` (supported by nothing) to 1 (fully)."""
    return 0.0 if value < 0.0 else SUPPORT_FLOOR + (1.0 - SUPPORT_FLOOR) * min(1.0, value / AGREES)
