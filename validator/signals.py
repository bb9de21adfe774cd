"""The LM's evidence about a round, gathered in one pass before its one evaluation.

``gather_evidence`` is the one stage ``validator.round_stages.run_stages``
calls between the plan (``consensus.pipeline.plan_checks``) and the decision
(``consensus.pipeline.decide``); what it returns (``validator.lm_checks.Collected``:
the ``consensus.signals.Signals`` the pure core reads, the checks the record
shows) comes from one of three places: the LM asked now (``collect_signals``),
the LM's answers stored with the round (``validator.evidence.LMEvidence``: a
replay without the LM), or nothing (no LM, a task round): then the signals are
the embedding similarities to the reference answer and to the prompt that
``run_stages`` measured. The prompt is read once (``lm.gating.PromptKind``) and
handed to every check. ``collect_signals`` asks, within one per-round time
budget (``lm.round_budget_s``, ``lm.gating.Budget``), in this order:

- polarity of the dominant cluster's answers, only when the prompt is a
  yes/no question (``lm.gating.is_yes_no_question``; otherwise recorded as
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
  call; ``consensus.arbitration`` says which members leave; on only when
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
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from consensus.arbitration import REFERENCE, ArbitrationCheck, abstain, arbitration_verdict, needed, with_unused_answer
from consensus.factual_stage import agrees_with_reference, yes_no_labels
from consensus.pipeline import CheckPlan
from consensus.signals import Signals
from consensus.text import visible
from consensus.types import Polarity, Round
from judge.llmaaj import judge_against_reference
from lm.arbitrate import Asked, ask_own_answer, wanted
from lm.client import DeadlineClient, labelled
from lm.factual import MAX_WORDS, agreements, check_factual, short_answer
from lm.figures import check_figures, contradictions
from lm.gating import EXPLANATION, NOT_YES_NO, Budget, PromptKind, run_bounded
from lm.polarity import classify
from validator.lm_checks import Collected, LMChecks, PolarityCheck, ReferenceCheck, SkippedCheck
from validator.settings import Settings

if TYPE_CHECKING:
    from lm.factual import FactualCheck
    from validator.evidence import LMEvidence


@dataclass(frozen=True)
class _Read:
    """The round as every check reads it, read once: the prompt's kind (``lm.gating.PromptKind``) and each answer
    as a reader sees it (``consensus.text.visible``)."""

    kind: PromptKind
    seen: tuple[str, ...]


def _polarity(
    round_: Round, members: Sequence[int], lm, settings: Settings, budget: Budget, read: _Read
) -> tuple[dict, dict, tuple[PolarityCheck, ...], list[SkippedCheck]]:

    if not read.kind.yes_no:
        return {}, {}, (), [SkippedCheck("polarity", None, NOT_YES_NO)]
    out = run_bounded(
        lambda i: classify(
            labelled(lm.client, "polarity", round_.responses[i].miner),
            round_.prompt,
            read.seen[i],
            lm.config,
        ),
        list(members),
        workers=settings.lm.workers,
        budget=budget,
    )
    # an LM failure (fallback 5) is no label at all: it must not count against the answer
    labels = {i: label for i, (label, res) in out.done.items() if not res.fallback}
    leaning = {
        i: float(res.expected if res.expected is not None else res.score)
        for i, (label, res) in out.done.items()
        if not res.fallback
    }
    checks = tuple(
        PolarityCheck(i, label.value, res.score, res.expected, res.fallback)
        for i, (label, res) in sorted(out.done.items())
    )
    skipped = [SkippedCheck("polarity", i, why) for i, why in sorted(out.skipped.items())]
    return labels, leaning, checks, skipped


def _polarity_from_short_answers(checks: Sequence[FactualCheck]) -> tuple[dict, dict, tuple[PolarityCheck, ...]]:
    """Polarity labels (and a 0 / 10 leaning) from the yes or no of the factual check's short answers."""

    said = yes_no_labels({c.index: c.answer for c in checks if c.answer})
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
    round_: Round, checks: Sequence[FactualCheck], lm, budget: Budget, kind: PromptKind
) -> tuple[tuple[ReferenceCheck, ...], list[SkippedCheck]]:
    """Each member's short answer against the reference's (a reference longer than a short answer is put in a
    few words by the LM, one call): 1.0 when it states the reference's answer, 0.0 when it does not."""

    answers = {c.index: c.answer for c in checks if c.answer and c.stated is not False}
    silent = [c.index for c in checks if c.stated is False]  # its text states no answer: none agrees with the reference
    reference = (round_.reference or "").strip()
    if not answers:
        return (), []
    if len(reference.split()) > 2 * MAX_WORDS:
        done = run_bounded(
            lambda _: short_answer(labelled(lm.client, "judging", "reference"), round_.prompt, reference, lm.config),
            [0],
            workers=1,
            budget=budget,
        )
        reference = done.done.get(0) or ""
        if not reference:
            why = done.skipped.get(0) or "skipped: the LM gave no short answer for the reference"
            return (), [SkippedCheck("reference", None, why)]
    agrees = agrees_with_reference(answers, reference, round_.prompt, yes_no=kind.yes_no)
    agrees.update({i: False for i in silent})
    return tuple(ReferenceCheck(i, None, 1.0 if ok else 0.0, None) for i, ok in sorted(agrees.items())), []


def _factual(
    round_: Round, sim: np.ndarray, members: Sequence[int], lm, settings: Settings, budget: Budget, read: _Read
):

    if len(members) < 2:
        return None, (), []
    texts = list(read.seen)
    checks = check_factual(
        lm.client,
        round_.prompt,
        texts,
        members,
        sim,
        lm.config,
        workers=settings.lm.workers,
        budget=budget,
        kind=read.kind,
    )
    skipped = [SkippedCheck("factual", c.index, c.skipped) for c in checks if c.skipped and c.stated is not False]
    return agreements(checks), checks, skipped


def _arbitration(
    round_: Round, checks: Sequence[FactualCheck], lm, budget: Budget, asked: Asked | None, read: _Read
) -> tuple[ArbitrationCheck, list[SkippedCheck]]:
    """When the members' short answers disagree, the LM's own short answer to the prompt decides (one call,
    ``asked`` ahead of the factual check when the prompt allows it)."""

    if round_.reference and round_.reference.strip():
        return ArbitrationCheck(round_.prompt, skipped=REFERENCE), []
    before = needed(round_.prompt, checks, read.kind)  # pure: do the short answers disagree on one answer?
    if before.skipped is not None:  # asked ahead and already there: recorded anyway
        check = with_unused_answer(before, asked.ready() if asked is not None else None)
    else:
        own, why = ask_own_answer(labelled(lm.client, "arbitration"), round_.prompt, budget, asked)
        # members the factual check did not reach are read from their text once the LM has decided
        texts = {c.index: read.seen[c.index] for c in checks if c.answer is None}
        check = (
            abstain(before, why or "skipped: the LM gave no answer of its own")
            if own is None
            else arbitration_verdict(round_.prompt, checks, own, read.kind, texts=texts)
        )
    spent = check.skipped is not None and check.skipped == budget.reason
    return check, [SkippedCheck("arbitration", None, check.skipped)] if spent else []


def _judge(round_: Round, todo: Sequence[int], lm, settings: Settings, budget: Budget, read: _Read):

    def one(i: int) -> ReferenceCheck:
        res = judge_against_reference(
            labelled(lm.client, "judging", round_.responses[i].miner),
            round_.prompt,
            round_.reference or "",
            read.seen[i],
            retries=lm.config.retries,
        )
        return ReferenceCheck(i, res.quality, res.normalised, res.error)

    out = run_bounded(one, list(todo), workers=settings.lm.workers, budget=budget)
    checks = tuple(out.done[i] for i in sorted(out.done))
    return checks, [SkippedCheck("reference", i, why) for i, why in sorted(out.skipped.items())]


def _figures(round_: Round, members: Sequence[int], lm, settings: Settings, budget: Budget):
    """Each suspect figure (``consensus.figures``) read by the LM against the agreed fact (``lm.figures``)."""

    texts = [r.text if r.error is None else "" for r in round_.responses]
    client = labelled(lm.client, "figures")
    checks = check_figures(client, round_.prompt, texts, members, workers=settings.lm.workers, budget=budget)
    return contradictions(checks), [SkippedCheck("figures", c.index, c.skipped) for c in checks if c.skipped]


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
    """Every signal of the round (see the module docstring); ``plan`` says whom to check."""

    if lm is None:
        return Collected(Signals(reference_similarity=reference_cos, prompt_similarity=prompt_cos))
    tick = clock or time.perf_counter
    read = _Read(PromptKind.of(round_.prompt), tuple(visible(r.text) for r in round_.responses))  # read once
    kind = read.kind
    budget = Budget(settings.lm.round_budget_s)
    if settings.lm.round_budget_s > 0:
        # every call of the round's checks, retries included, ends at the round's deadline: a check the
        # budget left behind must not go on asking the LM during the next round (idle main job, round 3:
        # round 2's judge retries took the cores the miners' server needed; 4 honest miners missed 60 s)
        lm = dataclasses.replace(lm, client=DeadlineClient(lm.client, settings.lm.round_budget_s))
    timings: dict[str, float] = {}
    skipped: list[SkippedCheck] = []
    members = list(plan.members)
    labels: dict[int, Polarity] = {}
    leaning: dict[int, float] = {}
    polarity_checks: tuple[PolarityCheck, ...] = ()
    polarity_on = bool(settings.lm.polarity and settings.consensus.checks.polarity_clustering and members)
    # on a yes/no prompt the factual check's short answers are the polarity: one call per member, not two
    derived = (
        polarity_on and settings.lm.polarity_from_factual and settings.lm.factual and len(members) >= 2 and kind.yes_no
    )
    t = tick()
    if polarity_on and not derived:
        labels, leaning, polarity_checks, more = _polarity(round_, members, lm, settings, budget, read)
        skipped += more
    timings["polarity"] = tick() - t
    t = tick()
    judged: tuple[ReferenceCheck, ...] = ()
    by_short = settings.lm.reference_mode == "short"
    if settings.lm.reference_judging and round_.reference and not by_short:
        judged, more = _judge(round_, list(plan.answered), lm, settings, budget, read)
        skipped += more
        timings["reference"] = tick() - t
        t = tick()
    factual, factual_checks = None, ()
    # an explanation has no short answer to compare: the check would spend the budget and change nothing
    # (a reference answer still needs the short answers, and a yes/no prompt is never an explanation)
    explained = not round_.reference and kind.explanation
    arbitrating = settings.consensus.checks.factual_arbitration and settings.consensus.checks.factual_check
    asked = None
    if arbitrating and settings.lm.factual and len(members) >= 2 and not explained and not round_.reference:
        if wanted(round_.prompt, kind):  # the LM's own answer needs only the prompt: its call goes to the server first
            asked = Asked(labelled(lm.client, "arbitration"), round_.prompt)
    if settings.lm.factual and members and explained:
        skipped.append(SkippedCheck("factual", None, EXPLANATION))
    elif settings.lm.factual and members:
        factual, factual_checks, more = _factual(round_, sim, members, lm, settings, budget, read)
        skipped += more
    timings["factual"] = tick() - t
    t = tick()
    arbitration = None
    if arbitrating and len(factual_checks) >= 2:
        arbitration, more = _arbitration(round_, factual_checks, lm, budget, asked, read)
        skipped += more
        timings["arbitration"] = tick() - t
        t = tick()
    if derived:
        labels, leaning, polarity_checks = _polarity_from_short_answers(factual_checks)
    if settings.lm.reference_judging and round_.reference and by_short:
        judged, more = (
            _reference_by_short_answers(round_, factual_checks, lm, budget, kind)
            if settings.lm.factual
            else (
                (),
                [
                    SkippedCheck(
                        "reference",
                        None,
                        "skipped: lm.reference_mode 'short' reads the factual check's "
                        "short answers, and lm.factual is off",
                    )
                ],
            )
        )
        skipped += more
        timings["reference"] = tick() - t
        t = tick()
    figures: dict[int, str] = {}
    if settings.lm.factual and len(members) > 3:  # long answers' figures against the agreed ones, explanations too
        figures, more = _figures(round_, members, lm, settings, budget)
        skipped += more
        timings["figures"] = tick() - t
        t = tick()
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
    return Collected(signals, checks, timings)
