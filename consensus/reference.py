"""A reference answer decides: which answers state its facts, which contradict them.

MiniLM puts "Lyon is the capital of France" beside "Paris is the capital of France" and "212
bones" beside "206 bones": the embedding cannot tell a right answer from a wrong one on the same
topic. A round that carries a reference answer (a canary, or a task with a known answer) is judged
on the reference's facts, read by the rules of ``consensus.facts`` (no LM):

- the reference's facts are its numbers and its content words that the prompt does not give
  (``facts.facts_of``: "Paris is the capital of France." asked "What is the capital of France?"
  -> {"paris"}; "An adult has 206 bones." -> 206);
- an answer's ``agreement`` is the share of those facts it states: a reference number counts when
  the answer states it at the coarser precision of the two (100 = 100.0; 206 != 212), a word by the
  prefix rule ("tilt" ~ "tilted"). When the reference has numbers and the answer states numbers,
  the numbers decide: stating only other numbers contradicts the reference (agreement 0).

``clusters`` ranks the clusters by their members' mean agreement before counting voices, and a
member of the dominant cluster that states none of the facts while other answers state them leaves
with reason ``reference``. The composite's reference part reads the same agreement. Only a reference
that states a short answer decides (``decisive``: a number, or at most three content words of its own,
as "Paris is the capital of France." or "An adult has 206 bones."): an explanation can be said in other
words, and its rounds keep the embedding similarity to the reference (``Signals.reference_similarity``). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from consensus.facts import Facts, _equal_at_precision, _match, facts_of


def reference_facts(reference: str, prompt: str) -> Facts:
    """The facts of a reference answer: its numbers and content words the prompt does not give."""
    return facts_of(reference, prompt)


def agreement(text: str, facts: Facts, prompt: str) -> float | None:
    """Share of the reference's ``facts`` that ``text`` states, in [0, 1]; None when the reference states none."""
    if not (facts.numbers or facts.words):
        return None
    said = facts_of(text, prompt)
    if facts.numbers and said.numbers:
        return sum(any(_equal_at_precision(x, y) for y in said.numbers) for x in facts.numbers) / len(facts.numbers)
    if not facts.words:
        return 0.0  # numbers asked, none stated
    return sum(any(_match(w, v) for v in said.words) for w in facts.words) / len(facts.words)


DECISIVE_WORDS = 3  # a reference states a short answer when it has a number or at most this many content words


def decisive(facts: Facts) -> bool:
    """Does the reference state a short answer (a number, a name: "Paris", "206") that an answer either states or
    not? An explanation ("a function mapping data to a fixed-size value") can be said in other words ("it turns
    input into a short digest"): its words are no test of an answer."""
    return bool(facts.numbers) or 0 < len(facts.words) <= DECISIVE_WORDS


def agreements(texts: Mapping[int, str], reference: str | None, prompt: str) -> dict[int, float]:
    """Index -> ``agreement`` for every text; empty without a reference, or when it states no short answer
    (``decisive``)."""
    if not reference:
        return {}
    facts = reference_facts(reference, prompt)
    if not decisive(facts):
        return {}
    out = {}
    for i, text in texts.items():
        a = agreement(text, facts, prompt)
        if a is None:
            return {}
        out[i] = a
    return out


def contradicting(members: Sequence[int], scores: Mapping[int, float], floor: float = 0.5) -> tuple[int, ...]:
    """Members stating none of the reference's facts, when some answer states at least ``floor`` of them."""
    if not scores or max(scores.values()) < floor:
        return ()
    return tuple(i for i in members if scores.get(i, 1.0) <= 0.0)
