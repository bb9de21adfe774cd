"""Collect a round's signals (the edges' evidence) before its one evaluation.

``run_round`` embeds the answers, then calls ``collect_signals``, which
gathers everything the pure core reads from ``consensus.signals.Signals``:

- the embedding similarity of each answer to the round's reference answer
  (when there is one) and to the prompt: both embedded with the same model;
- with the LM on, within one per-round time budget (``lm.round_budget_s``,
  ``lm.gating.Budget``), in this order:
  polarity of the dominant cluster's answers, only when the prompt is a
  yes/no question (``lm.gating.is_yes_no_question``; otherwise recorded as
  "skipped: not a yes/no prompt"); with the factual check on and
  ``lm.polarity_from_factual`` the labels are the yes or no of the factual
  check's short answers instead (one call per member, not two); the LM judge
  against the reference, when there is one and ``lm.reference_mode`` is
  "judge" (``judge.llmaaj.judge_against_reference``: a known answer is the
  strongest evidence, so it comes before the factual check); factual
  agreement of each member's short answer with the other members'
  (``lm.factual``); with ``lm.reference_mode`` "short", each member's short
  answer compared with the reference's (``consensus.factual_stage``, no call of its
  own; 1 agrees, 0 contradicts); arbitration, when the members' short answers
  disagree and the round has no reference (``lm.arbitrate``: the LM's own short
  answer to the prompt, one call, says which members leave; on only when
  ``consensus.checks.factual_arbitration`` is); with the factual check on, each member whose figure on a quantity most
  members agree on is another value (``consensus.figures``, explanations included: one call per such member,
  ``lm.figures``).
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
from typing import TYPE_CHECKING

import numpy as np

from consensus.fact_match import opening_yes_no, says_no_then_yes
from consensus.factual_stage import agrees_with_reference, yes_no_labels
from consensus.pipeline import CheckPlan
from consensus.signals import Signals
from consensus.text import visible
from consensus.types import Polarity, Round
from judge.llmaaj import judge_against_reference
from lm.arbitrate import REFERENCE, ArbitrationCheck, Asked, arbitrate, wanted
from lm.client import DeadlineClient, labelled
from lm.factual import MAX_WORDS, agreements, check_factual, short_answer
from lm.figures import check_figures, contradictions
from lm.gating import EXPLANATION, NOT_YES_NO, Budget, asks_for_explanation, is_yes_no_question, run_bounded
from lm.polarity import classify
from validator.lm_checks import Collected, LMChecks, PolarityCheck, ReferenceCheck, SkippedCheck
from validator.settings import Settings

if TYPE_CHECKING:
    from lm.arbitrate import ArbitrationCheck, Asked
    from lm.factual import FactualCheck


def edge_vectors(embedder, prompt: str, reference: str | None, stored: np.ndarray | None = None) -> np.ndarray:
    """The prompt's vector, then the reference's when the round has one: ``stored`` when it has those rows
    (a replay over stored embeddings then needs no model), else one call to the model for both."""
    texts = [prompt] + ([reference] if reference and reference.strip() else [])
    if stored is not None and stored.shape[0] == len(texts):
        return stored
    return embedder.embed(texts).vectors


def edge_similarities(vectors: np.ndarray, edges: np.ndarray) -> tuple[dict[int, float] | None, dict[int, float]]:
    """Cosines of every answer (rows of ``vectors``, (n, d)) to the reference (None without one) and to
    the prompt, from ``edge_vectors``."""
    return (Signals.cosines(vectors, edges[1]) if len(edges) > 1 else None), Signals.cosines(vectors, edges[0])


def _polarity(
    round_: Round, members: Sequence[int], lm, settings: Settings, budget: Budget
) -> tuple[dict, dict, tuple[PolarityCheck, ...], list[SkippedCheck]]:

    if not is_yes_no_question(round_.prompt):
        return {}, {}, (), [SkippedCheck("polarity", None, NOT_YES_NO)]
    out = run_bounded(
        lambda i: classify(
            labelled(lm.client, "polarity", round_.responses[i].miner),
            round_.prompt,
            visible(round_.responses[i].text),
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
    round_: Round, checks: Sequence[FactualCheck], lm, budget: Budget
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
    agrees = agrees_with_reference(answers, reference, round_.prompt, yes_no=is_yes_no_question(round_.prompt))
    agrees.update({i: False for i in silent})
    return tuple(ReferenceCheck(i, None, 1.0 if ok else 0.0, None) for i, ok in sorted(agrees.items())), []


def _factual(round_: Round, sim: np.ndarray, members: Sequence[int], lm, settings: Settings, budget: Budget):

    if len(members) < 2:
        return None, (), []
    texts = [visible(r.text) for r in round_.responses]
    checks = check_factual(
        lm.client, round_.prompt, texts, members, sim, lm.config, workers=settings.lm.workers, budget=budget
    )
    skipped = [SkippedCheck("factual", c.index, c.skipped) for c in checks if c.skipped and c.stated is not False]
    return agreements(checks), checks, skipped


def _arbitration(
    round_: Round, checks: Sequence[FactualCheck], lm, budget: Budget, asked: Asked | None
) -> tuple[ArbitrationCheck, list[SkippedCheck]]:
    """When the members' short answers disagree, the LM's own short answer to the prompt decides (one call,
    ``asked`` ahead of the factual check when the prompt allows it)."""

    if round_.reference and round_.reference.strip():
        return ArbitrationCheck(round_.prompt, skipped=REFERENCE), []
    # members the factual check did not reach are read from their text once the LM has decided (lm.arbitrate.decide)
    texts = {c.index: visible(round_.responses[c.index].text) for c in checks if c.answer is None}
    check = arbitrate(
        labelled(lm.client, "arbitration"), round_.prompt, checks, budget=budget, asked=asked, texts=texts
    )
    spent = check.skipped is not None and check.skipped == budget.reason
    return check, [SkippedCheck("arbitration", None, check.skipped)] if spent else []


def _judge(round_: Round, todo: Sequence[int], lm, settings: Settings, budget: Budget):

    def one(i: int) -> ReferenceCheck:
        res = judge_against_reference(
            labelled(lm.client, "judging", round_.responses[i].miner),
            round_.prompt,
            round_.reference or "",
            visible(round_.responses[i].text),
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
        polarity_on
        and settings.lm.polarity_from_factual
        and settings.lm.factual
        and len(members) >= 2
        and is_yes_no_question(round_.prompt)
    )
    t = tick()
    if polarity_on and not derived:
        labels, leaning, polarity_checks, more = _polarity(round_, members, lm, settings, budget)
        skipped += more
    timings["polarity"] = tick() - t
    t = tick()
    judged: tuple[ReferenceCheck, ...] = ()
    by_short = settings.lm.reference_mode == "short"
    if settings.lm.reference_judging and round_.reference and not by_short:
        judged, more = _judge(round_, list(plan.answered), lm, settings, budget)
        skipped += more
        timings["reference"] = tick() - t
        t = tick()
    factual, factual_checks = None, ()
    # an explanation has no short answer to compare: the check would spend the budget and change nothing
    # (a reference answer still needs the short answers, and a yes/no prompt is never an explanation)
    explained = not round_.reference and asks_for_explanation(round_.prompt)
    arbitrating = settings.consensus.checks.factual_arbitration and settings.consensus.checks.factual_check
    asked = None
    if arbitrating and settings.lm.factual and len(members) >= 2 and not explained and not round_.reference:
        if wanted(round_.prompt):  # the LM's own answer needs only the prompt: its call goes to the server first
            asked = Asked(labelled(lm.client, "arbitration"), round_.prompt)
    if settings.lm.factual and members and explained:
        skipped.append(SkippedCheck("factual", None, EXPLANATION))
    elif settings.lm.factual and members:
        factual, factual_checks, more = _factual(round_, sim, members, lm, settings, budget)
        skipped += more
    timings["factual"] = tick() - t
    t = tick()
    arbitration = None
    if arbitrating and len(factual_checks) >= 2:
        arbitration, more = _arbitration(round_, factual_checks, lm, budget, asked)
        skipped += more
        timings["arbitration"] = tick() - t
        t = tick()
    if derived:
        labels, leaning, polarity_checks = _polarity_from_short_answers(factual_checks, round_)
    if settings.lm.reference_judging and round_.reference and by_short:
        judged, more = (
            _reference_by_short_answers(round_, factual_checks, lm, budget)
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
