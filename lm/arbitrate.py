"""Arbitration: when the members' short answers disagree, the LM answers the prompt itself.

The factual check (``lm.factual``) has the LM write each dominant-cluster
member's answer in a few words and a rule compares them; only a lone answer
leaves, so a wrong majority wins by size (five "Saturn" against three
"Jupiter"). With arbitration, when the members' short answers disagree, the LM
writes its own short answer to the prompt (one call; greedy; no miner text in
the prompt, so no answer can instruct it) and the same rule that compares the
members' short answers (``consensus.fact_match.agrees_with_reference``) says which
members state the LM's answer. The core (``consensus.factual_stage``,
``Signals.arbitration``) then removes the members that do not, however many they
are. A member the factual check did not reach (the round's budget ran out) is
read from its text: it agrees when its text states the LM's answer and no losing
short answer, and does not when it states a losing one and not the LM's.

Why the LM's own answer (docs/validity.md, "LM arbitration"): on short factual
pairs the embedded 1.5B LM's own answer sides with the right answer far more
often than its yes/no "is this answer correct?" (which rated a correct
"Canberra" like the wrong ones) or a pairwise "which is correct, A or B?" (a
strong bias to the first position), and it costs one call per round instead of
one or two per group.

Abstention (no signal, nothing changes):

- the LM is not confident: ``answer_confidence`` (the probability of the
  tokens that decide the answer: its first token and every token holding a
  digit; a unit written "°C" or "℃" is not a doubt about the answer) is below
  ``min_confidence``;
- its answer agrees with no member's short answer, or with every one (then
  nothing is disputed), or states nothing the rule can compare;
- the prompt is not one with a single short answer (``asks_for_one_answer``:
  "How do I reverse a list?" has several right answers, and the LM's favourite
  would remove the others), or the round has a reference answer (the reference
  decides).

A yes/no question has one short answer: when the members' short answers split
between yes and no, the LM's own answer says which side is right (its first
token's probability is the confidence, bar 0.95: ``MIN_CONFIDENCE_YES_NO``), and
the members on the other side do not agree. The core's polarity stage then takes the LM's side as the majority
(``consensus.stages.polarity``), however many members say the other; below the
confidence bar it abstains and the headcount rule stays.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from consensus.fact_match import agrees_with_reference, answer_groups, facts_of, same_answer, yes_no_labels
from lm.client import ChatClient, TokenLogprob
from lm.errors import LMError
from lm.factual import FactualCheck, clean_short_answer
from lm.gating import Budget, PromptKind, run_bounded

ANSWER_TOKENS = 24  # eight words and their punctuation, as for the members' short answers
TOP_LOGPROBS = 5  # the call asks for log-probabilities (it is then not streamed: 24 tokens at most)
MIN_CONFIDENCE = 0.8  # below it the LM abstains (docs/validity.md: no pair of 60 decided wrongly at or above it)
# a yes or no needs more: the embedded LM leans to "yes" (examples/arbitration/yesno.jsonl, 94 questions: 11 of 46
# decided wrongly at 0.8, 2 of 27 at 0.9 ("Is Toronto the capital of Canada?" yes at 0.91), none of 15 at 0.95)
MIN_CONFIDENCE_YES_NO = 0.95

NOT_ONE_ANSWER = "skipped: the prompt does not ask for one short answer (it may have several right ones)"
REFERENCE = "skipped: the round has a reference answer, which decides instead"
AGREED = "skipped: the members' short answers do not disagree"


def own_answer_prompt(prompt: str) -> str:
    """The LM's own short answer to the round's prompt: the prompt is the validator's, no miner text."""
    return (
        "Answer the question in at most eight words, as an expert would. Write numbers in digits. "
        "Reply with the short answer only.\n\n"
        f"Question: {prompt.strip()}\n\nShort answer:"
    )


def answer_confidence(tokens: Sequence[TokenLogprob]) -> float | None:
    """P of the tokens that decide the answer: the first visible one (the name, the first digit, yes/no) and every
    one holding a digit; None without log-probabilities. Units and punctuation ("°C" against "℃") are not counted."""
    visible = [t for t in tokens if t.token.strip()]
    if not visible:
        return None
    deciding = [visible[0]] + [t for t in visible[1:] if any(c.isdigit() for c in t.token)]
    return math.exp(sum(t.logprob for t in deciding))


@dataclass(frozen=True)
class OwnAnswer:
    text: str  # the LM's short answer (its own words: no miner text went into the prompt)
    confidence: float | None  # ``answer_confidence``; None: the server gave no log-probabilities


def own_answer(client: ChatClient, prompt: str) -> OwnAnswer | None:
    """The LM's short answer to ``prompt`` (greedy) and its confidence; None when the LM gives nothing usable."""
    try:
        out = client.complete(
            [{"role": "user", "content": own_answer_prompt(prompt)}],
            max_tokens=ANSWER_TOKENS,
            temperature=0.0,
            top_logprobs=TOP_LOGPROBS,
        )
    except LMError:
        return None
    text = clean_short_answer(out.text)
    if not text:
        return None
    return OwnAnswer(text, answer_confidence(out.logprobs) if out.logprobs else None)


@dataclass(frozen=True)
class ArbitrationCheck:
    """What the LM was asked and said, and what it decided (``agrees`` empty: it abstained, ``skipped`` says why)."""

    question: str  # what the LM was asked: the round's prompt (its own short answer to it)
    answer: str | None = None  # the LM's short answer (LM text; no miner text went into its prompt)
    confidence: float | None = None  # ``answer_confidence``
    groups: int = 0  # distinct short answers among the checked members (by ``consensus.fact_match.same_answer``)
    agrees: Mapping[int, bool] = field(default_factory=dict)  # member -> its short answer states the LM's answer
    skipped: str | None = None
    from_text: tuple[int, ...] = ()  # members in ``agrees`` read from their text (no short answer: budget, failure)

    def signal(self) -> dict[int, bool] | None:
        """``Signals.arbitration``: each member's agreement with the LM's answer; None when the LM abstained."""
        return dict(self.agrees) if self.agrees else None


def disputed(checks: Sequence[FactualCheck]) -> bool:
    """Do the members' short answers disagree (some checked member does not agree with all the others)?"""
    voted = [c for c in checks if c.agreement is not None]
    return len(voted) >= 2 and any(c.agreement < 1.0 for c in voted)


def wanted(prompt: str, kind: PromptKind | None = None) -> bool:
    """Can the arbitration ask the LM about this prompt (a yes/no question, or one short answer)? Known before any
    short answer is written, so the LM's own answer can be asked first (``Asked``). ``kind``: the prompt's kind
    when the caller has read it (``lm.gating.PromptKind``)."""
    kind = kind or PromptKind.of(prompt)
    return kind.yes_no or kind.one_answer


class Asked:
    """The LM's own answer, asked ahead of the members' short answers.

    The prompt is all it needs, so the call goes to the server first, before the factual check's calls: on a
    loaded machine a call made after them did not fit the round's budget (a real ``validator round`` on the
    boiling-point prompt, load 6 on 2 cores: 4 of 5 short answers in 30 s, the arbitration skipped and two wrong
    answers paid). The answer is unused when the short answers agree (one call of about 2-5 s).
    """

    def __init__(self, client: ChatClient, prompt: str) -> None:
        pool = ThreadPoolExecutor(max_workers=1)
        self.future: Future[OwnAnswer | None] = pool.submit(own_answer, client, prompt)
        pool.shutdown(wait=False)

    def result(self, budget: Budget) -> tuple[OwnAnswer | None, str | None]:
        """(the answer, None), or (None, why there is none) when the budget ends first or the LM gave nothing."""
        try:
            own = self.future.result(timeout=budget.remaining())
        except TimeoutError:
            self.future.cancel()
            return None, budget.reason
        except Exception as exc:  # noqa: BLE001 - own_answer returns None on LM errors; anything else is recorded
            return None, f"skipped: {type(exc).__name__}: {exc}"
        return own, None if own is not None else "skipped: the LM gave no answer of its own"

    def ready(self) -> OwnAnswer | None:
        """The answer if it is already there (no waiting)."""
        return (
            self.future.result()
            if self.future.done() and not self.future.cancelled() and self.future.exception() is None
            else None
        )


def arbitrate(
    client: ChatClient,
    prompt: str,
    checks: Sequence[FactualCheck],
    *,
    budget: Budget,
    min_confidence: float = MIN_CONFIDENCE,
    asked: Asked | None = None,
    texts: Mapping[int, str] | None = None,
    kind: PromptKind | None = None,
) -> ArbitrationCheck:
    """The LM's own answer against the members' short answers (the module docstring's rules); one call at most.

    ``checks``: the factual check of the round's members (``lm.factual.check_factual``); only members whose short
    answer voted there (stated in their own text, comparable) are arbitrated, and, by their ``texts``, those the
    check did not reach (``arbitration_verdict``). ``asked``: the LM's own answer, asked ahead (``Asked``); without it the call
    is made here, if needed. ``kind``: the prompt's kind when the caller has read it (``lm.gating.PromptKind``).
    """
    kind = kind or PromptKind.of(prompt)
    before = needed(prompt, checks, kind)
    if before.skipped is not None:
        own = asked.ready() if asked is not None else None  # asked ahead and already there: recorded anyway
        return before if own is None else dataclasses.replace(before, answer=own.text, confidence=own.confidence)
    if asked is not None:
        own, why = asked.result(budget)
    else:
        out = run_bounded(lambda _: own_answer(client, prompt), [0], workers=1, budget=budget)
        own, why = out.done.get(0), out.skipped.get(0) or "skipped: the LM gave no answer of its own"
    if own is None:
        return _abstain(before, why or "skipped: the LM gave no answer of its own")
    return arbitration_verdict(prompt, checks, own, min_confidence, texts, kind)


def needed(prompt: str, checks: Sequence[FactualCheck], kind: PromptKind | None = None) -> ArbitrationCheck:
    """Whether to ask the LM at all: ``skipped`` says why not (a yes/no prompt, several right answers possible, no
    disagreement); None: ask. Pure."""
    kind = kind or PromptKind.of(prompt)
    if kind.yes_no:
        sides = {v for v in yes_no_labels(_voting(checks)).values() if v is not None}
        return ArbitrationCheck(prompt, groups=len(sides), skipped=None if len(sides) == 2 else AGREED)
    if not kind.one_answer:
        return ArbitrationCheck(prompt, skipped=NOT_ONE_ANSWER)
    groups = len(answer_groups(_voting(checks), prompt))
    return ArbitrationCheck(prompt, groups=groups, skipped=None if disputed(checks) else AGREED)


def arbitration_verdict(
    prompt: str,
    checks: Sequence[FactualCheck],
    own: OwnAnswer,
    min_confidence: float = MIN_CONFIDENCE,
    texts: Mapping[int, str] | None = None,
    kind: PromptKind | None = None,
) -> ArbitrationCheck:
    """The verdict once the LM has answered (the module docstring's abstentions); pure, so a benchmark can replay
    saved answers.

    ``texts``: members' answers (as a reader sees them) for those the factual check gave no short answer (its
    budget ran out, the LM failed): once the LM has decided, such a member whose text states the LM's answer and
    no losing short answer agrees, one stating a losing short answer and not the LM's does not, and one stating
    both or neither gets no verdict (``_states``).
    """
    answers = _voting(checks)
    said = ArbitrationCheck(prompt, own.text, own.confidence, len(answer_groups(answers, prompt)))
    yes_no = (kind or PromptKind.of(prompt)).yes_no
    if yes_no:
        min_confidence = max(min_confidence, MIN_CONFIDENCE_YES_NO)
    if own.confidence is None or own.confidence < min_confidence:
        conf = "no log-probabilities" if own.confidence is None else f"confidence {own.confidence:.2f}"
        return _abstain(said, f"abstained: the LM is not confident ({conf} < {min_confidence:g})")
    if yes_no:
        return _decide_yes_no(said, answers, own)
    own_facts = facts_of(own.text, prompt)
    if not (own_facts.numbers or own_facts.words):
        return _abstain(said, "abstained: the LM's answer states nothing the rule can compare")
    agrees = agrees_with_reference(answers, own.text, prompt)
    if not any(agrees.values()):
        return _abstain(said, "abstained: the LM's answer agrees with no member's short answer")
    if all(agrees.values()):
        return _abstain(said, "abstained: the LM's answer agrees with every member's short answer")
    losing = sorted({answers[i] for i, ok in agrees.items() if not ok})
    unread = {c.index for c in checks if c.answer is None}
    read = {}
    for i, text in sorted((texts or {}).items()):
        if i in unread:
            says_own, says_losing = _states(own.text, text, prompt), any(_states(a, text, prompt) for a in losing)
            if says_own != says_losing:
                read[i] = says_own
    return dataclasses.replace(said, agrees={**agrees, **read}, from_text=tuple(sorted(read)))


def _decide_yes_no(said: ArbitrationCheck, answers: Mapping[int, str], own: OwnAnswer) -> ArbitrationCheck:
    """A yes/no prompt: the members whose short answer says yes or no agree when it is the LM's side. Members whose
    short answer says neither (or both) get no verdict; no text is read (the polarity labels cover them)."""
    side = yes_no_labels({-1: own.text})[-1]
    if side is None:
        return _abstain(said, "abstained: the LM's answer says neither yes nor no")
    sides = {i: v for i, v in yes_no_labels(answers).items() if v is not None}
    agrees = {i: v == side for i, v in sides.items()}
    if not any(agrees.values()) or all(agrees.values()):
        return _abstain(said, "abstained: the members' short answers do not split between yes and no")
    return dataclasses.replace(said, groups=2, agrees=agrees)


def _states(short: str, text: str, prompt: str) -> bool:
    """Does ``text`` state the short answer: all its numbers (at the coarser precision), or without numbers half of
    its content words (``consensus.fact_match.same_answer`` of the two)? Stricter than ``stated_in`` (any one number or
    word), which reads "degrees" in "-15.8 degrees Fahrenheit" as stated by "100 degrees Celsius"."""
    return same_answer(facts_of(short, prompt), facts_of(text, prompt))


def _voting(checks: Sequence[FactualCheck]) -> dict[int, str]:
    """The short answers that voted in the factual check (stated in their text, comparable)."""
    return {c.index: c.answer for c in checks if c.agreement is not None and c.answer}


def _abstain(check: ArbitrationCheck, why: str) -> ArbitrationCheck:
    return dataclasses.replace(check, agrees={}, skipped=why)
