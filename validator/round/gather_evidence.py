"""The LM's evidence about a round, gathered in one pass before its one evaluation.

``gather_evidence`` is the one stage ``validator.round.stages.run_stages``
calls between the plan (``consensus.pipeline.plan_checks``) and the decision
(``consensus.pipeline.decide``); what it returns (``consensus.evidence.Collected``:
the ``consensus.signals.Signals`` the pure core reads, the checks the record
shows) comes from one of three places: the LM asked now (``collect_signals``),
the LM's answers stored with the round (``validator.records.lm_evidence.LMEvidence``: a
replay without the LM), or nothing (no LM, a task round): then the signals are
the embedding similarities to the reference answer and to the prompt that
``run_stages`` measured. The prompt is read once (``lm.round_budget.PromptKind``) and
handed to every check. ``collect_signals`` says what to ask (``lm.evidence.Questions``,
from the settings and the plan), has the LM asked every question in one pass
(``lm.evidence.ask_round``: one ``RoundAnswers``, no verdict), then the pure rules read that
value once (``consensus.evidence.read_answers``: the verdicts), within one per-round time budget (``lm.round_budget_s``,
``lm.round_budget.Budget``), in this order:

- polarity of the dominant cluster's answers, only when the prompt is a
  yes/no question (``lm.round_budget.is_yes_no_question``; otherwise recorded as
  "skipped: not a yes/no prompt"); with the factual check on and
  ``lm.polarity_from_factual`` the labels are the yes or no of the factual
  check's short answers instead (one call per member, not two);
- the LM judge against the reference, when there is one and
  ``lm.reference_mode`` is "judge" (``judge.llmaaj.judge_against_reference``:
  a known answer is the strongest evidence, so it comes before the factual
  check);
- factual agreement of each member's short answer with the other members'
  (``lm.factual``); with ``lm.reference_mode`` "short", each member's short
  answer compared with the reference's (``consensus.factual_stage``, no call of
  its own; 1 agrees, 0 contradicts);
- arbitration, when the members' short answers disagree and the round has no
  reference (``lm.arbitrate`` asks the LM's own short answer to the prompt, one
  call, sent ahead of the short answers; ``consensus.arbitration`` says which members leave; on only when
  ``consensus.checks.factual_arbitration`` is);
- with the factual check on, each member whose figure on a quantity most
  members agree on is another value (``consensus.figures``, explanations
  included: one call per such member, ``lm.figures``).

Every answer reaches the LM and the facts rules as a reader sees it
(``consensus.text.visible``: no markup comments, no invisible characters).
A check the budget did not reach is recorded as skipped with the reason and
never retried in a later round.

Whom the LM checks is chosen by ``consensus.pipeline.plan_checks`` (the
stages up to the dominant cluster; pure and milliseconds): the LM is asked
only where its answer can change something. Scores come from the one
evaluation that has every signal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from consensus.evidence import Collected, ReferenceCheck, read_answers
from consensus.figures import suspects
from consensus.pipeline import CheckPlan
from consensus.signals import Signals
from consensus.text import visible
from consensus.types import Round
from judge.llmaaj import judge_against_reference
from lm.client import DeadlineClient, labelled
from lm.evidence import Questions, ask_round
from lm.round_budget import Budget, PromptKind
from validator.settings import Settings

if TYPE_CHECKING:
    from validator.records.lm_evidence import LMEvidence


def gather_evidence(
    round_: Round,
    sim: np.ndarray,
    plan: CheckPlan | None,
    settings: Settings,
    embedded: Signals,
    *,
    lm=None,
    stored: LMEvidence | None = None,
) -> Collected:
    """The LM's evidence about ``round_`` (the module docstring): its stored answers when ``stored`` is given
    (a re-evaluation without the LM), else the LM asked about whom ``plan`` names, else (no plan: no LM, or a
    task round) nothing beyond ``embedded``, the signals known before the LM (the embedding similarities)."""
    reference_cos, prompt_cos = embedded.reference_similarity, embedded.prompt_similarity
    if stored is not None:  # the LM's answers of the original evaluation, not asked again
        return stored.collected(reference_cos, prompt_cos)
    if plan is None:
        return Collected(embedded)
    return collect_signals(round_, sim, plan, settings, lm=lm, reference_cos=reference_cos, prompt_cos=prompt_cos)


def collect_signals(
    round_: Round,
    sim: np.ndarray,
    plan: CheckPlan,
    settings: Settings,
    *,
    lm=None,
    reference_cos: Mapping[int, float] | None = None,
    prompt_cos: Mapping[int, float] | None = None,
    clock=None,
) -> Collected:
    """Every signal of the round (see the module docstring); ``plan`` says whom to check. The LM is asked in one
    pass (``lm.evidence.ask_round``: one value), then the pure rules read that value (``consensus.evidence``)."""

    if lm is None:
        return Collected(Signals(reference_similarity=reference_cos, prompt_similarity=prompt_cos))
    budget = Budget(settings.lm.round_budget_s)
    if settings.lm.round_budget_s > 0:
        # every call of the round's checks, retries included, ends at the round's deadline: a check the
        # budget left behind must not go on asking the LM during the next round (idle main job, round 3:
        # round 2's judge retries took the cores the miners' server needed; 4 honest miners missed 60 s)
        lm = dataclasses.replace(lm, client=DeadlineClient(lm.client, settings.lm.round_budget_s))
    kind = PromptKind.of(round_.prompt)  # read once, handed to every check
    questions = _questions(round_, kind, plan, settings, lm)
    answers = ask_round(lm.client, lm.config, round_, sim, questions, budget, kind=kind, clock=clock)
    return read_answers(round_, answers, reference_cos, prompt_cos)


def _questions(round_: Round, kind: PromptKind, plan: CheckPlan, settings: Settings, lm) -> Questions:
    """What to ask about ``round_``: the settings and whom ``plan`` names; every answer as a reader sees it, and
    the members whose figure the LM reads (``consensus.figures.suspects``, with the factual check)."""
    members = tuple(plan.members)
    seen = tuple(visible(r.text) for r in round_.responses)
    figures = suspects({i: seen[i] for i in members}, round_.prompt) if settings.lm.factual and len(members) > 3 else ()
    polarity_on = bool(settings.lm.polarity and settings.consensus.checks.polarity_clustering and members)
    # on a yes/no prompt the factual check's short answers are the polarity: one call per member, not two
    derived = bool(
        polarity_on and settings.lm.polarity_from_factual and settings.lm.factual and len(members) >= 2 and kind.yes_no
    )
    by_short = settings.lm.reference_mode == "short"
    judging = bool(settings.lm.reference_judging and round_.reference)

    def judge(i: int) -> ReferenceCheck:
        res = judge_against_reference(
            labelled(lm.client, "judging", round_.responses[i].miner),
            round_.prompt,
            round_.reference or "",
            seen[i],
            retries=lm.config.retries,
        )
        return ReferenceCheck(i, res.quality, res.normalised, res.error)

    return Questions(
        seen=seen,
        members=members,
        answered=tuple(plan.answered),
        workers=settings.lm.workers,
        polarity=polarity_on,
        derived=derived,
        judge=judge if judging and not by_short else None,
        factual=settings.lm.factual,
        arbitrating=settings.consensus.checks.factual_arbitration and settings.consensus.checks.factual_check,
        reference_short=judging and by_short,
        figures=figures,
    )
