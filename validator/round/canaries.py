"""Canary prompts: known-answer prompts mixed into the daemon's rounds, judged against their reference.

Consensus rewards agreement, and agreement can be farmed (five identities
rewording one wrong answer win the dominant cluster). A canary round is a
prompt whose answer is known: the miners see an ordinary request (same shape,
no marker; only the validator's stored input says ``canary``), and afterwards
every answer is judged against the reference. The ledger keeps an EMA of each
miner's canary accuracy, which scales its weight (``emissions.ledger``).

Which rounds are canaries: round ``sequence`` is one when
``u(seed, sequence) < rate``, ``u`` a sha256 of the seed and the sequence
mapped to [0, 1); the canary item is chosen by a second hash. Both depend only
on (seed, sequence), so a replay, a restart or a recovered round picks the
same prompt. A private ``canary_seed`` keeps the schedule unpredictable.

Accuracy of one answer (``judge_canary``), in [0, 1]:

    x = 0                                    when the answer's yes/no contradicts the reference's, or it
                                             states a quantity of the reference at another value only
                                             (``consensus.reference.contradiction``: "8 g a day" against
                                             "at most 4 g"; a wrong year), or offers what it forbids
                                             ("Do not put ice, butter ...": ``consensus.claims``)
    x = mean(available of: stance, embedding, judge)   otherwise

- ``stance``: 1 when the reference and the answer both open with yes or no and
  agree (embeddings cannot tell "Yes, X" from "No, X"; the opening word can);
  not available when either has no opening yes/no;
- ``embedding``: the cosine of the answer to the embedded reference, clipped
  to [0, 1] (the same reference signal the pure core reads);
- ``judge``: the LM judge's (quality - 1) / 4 against the reference, with the LM on.

Failed, empty and copied answers get 0 (no answer of their own). An answer is
right at ``x >= RIGHT_AT``; the dominant cluster is right when the mean
accuracy of its members is at least ``RIGHT_AT``.

Limits: a canary file built from a public dataset can be recognised by a miner
that indexes the dataset; operators who expect that should write private
canaries in the same format (docs/daemon.md).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from consensus.reference import claims_of, contradiction
from validator.round.prompt_source import PromptItem, PromptSourceError, load_prompts, prompt_for

RIGHT_AT = 0.5
_LEAD = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def load_canaries(path: str | Path) -> tuple[PromptItem, ...]:
    """The canary prompts of a prompt file (JSONL, CSV, qna.yaml); every item needs a reference answer."""
    items = load_prompts(path)
    for number, item in enumerate(items, 1):
        if not item.reference:
            raise PromptSourceError(f"{path}: canary {number} ({item.prompt[:60]!r}) has no reference answer")
    return items


def _unit(*parts: object) -> float:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def is_canary(sequence: int, rate: float, seed: int) -> bool:
    """Whether round ``sequence`` asks a canary (about ``rate`` of the rounds, fixed by ``seed``)."""
    return rate > 0 and _unit("canary", seed, sequence) < rate


def pick_prompt(
    prompts: Sequence[PromptItem], canaries: Sequence[PromptItem], sequence: int, rate: float, seed: int
) -> tuple[PromptItem, bool]:
    """The prompt of round ``sequence`` and whether it is a canary; regular prompts cycle by sequence."""
    if canaries and is_canary(sequence, rate, seed):
        index = int(_unit("canary-item", seed, sequence) * len(canaries))
        return canaries[min(index, len(canaries) - 1)], True
    return prompt_for(prompts, sequence), False


def stance(text: str) -> bool | None:
    """True / False when ``text`` opens with yes / no (after punctuation, markdown), else None."""
    m = _LEAD.match(text.strip())
    return None if m is None else m.group(1).lower() == "yes"


@dataclass(frozen=True)
class CanaryAnswer:
    index: int
    miner: str
    accuracy: float  # 0..1
    embedding: float | None  # agreement with the reference from the embeddings (0..1)
    judge: float | None  # LM judge (quality - 1) / 4
    stance: bool | None  # agrees with the reference's yes/no; None when either has none
    note: str = ""

    @property
    def right(self) -> bool:
        return self.accuracy >= RIGHT_AT


@dataclass(frozen=True)
class CanaryResult:
    answers: tuple[CanaryAnswer, ...]
    consensus_accuracy: float | None  # mean accuracy of the dominant cluster's members; None without members
    consensus_right: bool | None


@dataclass(frozen=True)
class CanaryInput:
    """One response as the canary judge needs it."""

    index: int
    miner: str
    text: str
    usable: bool  # False for failed, empty and copied answers
    embedding: float | None  # reference signal of the core, or the clipped cosine to the reference
    judge: float | None = None


def answer_accuracy(reference: str, item: CanaryInput, prompt: str = "") -> CanaryAnswer:
    """One answer's accuracy (the formula in the module docstring); ``prompt``: the canary's question, whose own
    numbers and words the reference's claims leave out (as in the round's consensus)."""
    if not item.usable:
        return CanaryAnswer(item.index, item.miner, 0.0, None, None, None, "no answer of its own")
    ref_stance, own = stance(reference), stance(item.text)
    agrees = None if ref_stance is None or own is None else ref_stance == own
    if agrees is not False and (claim := contradiction(item.text, claims_of(reference, prompt))) is not None:
        return CanaryAnswer(
            item.index, item.miner, 0.0, item.embedding, item.judge, agrees, f"contradicts the reference: {claim}"
        )
    parts = [min(1.0, max(0.0, v)) for v in (item.embedding, item.judge) if v is not None and not math.isnan(v)]
    if agrees:
        parts.append(1.0)
    accuracy = 0.0 if agrees is False or not parts else sum(parts) / len(parts)
    note = "yes/no contradicts the reference" if agrees is False else ("" if parts else "no signal")
    return CanaryAnswer(item.index, item.miner, accuracy, item.embedding, item.judge, agrees, note)


def judge_canary(
    reference: str, items: Sequence[CanaryInput], members: Sequence[int], prompt: str = ""
) -> CanaryResult:
    """Every answer's accuracy and whether the dominant cluster (``members``, by index) was right."""
    answers = tuple(answer_accuracy(reference, item, prompt) for item in items)
    by_index = {a.index: a.accuracy for a in answers}
    if not members:
        return CanaryResult(answers, None, None)
    mean = sum(by_index.get(i, 0.0) for i in members) / len(members)
    return CanaryResult(answers, mean, mean >= RIGHT_AT)
