"""One judgement: a judge scores an answer 1..5 against a reference answer.

``judge_answer`` is checked generation (``lm.checked_generation.generate_checked``) with the verdict parser of
``judge.verdict``: the reply must hold one JSON object with ``reasoning`` and ``answer_quality``
1..5, else it is retried (telling the judge what was wrong) up to ``retries`` times; a judge that
never answers validly gives a ``JudgeResult`` with an error and no quality. ``judge_against_reference``
is the same judgement for a round's miner answer against the round's reference: the hardened prompt
fences the answer as untrusted data, and an answer that addresses the judge is capped or flagged.
``judge.llmaaj`` runs these over whole question sets.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict

from judge.templates import CAPPED_SIGNALS, ROUND_JUDGE_TEMPLATE, injection_signals, quote_untrusted, render, to_turns
from judge.verdict import verdict_transform
from lm.checked_generation import generate_checked
from lm.client import ChatClient, Usage

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from 3.11; requires-python is 3.10

log = logging.getLogger("judge.llmaaj")  # the judge's logger: its warnings keep the name they had


@dataclass(frozen=True)
class JudgeResult:
    quality: int | None  # 1..5; None when the judge gave no valid verdict
    reasoning: str
    raw: tuple[str | None, ...]  # every attempt's raw output (None: the call failed)
    error: str | None = None  # why there is no quality
    usage: Usage = field(default_factory=Usage)
    flags: tuple[str, ...] = ()  # injection signals found in the answer (judge.templates.injection_signals)
    capped: bool = False  # quality set to 1 without asking the judge: the answer addresses the judge

    @property
    def ok(self) -> bool:
        return self.quality is not None

    @property
    def normalised(self) -> float | None:
        """quality mapped to [0, 1]: (quality - 1) / 4."""
        return None if self.quality is None else (self.quality - 1) / 4


InjectionPolicy = Literal["cap", "flag"]


class JudgeOptions(TypedDict, total=False):
    """``judge_answer``'s keywords, for the functions that pass them on (``judge_against_reference``,
    ``judge.llmaaj.judge_responses``)."""

    retries: int
    max_tokens: int
    seed: int
    answer_limit: int
    injection_policy: InjectionPolicy | None


# the round's judgement: the hardened template, fewer retries (the round's LM budget), the cap on injections
ROUND_JUDGE: JudgeOptions = {"retries": 3, "injection_policy": "cap"}


def judge_answer(
    client: ChatClient,
    template: str,
    question: str,
    reference: str,
    answer: str,
    *,
    retries: int = 5,
    max_tokens: int = 512,
    seed: int = 0,
    answer_limit: int = 6000,
    injection_policy: InjectionPolicy | None = None,
) -> JudgeResult:
    """One judgement of ``answer`` against ``reference`` with ``template``; never raises for the LM's sake.

    With an ``injection_policy`` the answer is untrusted (``judge_against_reference``): one that
    addresses the judge (``judge.templates.injection_signals``) is, with ``"cap"``, given quality 1
    without a call; ``"flag"`` asks the judge anyway and only reports the signals in ``flags``.
    """
    if injection_policy not in (None, "cap", "flag"):
        raise ValueError("injection_policy must be 'cap' or 'flag'")
    flags = injection_signals(answer) if injection_policy is not None else ()
    capped = [f for f in flags if f in CAPPED_SIGNALS]
    if capped and injection_policy == "cap":
        return JudgeResult(
            1, f"capped: the answer addresses the judge ({', '.join(capped)})", (), None, Usage(), flags, True
        )
    quoted = quote_untrusted(answer, answer_limit)
    turns = to_turns(render(template, {"question": question, "answer": quoted, "reference_answer": reference}))
    checked = generate_checked(
        client,
        verdict_transform(echo_of=quoted),
        turns.system,
        turns.user,
        retries,
        feedback=True,
        max_tokens=max_tokens,
        temperature=0.0,
        seed=seed,
        prefill=turns.prefill,
    )
    if checked.ok:
        assert checked.value is not None
        return JudgeResult(
            checked.value.quality, checked.value.reasoning, checked.raw_outputs, None, checked.usage, flags
        )
    last = checked.attempts[-1].error if checked.attempts else "no attempt"
    log.warning("%s gave no valid verdict after %d attempt(s); last: %s", client.name, len(checked.attempts), last)
    return JudgeResult(
        None,
        "",
        checked.raw_outputs,
        f"no valid verdict after {len(checked.attempts)} attempt(s); last: {last}",
        checked.usage,
        flags,
    )


def judge_against_reference(
    client: ChatClient, question: str, reference: str, answer: str, **options: Unpack[JudgeOptions]
) -> JudgeResult:
    """Judge a miner's ``answer`` to a round's ``question`` against its ``reference`` answer (1..5 or None).

    ``judge_answer`` with the round's hardened template and ``ROUND_JUDGE`` (3 retries, the ``"cap"``
    policy) under ``options``. The answer is untrusted: it is fenced between markers (look-alikes broken,
    at most 6,000 characters), the prompt declares it data, and JSON objects
    the judge merely copies from it are ignored by the parser, so the verdict
    is always the judge's own object. Small judges still follow injected
    verdicts (measured, docs/judging.md), so an answer that addresses the judge
    (names ``answer_quality``, forges the markers or says "ignore previous
    instructions") is, with ``injection_policy="cap"``, given quality 1 without
    a call; ``"flag"`` asks the judge anyway and only reports the signals in
    ``flags``.
    """
    return judge_answer(client, ROUND_JUDGE_TEMPLATE, question, reference, answer, **(ROUND_JUDGE | options))
