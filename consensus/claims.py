"""What a reference answer forbids, and answers that offer it anyway (2026-11-26, issue 38).

A reference that says "Do not put ice, butter or creams on it." makes a negative claim, and the words of that claim
are the very words of an answer that recommends the forbidden things ("options: ... an ice pack, butter, honey
..."): read as a bag of words, the lister states the claim. ``prohibitions`` reads the claim as what it forbids, and
``offered`` finds an answer that names those things as something to do:

- a prohibition is a sentence of the reference that opens with "Do not", "Don't", "Never", "Avoid", "Should not" or
  "Must not" (worked examples left out, ``consensus.reference.asserted``; not "No": "No US state has higher taxes
  than California" states a fact, four of TruthfulQA's best answers open so); what it forbids are its content words, the prompt's and the
  verbs that carry a prohibition ("put", "use", "apply", ``_LIGHT_VERBS``) left out: {"ice", "butter", "cream"};
- an answer's clause (a sentence, or a part of one after a colon, semicolon, table cell or line break) warns when it
  negates or warns (``_WARNING``: "not", "don't", "no", "never", "avoid", "skip", "instead of", "rather than",
  "without", "harm", "damage", "myth", ...): "Skip ice and home remedies like butter." warns; "Nothing frozen, and no
  butter or lotions" warns;
- the answer offers the forbidden things when it names at least two of them (one, when the prohibition forbids
  one thing), prefix rule of ``consensus.fact_match``, in clauses that do not warn, and names none of them in a
  clause that warns. An answer that warns against one of them anywhere states the claim, however it words the
  rest; one that never names them neither states nor contradicts it.

An answer that offers what the reference forbids contradicts it (``consensus.reference.contradiction``): its
agreement is 0, as for a wrong yes/no or a wrong figure. What the rule cannot read: a prohibition worded without a
leading negation ("The fridge turns basil black."), and a warning in words outside ``_WARNING`` ("Ice and butter
are old wives' remedies" is read as offering them).

What an answer sets aside before its own claim is not stated (``own_claim``, issue 45): "Most people assume
Michelangelo, but it was Raphael" states Raphael; "not X but Y" states Y ("not only X but Y" states both). Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

from consensus.fact_match import _match, _words, facts_of
from consensus.quantity import number_words

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_PROHIBITION = re.compile(
    r"^\W*(?:do\s+not|don'?t|never|avoid|should\s+not|shouldn'?t|must\s+not|mustn'?t)\b", re.IGNORECASE
)
# verbs that carry a prohibition ("do not put/use/apply X"): the things forbidden are their objects
_LIGHT_VERBS = frozenset(
    _words("put use apply give take try rub add leave let make get place keep pour eat drink spread smear cover induce")
)
_CLAUSE = re.compile(r"[.!?;:|\n]+")
_CLAUSE_SPLIT = re.compile(r"([.!?;:|\n]+)")
# a clause that negates or warns: what it names is not recommended
_WARNING = frozenset(
    _words(
        "not no never nothing none nor neither without instead rather avoid avoiding skip skipping stop refrain "
        "dont doesnt isnt arent wont cant shouldnt mustnt didnt wasnt werent harm harmful damage damaging "
        "dangerous unsafe worse bad myth myths risk risky burn burns injury injure hurt frostbite"
    )
)


# a prohibition stated after its object (issue 45): "Hydrogen peroxide should be avoided on wounds.", "Butter is not
# recommended."
_AFTER = re.compile(
    r"^(.*?)\b(?:should\s+be\s+avoided|must\s+be\s+avoided|(?:is|are)\s+not\s+recommended|(?:is|are)\s+discouraged"
    r"|(?:is|are)\s+a\s+bad\s+idea|(?:should|must)\s+not\s+be\s+\w+|(?:shouldn'?t|mustn'?t)\s+be\s+\w+"
    r"|(?:is|are)\s+(?:not\s+advised|not\s+advisable|best\s+avoided|not\s+safe))\b",
    re.IGNORECASE,
)


# a prohibition of direct contact ("Do not apply ice directly to the skin") is kept by an answer that puts a barrier
# between ("always with a thin towel between the ice and your skin"; issue 45)
_DIRECT = frozenset({"directly", "direct", "straight", "bare"})
_BARRIER = frozenset(_words("towel towels cloth cloths wrap wrapped wrapping between barrier covered"))
# negations that recommend (issue 45: "There's no harm in a splash of peroxide" was read as a warning)
_HARMLESS = re.compile(
    r"\b(?:no\s+(?:harm|problem|issue|risk|reason\s+not)|nothing\s+wrong|not\s+(?:harmful|dangerous|a\s+problem))\b"
)


# an answer's opening that calls something harmless ("Nothing wrong with it", "A little honey does no harm", "There's
# no harm in ..."): a yes to "Can I ...?", a no to "Is it harmful?" (``harmless_side``)
_HARMLESS_OPENING = re.compile(
    r"\b(?:no\s+harm|nothing\s+wrong|no\s+problem|not\s+a\s+problem|no\s+issue|no\s+risk|no\s+danger|"
    r"(?:perfectly|totally|completely|quite)\s+(?:safe|fine)|(?:is|it'?s|its)\s+(?:safe|fine|ok|okay)\s+to|"
    r"not\s+(?:harmful|dangerous|unsafe|risky)|no\s+reason\s+(?:not|why\s+not)|nothing\s+to\s+worry|"
    r"not\s+a\s+bad\s+idea|nothing\s+harmful|no\s+worries|"
    r"no\s+need\s+to\s+(?:wait|worry|avoid|stop)|not\s+only\s+(?:can|may|is|are|do|does|should)|"
    r"no\s+evidence\s+(?:that\s+)?(?:it|this|that)?\s*(?:is|'s)?\s*(?:harmful|dangerous|unsafe|bad))\b",
    re.IGNORECASE,
)
_PERMISSION = re.compile(
    r"^\W*(?:can|may|could|should|shall)\s+(?:i|we|you|one|my|a|an|people)\b|^\W*is\s+it\s+(?:safe|ok|okay|fine|"
    r"alright|all\s+right|acceptable)\b|^\W*(?:is|are)\s+\w+(?:\s+\w+)?\s+safe\b",
    re.IGNORECASE,
)
_HARM_QUESTION = re.compile(
    r"^\W*(?:is|are|does|do|can)\b[^?]*\b(?:harmful|dangerous|bad\s+for|unsafe|toxic|poisonous|harm|hurt|damage)\w*",
    re.IGNORECASE,
)
_FIRST_CLAUSE = re.compile(r"^(.*?)(?:[.!?;:\n]|$)", re.DOTALL)


def harmless_side(text: str, prompt: str) -> bool | None:
    """The side an answer takes when its first clause calls the asked thing harmless: yes (True) to a question asking
    leave ("Can I give honey ...?", "Is it safe to ...?"), no (False) to one asking about harm ("Is X harmful?"); None
    when it does not, or the prompt is neither (issue 45: "A little honey does no harm" was read as a no)."""
    first = _FIRST_CLAUSE.match(unicodedata.normalize("NFKC", text).strip())
    if first is None or not _HARMLESS_OPENING.search(first.group(1)):
        return None
    if _HARM_QUESTION.search(prompt):
        return False
    return True if _PERMISSION.search(prompt) else None


def _forbidden(reference: str) -> Iterator[tuple[str, bool]]:
    """Each prohibition sentence of ``reference``: the words after its prohibiting lead ("Do not ...") or the thing a
    trailing prohibition names ("X should be avoided"), and whether a lead introduced it."""
    for sentence in _SENTENCE.split(unicodedata.normalize("NFKC", reference)):
        lead = _PROHIBITION.match(sentence)
        if lead is not None:
            yield sentence[lead.end() :], True
        elif (after := _AFTER.match(sentence)) is not None:
            yield after.group(1), False


def forbids_asked(reference: str, prompt: str) -> bool:
    """Does the reference forbid the very thing a question asking leave asks about ("Can I mix bleach and ammonia?"
    -> "Mixing bleach and ammonia should be avoided")? Then it answers no."""
    if not _PERMISSION.search(prompt) or _HARM_QUESTION.search(prompt):
        return False
    asked = _words(unicodedata.normalize("NFKC", prompt).lower())
    for forbidden, _ in _forbidden(reference):
        things = {w for w in _words(_RECIPIENT.split(forbidden.lower(), maxsplit=1)[0]) if w not in _LIGHT_VERBS}
        if things and all(any(_match(w, g) for g in asked) for w in things):
            return True
    return False


def prohibitions(reference: str, prompt: str = "") -> tuple[frozenset[str], ...]:
    """What each prohibition of ``reference`` forbids (the module docstring's rule), as content-word stems; the
    reference's worked examples should be taken out first (``consensus.reference.asserted``)."""
    out = []
    asked = _words(unicodedata.normalize("NFKC", prompt).lower())
    for forbidden, led in _forbidden(reference):
        forbidden = _RECIPIENT.split(forbidden, maxsplit=1)[0]  # "give aspirin to children": aspirin is forbidden
        things = frozenset(w for w in facts_of(forbidden, prompt).words if w not in _LIGHT_VERBS)
        things = things - _WARNING - _PARTICLES - (_patient(forbidden) if led else frozenset())
        things = frozenset(w for w in things if not any(_match(w, g) for g in asked))  # "leaving" asked as "leave"
        if things:
            out.append(things)
    return tuple(out)


# who or what a forbidden thing is given to or for, where it is put ("Never give aspirin to children under 16", "a
# cotton swab inside the ear canal"): every honest answer names them (issue 45)
_RECIPIENT = re.compile(
    r"\s(?:to|for|inside|in|into|on|onto|near|around|under|at)\s(?=(?:the\s+|a\s+|an\s+|your\s+|any\s+)?[a-z])",
    re.IGNORECASE,
)
# adverb particles of a phrasal verb ("pull it out", "scrape it off"): no thing
_PARTICLES = frozenset(_words("out off away up down in into onto back over"))
# "Do not pull the stinger out with tweezers": a content verb, then its object after a determiner (issue 45)
_OBJECT = re.compile(
    r"^\s*([a-z]+)\s+(?:the|a|an|your|its|their|his|her|any|that|this)\s+((?:[a-z]+\s+){0,1}[a-z]+?)"
    r"(?=\s+(?:out|off|away|up|down|in|into|with|by|from|on|onto|to|or|and|unless|until|if|because)\b|[.,;!?]|\s*$)",
    re.IGNORECASE,
)


def _patient(forbidden: str) -> frozenset[str]:
    """The thing a prohibition's act is done to ("the stinger" of "pull the stinger out with tweezers"): the noun
    after a determiner that follows a content verb (not a light verb: "Do not put the ice on it" forbids the ice).
    Every correct answer about a bee sting names the stinger; only the act (pulling, with tweezers) is forbidden."""
    m = _OBJECT.match(unicodedata.normalize("NFKC", forbidden))
    if m is None or _words(m.group(1).lower()) & _LIGHT_VERBS:
        return frozenset()
    return frozenset(facts_of(m.group(2)).words)


# what offers a thing in a clause that names it: a verb applying it, words of its benefit, "no harm in" (issue 45: the
# one thing a prohibition forbids is named by honest answers too, "butter traps the heat, so leave it in the fridge")
_OFFERING = frozenset(
    _words(
        "put apply rub spread smear dab use try give take add pour eat drink pull squeeze help helps soothe soothes "
        "relieve relieves work works fine safe okay ok best good great effective quickly brings recommend option "
        "options method methods remedy remedies make induce"
    )
)


def offered(text: str, forbidden: frozenset[str], given: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The ``forbidden`` things ``text`` offers (named in clauses that do not warn, when it warns against none of
    them and names at least two, or the one thing forbidden; and a clause that names them has an offering word,
    ``_OFFERING``, or opens after a list's introduction that has one, unless it names ``OFFERED_UNSAID`` of them);
    empty when it does not. ``given``: the prompt's
    word stems, no warning ("burn" in an answer about burns)."""
    plain = unicodedata.normalize("NFKC", text).lower().replace("`", " ").replace("*", " ")
    named: set[str] = set()
    offering = False
    warning = _WARNING - given
    parts = _CLAUSE_SPLIT.split(plain)  # clause, its delimiter, clause, ...
    intro: set[str] = set()  # the words of a clause that opens a list ("many options for a burn: ...")
    for clause, end in zip(parts[0::2], [*parts[1::2], ""]):
        words, before = _words(clause), intro
        intro = words if ":" in end else set()
        here = {f for f in forbidden if any(_match(f, w) for w in words)}
        if words & _DIRECT:  # "straight on the skin", "bare ice" say "directly"
            here |= forbidden & _DIRECT
        if not here:
            continue
        if words & warning and not _HARMLESS.search(clause):
            return ()  # it warns against one of them: the claim, in its own words
        if forbidden & _DIRECT and words & _BARRIER:
            return ()  # "not directly on the skin": an answer that puts something between states the claim
        named |= here
        offering = offering or bool((words | before) & _OFFERING or _HARMLESS.search(clause))
    if len(named) < min(2, len(forbidden)):
        return ()
    return tuple(sorted(named)) if len(named) >= OFFERED_UNSAID or offering else ()


OFFERED_UNSAID = 3  # a list of this many forbidden things offers them without an offering word


def offers_forbidden(
    text: str, prohibited: Sequence[frozenset[str]], given: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """The things of the first prohibition in ``prohibited`` that ``text`` offers (``offered``); empty if none."""
    for forbidden in prohibited:
        named = offered(text, forbidden, given)
        if named:
            return named
    return ()


def numerals(text: str) -> str:
    """``text`` with its numbers in words as digits ("twenty minutes" -> "20 minutes", "twenty-five" -> "25", "three
    hundred eighty-four thousand" -> "384000": ``consensus.quantity.number_words``), so a claim's "20 minutes" is
    stated by an answer that spells it; "one" stays a word (it is also a pronoun)."""
    return number_words(text)


# what an answer attributes to others or sets aside before its own claim (issue 45: "Most people assume Michelangelo,
# but ... Raphael" stated the reference's word "Michelangelo"): "<people> assume/think/believe X, but Y", "not X but
# Y", "contrary to popular belief X, Y" ... the part before the contrast is not stated
_SET_ASIDE = re.compile(
    r"(?:\b(?:most|many|some|lots of)?\s*(?:people|folks|everyone|everybody|some|many|they)\s+(?:often\s+|usually\s+|"
    r"commonly\s+|wrongly\s+|mistakenly\s+|tend\s+to\s+|like\s+to\s+|will\s+|would\s+)?(?:assume|think|believe|say|claim|guess|suppose|credit|attribute|insist)s?\b"
    r"|\bit\s+is\s+(?:often|commonly|widely|popularly|usually|generally|traditionally)\s+"
    r"(?:assumed|thought|believed|said|claimed|attributed|credited|considered)\b"
    r"|\b(?:not|isn'?t|wasn'?t|aren'?t|weren'?t)\b(?!\s+(?:only|just|merely|simply|solely)\b))"
    r"[^.;!?]*?,?\s+\b(?:but|however|yet)\b",
    re.IGNORECASE,
)
_CONTRARY = re.compile(r"\bcontrary\s+to\s+(?:popular|common)\s+(?:belief|opinion)\b[^,.;!?]*", re.IGNORECASE)


# a concession that opens a sentence ("Although Canberra hosts parliament, the capital is Sydney"): granted, not claimed
_CONCESSION = re.compile(
    r"(?:^|(?<=[.!?;]))\s*(?:although|though|even\s+though|while|whereas)\b[^,.;!?]*,", re.IGNORECASE
)


def own_claim(text: str) -> str:
    """``text`` without what it attributes to others or sets aside before its own claim (``_SET_ASIDE``): "Most
    people assume Michelangelo, but it was Raphael" states Raphael, not Michelangelo; a sentence's opening concession
    ("Although X, Y") is not its claim."""
    return _CONCESSION.sub(" ", _CONTRARY.sub(" ", _SET_ASIDE.sub(" ", text)))
