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

Claims decide before any similarity (``claims_of``, ``contradiction``; 2026-11-26, issue 38), whatever the reference's
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
(``claim_shares``, 2026-11-26): one per asserted sentence, an answer's share the mean of how fully it states each;
the composite's reference and quality parts read it (``consensus.score``).

Canaries read the same rules (``contradiction``, ``validator.round.canaries``). Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from consensus.claims import forbids_asked, harmless_side, numerals, offers_forbidden, own_claim, prohibitions
from consensus.fact_match import (
    IDIOM,
    Facts,
    _equal_at_precision,
    _match,
    _words,
    facts_of,
    opening_yes_no,
    yes_no_labels,
)
from consensus.quantity import FRACTION, _decides, _show, quantities, same_value
from consensus.types import Reason


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
    given: frozenset[str] = frozenset()  # the prompt's word stems: no warning in an answer ("burn", asked about burns)
    prompt: str = ""  # the question, for an answer that calls the asked thing harmless (``side_of``)

    @property
    def decides(self) -> bool:
        return self.yes_no is not None or bool(self.quantities) or bool(self.forbidden)


def claims_of(reference: str, prompt: str = "") -> Claims:
    """The reference's claims (the module docstring's rules)."""
    given = {n for n, _ in quantities(prompt)}
    facts = reference_facts(reference, prompt)
    # a short answer's number in words is its number ("Eight legs." states 8); in a longer reference a number in words
    # is often no claim on a quantity ("many more than five senses", "a half-life of three to four hours")
    if 0 < len(facts.words) <= DECISIVE_WORDS and not facts.numbers:
        reference = numerals(reference)
        facts = reference_facts(reference, prompt)
    yes_no = opening_yes_no(reference)
    return Claims(
        facts,
        False if yes_no is None and forbids_asked(reference, prompt) else yes_no,
        tuple(
            (n, q)
            for n, q in quantities(asserted(reference), spelled=False)
            if q and n not in given and _decides(q, prompt)
        ),
        prohibitions(asserted(reference), prompt),
        frozenset(_words(unicodedata.normalize("NFKC", prompt).lower())),
        prompt,
    )


def side_of(text: str, claims: Claims) -> bool | None:
    """An answer's yes/no (``opening_side``), or, when its opening calls the asked thing harmless, the side that takes
    for the question (``consensus.claims.harmless_side``: "A little honey does no harm" is a yes to "Can I ...?")."""
    harmless = harmless_side(text, claims.prompt) if claims.prompt else None
    return harmless if harmless is not None else opening_side(text)


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
        side = side_of(text, claims)
        if side is not None and side is not claims.yes_no:
            return f"says {'yes' if side else 'no'}; the reference says {'yes' if claims.yes_no else 'no'}"
    named = offers_forbidden(text, claims.forbidden, claims.given)
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


_FIRST = re.compile(r"^(.*?)(?:[.!?;:\n]|$)", re.DOTALL)


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def opening_side(text: str) -> bool | None:
    """True / False when ``text`` opens with yes / no (``consensus.fact_match.opening_yes_no``, the one reader of the
    opening word and its idioms), or its first sentence says only one of them ("X does not cause Y" is no); None when
    it says neither or both, or opens with an idiom ("No problem at all": ``consensus.fact_match.NO_IDIOMS``)."""
    side = opening_yes_no(text)
    if side is not None:
        return side
    if _NOT_MYTH.match(text):
        return True  # "Absolutely not a myth: ..." affirms it
    if _MYTH.match(text):
        return False
    plain = _plain(text)
    first = _FIRST.match(plain)
    sentence = first.group(1) if first else plain
    if len(sentence.split()) > FIRST_SENTENCE_WORDS or IDIOM.match(sentence):
        return None
    return yes_no_labels({0: sentence})[0]


# an opening that calls the claim a myth ("Myth: ...", "That's a myth", "False.") says no
_MYTH = re.compile(
    r"^\W*(?:(?:that'?s|this\s+is|it'?s|it\s+is)\s+)?(?:(?:a|an|pure|just\s+a|an\s+old)\s+)?(?:myth|misconception|"
    r"false|untrue)\b\W*(?:[:.!;,\u2014\u2013-]|$)",
    re.IGNORECASE,
)
_NOT_MYTH = re.compile(
    r"^\W*(?:\w+\s+){0,2}?(?:not|no|hardly|never)\s+(?:a\s+|just\s+a\s+)?(?:myth|false|untrue|misconception)\b",
    re.IGNORECASE,
)
FIRST_SENTENCE_WORDS = 25  # a longer opening sentence is an explanation, not a yes or a no

# With a reference the reference decides, not the count (issue 45): every answer gets a support in [0, 1], read by
# the rules above; the dominant cluster is the one whose answers the reference supports most, an answer the
# reference supports joins the consensus from any cluster, and its composite is scaled by ``support_factor``. An
# answer that neither states nor contradicts the reference is scored low, not removed: removing one that states
# none of a short reference's facts took 8.4% of TruthfulQA's honest answers (benchmarks.truthfulqa_rounds), above
# the 1% a removal rule may cost; a contradiction (a yes/no, a quantity, a prohibition: 0.1%, 0.2%, 0%) still removes.
AGREES = 0.5  # support from which an answer is in consensus whatever cluster it is in
OFF_TOPIC_SUPPORT = 0.1  # below it an answer off topic by itself (``consensus.stages.OFF_TOPIC_FAR``) is removed
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


def support(
    texts: Mapping[int, str], reference: str | None, prompt: str, entailment: Mapping[int, float] | None = None
) -> dict[int, float]:
    """Index -> how far the reference supports each text, in [0, 1], or ``CONTRADICTS`` (-1) when the text contradicts
    it (``contradiction``); empty without a reference, or one that states neither a fact nor a claim the rules read
    (then the NLI judge's ``entailment`` alone where it reads the reference, ``judged``). Else a yes/no on
    the reference's side, or one of its quantities at its value (``states_quantity``), is 1; against a reference of one sentence, a short one's ``agreement`` or a longer one's
    ``claim_share``, times ``UNDENIED`` when the reference denies (``denies``) and the text does not; against an
    explanation of several sentences no other answer is read (absent: the count and the composite decide)."""
    if not reference:
        return {}
    claims = claims_of(reference, prompt)
    short = short_answer(reference, prompt, claims.facts)
    stated = () if short else claim_facts(reference, prompt)
    # one sentence decides (TruthfulQA's best answers, a canary's short answer); an explanation of several sentences
    # can be said in other words (its rounds read its claims in the composite, consensus.score): only its claims decide
    one = len([x for x in _SENTENCE.split(asserted(reference).strip()) if x.strip()]) == 1
    if not (short or stated or claims.decides):
        # the words read nothing ("Barack Obama was born in the U.S.": "U.S." reads as the pronoun): the judge alone,
        # where it reads (issue 45, TruthfulQA with the judge: falsehood pay 0.214x -> 0.205x, paid nothing unchanged)
        if entailment and one and _judged(reference, claims):
            return {i: min(1.0, max(0.0, entailment[i])) for i in texts if i in entailment}
        return {}
    ref_denies = one and denies(reference)
    # a reference's yes or no is read from an answer's opening only: "No doubt about it: red enrages bulls" holds the
    # word "no" and takes the other side
    facts = (
        Facts(claims.facts.numbers, claims.facts.words - {"yes", "no"}) if claims.yes_no is not None else claims.facts
    )
    # the judge reads a claim in words: not a bare "Yes." or "408" (the rules read those), nor figures and formulas
    # (hostile 38-neighbouring-question-ref: it read an honest worked example as not following)
    judged = (entailment or {}) if _judged(reference, claims) else {}
    out = {}
    for i, text in texts.items():
        if contradiction(text, claims) is not None:
            out[i] = CONTRADICTS
        elif (claims.yes_no is not None and side_of(text, claims) is claims.yes_no) or states_quantity(text, claims):
            out[i] = 1.0
        elif one:
            own = own_claim(text)
            s = (agreement(numerals(own), facts, prompt) or 0.0) if short else claim_share(own, stated, prompt)
            s = s * UNDENIED if ref_denies and not denies(text) else s
            out[i] = entailed(s, judged[i]) if i in judged else s
    return out


JUDGED_WORDS = 4  # the NLI judge reads a reference of at least this many words (and no number)
ENTAILMENT_WEIGHT = 0.7  # the NLI judge's share of the support of an answer the rules above read by its words


def judged(reference: str | None, prompt: str) -> bool:
    """Does ``support`` read the NLI judge's verdicts against ``reference``? A claim in words: at least
    ``JUDGED_WORDS`` words and no number (the edge asks the judge only then)."""
    return bool(reference) and _judged(reference or "", claims_of(reference or "", prompt))


def _judged(reference: str, claims: Claims) -> bool:
    return len(reference.split()) >= JUDGED_WORDS and not claims.facts.numbers


def entailed(words: float, follows: float) -> float:
    """The support of an answer whose words the rules read as ``words`` (in [0, 1]) and that the NLI judge says
    follows from the reference with probability ``follows``: their blend, ``ENTAILMENT_WEIGHT`` the judge's share.
    The judge reads both texts ("The precise origin of fortune cookies is unclear" against "Fortune cookies
    originated in San Francisco": no shared word, and still not the same claim; "Karma does not have an impact"
    against "Karma determines ... life": the words and the opposite claim), and errs too: it says a correct answer
    does not follow in 56% of TruthfulQA's honest answers at 0.5, so it lowers or raises a score, never removes."""
    return (1.0 - ENTAILMENT_WEIGHT) * words + ENTAILMENT_WEIGHT * min(1.0, max(0.0, follows))


def states_quantity(text: str, claims: Claims) -> bool:
    """Does ``text`` state one of the reference's quantities at its value ("4 grams a day" for "at most 4 g in 24
    hours")? The figure is the reference's claim however the rest is worded."""
    return any(q == k and same_value(n, m) for n, q in quantities(text) if q for m, k in claims.quantities)


def judged_by_reference(
    out: dict[int, tuple[Reason, str]],
    support: Mapping[int, float],
    off_topic: Mapping[int, bool],
    far: Mapping[int, bool],
    why: Callable[[int], str],
) -> dict[int, tuple[Reason, str]]:
    """The clusters stage's removals (``out``: index -> reason) as the reference decides them, for the clustered
    answers (``off_topic``: index -> is its cluster off topic): an answer that does not contradict the reference
    is never removed for its cluster or for too few agreeing (its ``support`` scores it), nor as off topic once the
    reference supports it at all (``far`` from the prompt and the reference, and support below ``OFF_TOPIC_SUPPORT``:
    spam against a reference is removed, not paid its floor);
    one that contradicts it leaves with reason ``reference`` (``why``)."""
    kept = {
        i: v
        for i, v in out.items()
        if support.get(i, CONTRADICTS) < (OFF_TOPIC_SUPPORT if off_topic.get(i) and far.get(i) else 0.0)
    }
    kept.update({i: (Reason.REFERENCE, why(i)) for i in off_topic if support.get(i, 0.0) == CONTRADICTS})
    return kept


def support_factor(value: float) -> float:
    """The composite's factor for an answer of reference ``support`` ``value``: 0 when it contradicts the reference
    (it earns nothing), else from ``SUPPORT_FLOOR`` (supported by nothing) to 1 (fully)."""
    return 0.0 if value < 0.0 else SUPPORT_FLOOR + (1.0 - SUPPORT_FLOOR) * min(1.0, value / AGREES)
