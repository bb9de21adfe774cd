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

Why the LM's own answer (benchmarks/journal/validity.md, "LM arbitration"): on short factual
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

import math
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from consensus.arbitration import (
    AGREED,
    MIN_CONFIDENCE,
    MIN_CONFIDENCE_YES_NO,
    NOT_ONE_ANSWER,
    REFERENCE,
    ArbitrationCheck,
    OwnAnswer,
    disputed,
    needed,
)
from lm.client import ChatClient, TokenLogprob
from lm.errors import LMError
from lm.factual import FactualCheck, clean_short_answer
from lm.round_budget import Budget, PromptKind, run_bounded

__all__ = [
    "AGREED",
    "ANSWER_TOKENS",
    "MIN_CONFIDENCE",
    "MIN_CONFIDENCE_YES_NO",
    "NOT_ONE_ANSWER",
    "REFERENCE",
    "TOP_LOGPROBS",
    "ArbitrationAsk",
    "ArbitrationCheck",
    "Asked",
    "OwnAnswer",
    "answer_confidence",
    "ask_arbitration",
    "ask_own_answer",
    "disputed",
    "own_answer",
    "own_answer_prompt",
    "wanted",
]

ANSWER_TOKENS = 24  # eight words and their punctuation, as for the members' short answers
TOP_LOGPROBS = 5  # the call asks for log-probabilities (it is then not streamed: 24 tokens at most)


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


def wanted(prompt: str, kind: PromptKind | None = None) -> bool:
    """Can the arbitration ask the LM about this prompt (a yes/no question, or one short answer)? Known before any
    short answer is written, so the LM's own answer can be asked first (``Asked``). ``kind``: the prompt's kind
    when the caller has read it (``lm.round_budget.PromptKind``)."""
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


def ask_own_answer(
    client: ChatClient, prompt: str, budget: Budget, asked: Asked | None = None
) -> tuple[OwnAnswer | None, str | None]:
    """The LM's own answer to ``prompt`` within ``budget``: the one asked ahead (``asked``), else one call now;
    (the answer, None) or (None, why there is none)."""
    if asked is not None:
        own, why = asked.result(budget)
    else:
        out = run_bounded(lambda _: own_answer(client, prompt), [0], workers=1, budget=budget)
        own, why = out.done.get(0), out.skipped.get(0)
    return own, why or (None if own is not None else "skipped: the LM gave no answer of its own")


@dataclass(frozen=True)
class ArbitrationAsk:
    """The LM's own answer to the prompt: ``own`` (None: ``why``), ``waited``: the short answers disagreed, so the
    pass waited for it; otherwise ``own`` is what had already arrived (recorded, decides nothing)."""

    own: OwnAnswer | None
    why: str | None
    waited: bool


def ask_arbitration(
    client: ChatClient,
    prompt: str,
    checks: Sequence[FactualCheck],
    kind: PromptKind,
    budget: Budget,
    asked: Asked | None = None,
) -> ArbitrationAsk:
    """The arbitration's part of the LM's pass (``lm.evidence.ask_round``): when the members' short answers
    disagree (``consensus.arbitration.needed``), the LM's own answer (``ask_own_answer``: the one ``asked`` ahead,
    else one call), waited for within ``budget``; otherwise what had already arrived, unwaited. The verdict is
    read afterwards by rule (``consensus.arbitration.read_arbitration``)."""
    if needed(prompt, checks, kind).skipped is not None:
        return ArbitrationAsk(asked.ready() if asked is not None else None, None, False)
    own, why = ask_own_answer(client, prompt, budget, asked)
    return ArbitrationAsk(own, why, True)
