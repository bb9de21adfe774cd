"""The LM's evidence about a round, gathered in one pass before its one evaluation.

``gather_evidence`` is the one stage ``validator.round.stages.run_stages``
calls between the plan (``consensus.pipeline.plan_checks``) and the decision
(``consensus.pipeline.decide``); what it returns (``validator.records.lm_checks.Collected``:
the ``consensus.signals.Signals`` the pure core reads, the checks the record
shows) comes from one of three places: the LM asked now (``collect_signals``),
the LM's answers stored with the round (``validator.records.lm_evidence.LMEvidence``: a
replay without the LM), or nothing (no LM, a task round): then the signals are
the embedding similarities to the reference answer and to the prompt that
``run_stages`` measured. The prompt is read once (``lm.round_budget.PromptKind``) and
handed to every check. ``collect_signals`` says what to ask (``lm.evidence.Questions``,
from the settings and the plan), has the LM asked every question in one pass
(``lm.evidence.ask_round``: one ``RoundAnswers``, no verdict), then reads those
answers once (``read_answers``: the verdicts by the pure rules, in
``consensus``), within one per-round time budget (``lm.round_budget_s``,
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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from consensus.arbitration import REFERENCE, ArbitrationCheck, read_arbitration
from consensus.fact_match import opening_yes_no, says_no_then_yes
from consensus.factual_stage import agrees_with_reference, yes_no_labels
from consensus.pipeline import CheckPlan
from consensus.signals import Signals
from consensus.text import visible
from consensus.types import Polarity, Round
from judge.llmaaj import judge_against_reference
from lm.client import DeadlineClient, labelled
from lm.evidence import Questions, RoundAnswers, ask_round
from lm.factual import agreements
from lm.figures import contradictions
from lm.round_budget import EXPLANATION, NOT_YES_NO, Budget, PromptKind
from validator.records.lm_checks import Collected, LMChecks, PolarityCheck, ReferenceCheck, SkippedCheck
from validator.settings import Settings

if TYPE_CHECKING:
    from lm.factual import FactualCheck
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
    pass (``lm.evidence.ask_round``), then its answers are read (``read_answers``)."""

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
    return read_answers(round_, answers, questions, budget, reference_cos, prompt_cos)


def _questions(round_: Round, kind: PromptKind, plan: CheckPlan, settings: Settings, lm) -> Questions:
    """What to ask about ``round_``: the settings and whom ``plan`` names."""
    members = tuple(plan.members)
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
            visible(round_.responses[i].text),
            retries=lm.config.retries,
        )
        return ReferenceCheck(i, res.quality, res.normalised, res.error)

    return Questions(
        members=members,
        answered=tuple(plan.answered),
        workers=settings.lm.workers,
        polarity=polarity_on,
        derived=derived,
        judge=judge if judging and not by_short else None,
        factual=settings.lm.factual,
        arbitrating=settings.consensus.checks.factual_arbitration and settings.consensus.checks.factual_check,
        reference_short=judging and by_short,
    )


def read_answers(
    round_: Round,
    answers: RoundAnswers,
    questions: Questions,
    budget: Budget,
    reference_cos: Mapping[int, float] | None,
    prompt_cos: Mapping[int, float] | None,
) -> Collected:
    """What the LM said (``answers``), read once: the signals the core reads and the checks the record shows,
    in the order the checks were asked. No LM call."""
    q, kind = questions, answers.kind
    skipped: list[SkippedCheck] = []
    labels: dict[int, Polarity] = {}
    leaning: dict[int, float] = {}
    polarity_checks: tuple[PolarityCheck, ...] = ()
    if q.polarity and not q.derived and not kind.yes_no:
        skipped.append(SkippedCheck("polarity", None, NOT_YES_NO))
    if answers.polarity is not None:
        done = answers.polarity.done
        # an LM failure (fallback 5) is no label at all: it must not count against the answer
        labels = {i: label for i, (label, res) in done.items() if not res.fallback}
        leaning = {
            i: float(res.expected if res.expected is not None else res.score)
            for i, (label, res) in done.items()
            if not res.fallback
        }
        polarity_checks = tuple(
            PolarityCheck(i, label.value, res.score, res.expected, res.fallback)
            for i, (label, res) in sorted(done.items())
        )
        skipped += [SkippedCheck("polarity", i, why) for i, why in sorted(answers.polarity.skipped.items())]
    judged: tuple[ReferenceCheck, ...] = ()
    if answers.judged is not None:
        judged = tuple(answers.judged.done[i] for i in sorted(answers.judged.done))
        skipped += [SkippedCheck("reference", i, why) for i, why in sorted(answers.judged.skipped.items())]
    factual_checks = answers.factual or ()
    factual = None
    if q.factual and q.members and answers.explained:
        skipped.append(SkippedCheck("factual", None, EXPLANATION))
    elif answers.factual is not None:
        factual = agreements(factual_checks)
        skipped += [
            SkippedCheck("factual", c.index, c.skipped) for c in factual_checks if c.skipped and c.stated is not False
        ]
    arbitration = None
    if q.arbitrating and len(factual_checks) >= 2:
        asked = answers.arbitration
        arbitration = (
            ArbitrationCheck(round_.prompt, skipped=REFERENCE)  # the round has a reference answer: it decides
            if asked is None
            else read_arbitration(
                round_.prompt,
                factual_checks,
                asked.own,
                kind,
                waited=asked.waited,
                why=asked.why,
                # members the factual check did not reach are read from their text once the LM has decided
                texts={c.index: answers.seen[c.index] for c in factual_checks if c.answer is None},
            )
        )
        if arbitration.skipped is not None and arbitration.skipped == budget.reason:
            skipped.append(SkippedCheck("arbitration", None, arbitration.skipped))
    if q.derived:
        labels, leaning, polarity_checks = _polarity_from_short_answers(factual_checks, round_)
    if q.reference_short:
        if q.factual:
            judged, more = _reference_by_short_answers(round_, factual_checks, answers)
            skipped += more
        else:
            skipped.append(SkippedCheck("reference", None, REFERENCE_SHORT_NEEDS_FACTUAL))
    figures: dict[int, str] = {}
    if answers.figures is not None:
        figures = contradictions(answers.figures)
        skipped += [SkippedCheck("figures", c.index, c.skipped) for c in answers.figures if c.skipped]
    scores = {j.index: j.score for j in judged if j.score is not None}
    signals = Signals(
        polarity=labels or None,
        polarity_leaning=leaning or None,
        reference_scores=scores or None,
        reference_similarity=reference_cos,
        prompt_similarity=prompt_cos,
        factual_agreement=factual or None,
        factual_unstated=frozenset(c.index for c in factual_checks if c.stated is False) or None,
        arbitration=None if arbitration is None else arbitration.signal(),
        figure_contradictions=figures or None,
    )
    checks = LMChecks(polarity_checks, tuple(factual_checks), arbitration, judged, tuple(skipped))
    return Collected(signals, checks, dict(answers.timings))


def _polarity_from_short_answers(
    checks: Sequence[FactualCheck], round_: Round
) -> tuple[dict, dict, tuple[PolarityCheck, ...]]:
    """Polarity labels (and a 0 / 10 leaning) from the yes or no of the factual check's short answers; a "no"
    whose own text opens "No," and then states the question's claim is unclear (``says_no_then_yes``); a member
    without a short answer (the budget, the LM gave none) by the "Yes" or "No" its text opens with, if any."""

    said = yes_no_labels({c.index: c.answer for c in checks if c.answer})
    for i, yes in said.items():
        if yes is False and says_no_then_yes(visible(round_.responses[i].text), round_.prompt):
            said[i] = None
    # a member the budget left without a short answer votes by its own first word ("Yes, ..." / "No, ..."): with
    # two of four reached, the embedded pool's boiling prompt was a 1-1 tie and no consensus (issue 46)
    for c in checks:
        if c.answer is None and c.stated is not False:
            read = opening_yes_no(visible(round_.responses[c.index].text), round_.prompt)
            if read is not None:
                said[c.index] = read
    labels = {
        i: Polarity.UNCLEAR if yes is None else Polarity.AFFIRMATIVE if yes else Polarity.NEGATIVE
        for i, yes in said.items()
    }
    leaning = {i: 10.0 if yes else 0.0 for i, yes in said.items() if yes is not None}
    checks_out = tuple(
        PolarityCheck(i, labels[i].value, 5 if said[i] is None else 10 * said[i], None, False) for i in sorted(labels)
    )
    return labels, leaning, checks_out


def _reference_by_short_answers(
    round_: Round, checks: Sequence[FactualCheck], answers: RoundAnswers
) -> tuple[tuple[ReferenceCheck, ...], list[SkippedCheck]]:
    """Each member's short answer against the reference's (a reference longer than a short answer was put in a
    few words by the LM, ``lm.evidence.ask_round``): 1.0 when it states the reference's answer, 0.0 when not."""

    said = {c.index: c.answer for c in checks if c.answer and c.stated is not False}
    silent = [c.index for c in checks if c.stated is False]  # its text states no answer: none agrees with the reference
    reference = (round_.reference or "").strip()
    if not said:
        return (), []
    if answers.reference_short is not None:
        reference = answers.reference_short.done.get(0) or ""
        if not reference:
            why = answers.reference_short.skipped.get(0) or "skipped: the LM gave no short answer for the reference"
            return (), [SkippedCheck("reference", None, why)]
    agrees = agrees_with_reference(said, reference, round_.prompt, yes_no=answers.kind.yes_no)
    agrees.update({i: False for i in silent})
    return tuple(ReferenceCheck(i, None, 1.0 if ok else 0.0, None) for i, ok in sorted(agrees.items())), []


REFERENCE_SHORT_NEEDS_FACTUAL = (
    "skipped: lm.reference_mode 'short' reads the factual check's short answers, and lm.factual is off"
)
