"""The LM's questions about one round, asked in one pass: what it said, in one object (``RoundAnswers``).

``ask_round`` is the only place a round's evidence reaches the LM. It asks, within one per-round time budget
(``lm.round_budget.Budget``), in this order: the polarity of each member's answer (``lm.polarity``), the judge against the
reference (a callable the caller hands in: ``judge.llmaaj`` imports ``lm``), the LM's own answer to the prompt asked
ahead (``lm.arbitrate.Asked``), each member's short answer (``lm.factual``), the arbitration's wait for that own
answer (only when the short answers disagree: ``consensus.arbitration.needed``), the reference put in a few words
(a reference longer than a short answer, ``lm.factual.short_answer``), and each suspect figure
(``lm.figures``). Nothing here decides a verdict: the pure rules read the answers, one value, once they are all in
(``consensus.evidence.read_answers``: the arbitration's verdict in ``consensus.arbitration``, the short answers
against the reference in ``consensus.factual_stage``).

Every answer reaches the LM as a reader sees it (``Questions.seen``: ``consensus.text.visible``, read once by the
caller, who also names the figure suspects), with the prompt's kind (``lm.round_budget.PromptKind``) read once;
both are kept in ``RoundAnswers.kind`` and ``RoundAnswers.seen``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from consensus.figures import Suspect
from consensus.types import Polarity, Round
from lm.arbitrate import ArbitrationAsk, Asked, ask_arbitration, wanted
from lm.client import ChatClient, labelled
from lm.config import LMConfig
from lm.factual import MAX_WORDS, FactualCheck, check_factual, short_answer
from lm.figures import ask_figures
from lm.lm_score import ScoreResult
from lm.polarity import classify
from lm.round_budget import Bounded, Budget, PromptKind, run_bounded


@dataclass(frozen=True)
class Questions:
    """What to ask about a round (the caller's settings and plan decide)."""

    seen: tuple[str, ...]  # each answer as a reader sees it (``consensus.text.visible``): what the LM is shown
    members: tuple[int, ...]  # the dominant cluster's members (``consensus.pipeline.CheckPlan.members``)
    answered: tuple[int, ...]  # every member that answered (the judge reads them all)
    workers: int
    polarity: bool  # ask each member's polarity (a yes/no prompt; else recorded as skipped)
    derived: bool  # the polarity is read from the factual check's short answers instead (no polarity call)
    judge: Callable[[int], Any] | None  # one member against the reference (``judge.llmaaj``), None: not asked
    factual: bool  # ask each member's short answer
    arbitrating: bool  # the arbitration may ask the LM's own answer
    reference_short: bool  # each short answer against the reference's (``lm.reference_mode`` "short")
    # the members whose figure on an agreed quantity is another value (``consensus.figures.suspects``): one call
    # each (with the factual check, more than three members)
    figures: tuple[Suspect, ...] = ()


@dataclass(frozen=True)
class RoundAnswers:
    """Everything the LM said about one round (``ask_round``), with what it was asked: the one value the pure
    rules read (``consensus.evidence.read_answers``). What was not asked is None or empty."""

    questions: Questions
    kind: PromptKind
    seen: tuple[str, ...]  # each answer as a reader sees it (``consensus.text.visible``)
    explained: bool  # the prompt asks for an explanation and the round has no reference: no short answers
    budget_reason: str  # what a check the round's budget did not reach records (``Budget.reason``)
    polarity: Bounded[int, tuple[Polarity, ScoreResult]] | None = None
    judged: Bounded[int, Any] | None = None
    factual: tuple[FactualCheck, ...] | None = None  # None: not asked (off, fewer than two members, an explanation)
    arbitration: ArbitrationAsk | None = None
    reference_short: Bounded[int, str | None] | None = None  # the reference in a few words (key 0), when long
    figures: Bounded[int, str | None] | None = None  # per suspect of ``questions.figures``, the value the LM read
    timings: dict[str, float] = field(default_factory=dict)


def ask_round(
    client: ChatClient,
    config: LMConfig,
    round_: Round,
    sim: np.ndarray,
    questions: Questions,
    budget: Budget,
    *,
    kind: PromptKind | None = None,
    clock: Callable[[], float] | None = None,
) -> RoundAnswers:
    """Ask the LM every question of ``questions`` about ``round_`` in one pass, within ``budget`` (the module
    docstring's order). ``kind``: the prompt's kind when the caller has read it."""
    tick = clock or time.perf_counter
    kind = kind or PromptKind.of(round_.prompt)  # read once
    q = questions
    seen = q.seen
    timings: dict[str, float] = {}
    t = tick()
    polarity = None
    if q.polarity and not q.derived and kind.yes_no:
        polarity = run_bounded(
            lambda i: classify(labelled(client, "polarity", round_.responses[i].miner), round_.prompt, seen[i], config),
            list(q.members),
            workers=q.workers,
            budget=budget,
        )
    timings["polarity"] = tick() - t
    t = tick()
    judged = None
    if q.judge is not None:
        judged = run_bounded(q.judge, list(q.answered), workers=q.workers, budget=budget)
        timings["reference"] = tick() - t
        t = tick()
    # an explanation has no short answer to compare: the check would spend the budget and change nothing
    # (a reference answer still needs the short answers, and a yes/no prompt is never an explanation)
    explained = not round_.reference and kind.explanation
    members = list(q.members)
    asked = None
    if q.arbitrating and q.factual and len(members) >= 2 and not explained and not round_.reference:
        if wanted(round_.prompt, kind):  # the LM's own answer needs only the prompt: its call goes to the server first
            asked = Asked(labelled(client, "arbitration"), round_.prompt)
    factual = None
    if q.factual and members and not explained and len(members) >= 2:
        factual = check_factual(
            client, round_.prompt, list(seen), members, sim, config, workers=q.workers, budget=budget, kind=kind
        )
    timings["factual"] = tick() - t
    t = tick()
    arbitration = None
    checks = factual or ()
    if q.arbitrating and len(checks) >= 2 and not (round_.reference and round_.reference.strip()):
        arbitration = ask_arbitration(labelled(client, "arbitration"), round_.prompt, checks, kind, budget, asked)
    if q.arbitrating and len(checks) >= 2:
        timings["arbitration"] = tick() - t
        t = tick()
    reference_short = None
    if q.reference_short:
        reference = (round_.reference or "").strip()
        if (
            q.factual
            and any(c.answer and c.stated is not False for c in checks)
            and len(reference.split()) > 2 * MAX_WORDS
        ):
            reference_short = run_bounded(
                lambda _: short_answer(labelled(client, "judging", "reference"), round_.prompt, reference, config),
                [0],
                workers=1,
                budget=budget,
            )
        timings["reference"] = tick() - t
        t = tick()
    figures = None
    if q.factual and len(members) > 3:  # long answers' figures against the agreed ones, explanations too
        figures = ask_figures(
            labelled(client, "figures"), round_.prompt, q.figures, seen, workers=q.workers, budget=budget
        )
        timings["figures"] = tick() - t
    return RoundAnswers(
        q,
        kind,
        seen,
        explained,
        budget.reason,
        polarity,
        judged,
        factual,
        arbitration,
        reference_short,
        figures,
        timings,
    )
