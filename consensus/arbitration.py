"""The arbitration's verdict: which members' short answers state the LM's own answer to the prompt. Pure.

The edge asks (``lm.arbitrate``: the LM's own short answer to the round's
prompt, its confidence); this module decides, from what was asked and said,
whether to ask at all (``needed``) and, once the LM has answered, which members
agree (``arbitration_verdict``); ``consensus.factual_stage`` and
``Signals.arbitration`` then remove the members that do not. The rules, the
abstentions and their measurements are in ``lm.arbitrate``'s docstring.

What is read here: each member's short answer from the factual check (anything
with ``index``, ``answer`` and ``agreement``: ``lm.factual.FactualCheck``), the
prompt's kind as the rules read it once per round (anything with ``yes_no`` and
``one_answer``: ``lm.round_budget.PromptKind``), and the LM's ``OwnAnswer``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from consensus.fact_match import agrees_with_reference, answer_groups, facts_of, same_answer, yes_no_labels

MIN_CONFIDENCE = 0.8  # below it the LM abstains (docs/validity.md: no pair of 60 decided wrongly at or above it)
# a yes or no needs more: the embedded LM leans to "yes" (examples/arbitration/yesno.jsonl, 94 questions: 11 of 46
# decided wrongly at 0.8, 2 of 27 at 0.9 ("Is Toronto the capital of Canada?" yes at 0.91), none of 15 at 0.95)
MIN_CONFIDENCE_YES_NO = 0.95

NOT_ONE_ANSWER = "skipped: the prompt does not ask for one short answer (it may have several right ones)"
REFERENCE = "skipped: the round has a reference answer, which decides instead"
AGREED = "skipped: the members' short answers do not disagree"


class ShortAnswer(Protocol):
    """A member's short answer as the factual check left it (``lm.factual.FactualCheck``)."""

    @property
    def index(self) -> int: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def agreement(self) -> float | None: ...


class PromptReading(Protocol):
    """The prompt as the rules read it (``lm.round_budget.PromptKind``)."""

    @property
    def yes_no(self) -> bool: ...
    @property
    def one_answer(self) -> bool: ...


@dataclass(frozen=True)
class OwnAnswer:
    text: str  # the LM's short answer (its own words: no miner text went into the prompt)
    confidence: float | None  # ``lm.arbitrate.answer_confidence``; None: the server gave no log-probabilities


@dataclass(frozen=True)
class ArbitrationCheck:
    """What the LM was asked and said, and what it decided (``agrees`` empty: it abstained, ``skipped`` says why)."""

    question: str  # what the LM was asked: the round's prompt (its own short answer to it)
    answer: str | None = None  # the LM's short answer (LM text; no miner text went into its prompt)
    confidence: float | None = None  # ``lm.arbitrate.answer_confidence``
    groups: int = 0  # distinct short answers among the checked members (by ``consensus.fact_match.same_answer``)
    agrees: Mapping[int, bool] = field(default_factory=dict)  # member -> its short answer states the LM's answer
    skipped: str | None = None
    from_text: tuple[int, ...] = ()  # members in ``agrees`` read from their text (no short answer: budget, failure)

    def signal(self) -> dict[int, bool] | None:
        """``Signals.arbitration``: each member's agreement with the LM's answer; None when the LM abstained."""
        return dict(self.agrees) if self.agrees else None


def disputed(checks: Sequence[ShortAnswer]) -> bool:
    """Do the members' short answers disagree (some checked member does not agree with all the others)?"""
    voted = [c for c in checks if c.agreement is not None]
    return len(voted) >= 2 and any(c.agreement is not None and c.agreement < 1.0 for c in voted)


def needed(prompt: str, checks: Sequence[ShortAnswer], kind: PromptReading) -> ArbitrationCheck:
    """Whether to ask the LM at all: ``skipped`` says why not (a yes/no prompt whose short answers do not split,
    several right answers possible, no disagreement); None: ask."""
    if kind.yes_no:
        sides = {v for v in yes_no_labels(_voting(checks)).values() if v is not None}
        return ArbitrationCheck(prompt, groups=len(sides), skipped=None if len(sides) == 2 else AGREED)
    if not kind.one_answer:
        return ArbitrationCheck(prompt, skipped=NOT_ONE_ANSWER)
    groups = len(answer_groups(_voting(checks), prompt))
    return ArbitrationCheck(prompt, groups=groups, skipped=None if disputed(checks) else AGREED)


def with_unused_answer(before: ArbitrationCheck, own: OwnAnswer | None) -> ArbitrationCheck:
    """``needed`` said not to ask, and the LM's own answer (asked ahead) is there anyway: recorded, decides nothing."""
    return before if own is None else dataclasses.replace(before, answer=own.text, confidence=own.confidence)


def arbitration_verdict(
    prompt: str,
    checks: Sequence[ShortAnswer],
    own: OwnAnswer,
    kind: PromptReading,
    min_confidence: float = MIN_CONFIDENCE,
    texts: Mapping[int, str] | None = None,
) -> ArbitrationCheck:
    """The verdict once the LM has answered (``lm.arbitrate``'s abstentions), so a benchmark can replay saved
    answers.

    ``texts``: members' answers (as a reader sees them) for those the factual check gave no short answer (its
    budget ran out, the LM failed): once the LM has decided, such a member whose text states the LM's answer and
    no losing short answer agrees, one stating a losing short answer and not the LM's does not, and one stating
    both or neither gets no verdict (``_states``).
    """
    answers = _voting(checks)
    said = ArbitrationCheck(prompt, own.text, own.confidence, len(answer_groups(answers, prompt)))
    if kind.yes_no:
        min_confidence = max(min_confidence, MIN_CONFIDENCE_YES_NO)
    if own.confidence is None or own.confidence < min_confidence:
        conf = "no log-probabilities" if own.confidence is None else f"confidence {own.confidence:.2f}"
        return abstain(said, f"abstained: the LM is not confident ({conf} < {min_confidence:g})")
    if kind.yes_no:
        return _decide_yes_no(said, answers, own)
    own_facts = facts_of(own.text, prompt)
    if not (own_facts.numbers or own_facts.words):
        return abstain(said, "abstained: the LM's answer states nothing the rule can compare")
    agrees = agrees_with_reference(answers, own.text, prompt)
    if not any(agrees.values()):
        return abstain(said, "abstained: the LM's answer agrees with no member's short answer")
    if all(agrees.values()):
        return abstain(said, "abstained: the LM's answer agrees with every member's short answer")
    losing = sorted({answers[i] for i, ok in agrees.items() if not ok})
    unread = {c.index for c in checks if c.answer is None}
    read = {}
    for i, text in sorted((texts or {}).items()):
        if i in unread:
            says_own, says_losing = _states(own.text, text, prompt), any(_states(a, text, prompt) for a in losing)
            if says_own != says_losing:
                read[i] = says_own
    return dataclasses.replace(said, agrees={**agrees, **read}, from_text=tuple(sorted(read)))


def read_arbitration(
    prompt: str,
    checks: Sequence[ShortAnswer],
    own: OwnAnswer | None,
    kind: PromptReading,
    *,
    waited: bool,
    why: str | None = None,
    texts: Mapping[int, str] | None = None,
) -> ArbitrationCheck:
    """The arbitration as a round reads it once the LM was asked (``lm.evidence.ask_round``): no call wanted
    (``needed``: the LM's own answer, if it had already arrived, is recorded and decides nothing), no answer
    (``why``), or the verdict (``arbitration_verdict``, ``texts`` for members without a short answer).
    ``waited``: the pass waited for the LM's own answer (``needed`` said to ask)."""
    before = needed(prompt, checks, kind)
    if not waited:
        return with_unused_answer(before, own)
    if own is None:
        return abstain(before, why or "skipped: the LM gave no answer of its own")
    return arbitration_verdict(prompt, checks, own, kind, texts=texts)


def abstain(check: ArbitrationCheck, why: str) -> ArbitrationCheck:
    """No verdict: nothing changes, ``why`` is recorded."""
    return dataclasses.replace(check, agrees={}, skipped=why)


def _decide_yes_no(said: ArbitrationCheck, answers: Mapping[int, str], own: OwnAnswer) -> ArbitrationCheck:
    """A yes/no prompt: the members whose short answer says yes or no agree when it is the LM's side. Members whose
    short answer says neither (or both) get no verdict; no text is read (the polarity labels cover them)."""
    side = yes_no_labels({-1: own.text})[-1]
    if side is None:
        return abstain(said, "abstained: the LM's answer says neither yes nor no")
    sides = {i: v for i, v in yes_no_labels(answers).items() if v is not None}
    agrees = {i: v == side for i, v in sides.items()}
    if not any(agrees.values()) or all(agrees.values()):
        return abstain(said, "abstained: the members' short answers do not split between yes and no")
    return dataclasses.replace(said, groups=2, agrees=agrees)


def _states(short: str, text: str, prompt: str) -> bool:
    """Does ``text`` state the short answer: all its numbers (at the coarser precision), or without numbers half of
    its content words (``consensus.fact_match.same_answer`` of the two)? Stricter than ``stated_in`` (any one number or
    word), which reads "degrees" in "-15.8 degrees Fahrenheit" as stated by "100 degrees Celsius"."""
    return same_answer(facts_of(short, prompt), facts_of(text, prompt))


def _voting(checks: Sequence[ShortAnswer]) -> dict[int, str]:
    """The short answers that voted in the factual check (stated in their text, comparable)."""
    return {c.index: c.answer for c in checks if c.agreement is not None and c.answer}
