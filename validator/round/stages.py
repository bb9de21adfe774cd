"""One round: embed -> the LM's evidence (edges) -> decide once (pure core) -> allocate -> render -> narrate.

``run_stages`` is the evaluation inside ``validator.round.evaluate.evaluate_stored``, the
one unit of work every driver (daemon, ``validator round``, replay, what-if,
the engines) calls per round. It holds no I/O beyond the injected embedder
and LM; the record is built and persisted by the caller (``validator.round.evaluate``,
``validator.records.writer``). The signals (reference similarity, polarity, factual agreement, the
judge, SelectIT) are gathered by ``validator.round.gather_evidence.gather_evidence``, one stage; on a
canary round the answers are then judged against the known answer
(``validator.round.canaries``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from consensus.arbitration import ArbitrationCheck
from consensus.embedder import Embedder, Embeddings, RoundEmbeddings
from consensus.evidence import Collected, PolarityCheck, ReferenceCheck, SkippedCheck
from consensus.extensions import NONE, Extensions
from consensus.pipeline import decide, plan_checks
from consensus.reference import judged
from consensus.signals import Signals
from consensus.similarity import cosine_matrix
from consensus.text import model_text
from consensus.types import Evaluation, Polarity, Reason, Round
from emissions.allocate import Allocation, allocate
from judge.nli import Judge, reference_entailment
from lm.factual import FactualCheck
from narrative.template import template_narrative
from storage import keys
from validator.records.lm_evidence import LMEvidence
from validator.round.canaries import CanaryInput, CanaryResult, judge_canary
from validator.round.embed_ahead import round_texts
from validator.round.gather_evidence import gather_evidence
from validator.round.narration import narrate_round, narrative_evidence, narrative_input, stored_narrative
from validator.round.task_verification import TaskOutcome, verify_round
from validator.settings import Settings

if TYPE_CHECKING:
    from lm.client import ChatClient
    from lm.config import LMConfig
    from tasks.source import Task
    from validator.records.lm_evidence import LMEvidence


@dataclass(frozen=True)
class EvaluatedRound:
    """What the evaluation of one round decided, with what it made on the way (``run_stages``): the pure core's
    ``Evaluation``, the allocation, embeddings, heatmap, narrative and the LM's checks. One of the three round
    types (docs/architecture.md, "One round, three types"): ``validator.round.evaluate`` builds the stored record
    (``validator.records.evaluation_record.RoundRecord``) from it and ``validator.records.writer.RoundWriter`` the round's files."""

    round: Round
    evaluation: Evaluation
    allocation: Allocation
    embeddings: RoundEmbeddings  # with the prompt's (and the reference's) vector: stored for replay
    sim: np.ndarray
    heatmap_png: bytes | None
    narrative: str
    narrative_kind: str
    polarity_checks: tuple[PolarityCheck, ...] = ()
    lm_usage: dict | None = None
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    reference_checks: tuple[ReferenceCheck, ...] = ()
    factual_checks: tuple[FactualCheck, ...] = ()  # per checked member of the dominant cluster
    lm_skipped: tuple[SkippedCheck, ...] = ()  # LM checks not run (not a yes/no prompt, budget spent, ...)
    canary: CanaryResult | None = None  # set on canary rounds
    arbitration: ArbitrationCheck | None = None  # the LM's arbitration, when the factual check ran
    # what the LM said (validator.records.lm_evidence), stored beside the round; ``evidence_reused``: read from the store
    # (a re-evaluation without the LM), not asked in this evaluation
    evidence: LMEvidence | None = None
    evidence_reused: bool = False
    task: TaskOutcome | None = None  # a task round: the verifier's verdicts (validator.round.task_verification)


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


def _judge_canary(round_: Round, evaluation: Evaluation, collected: Collected) -> CanaryResult:
    judged = {j.index: j.score for j in collected.checks.reference_checks if j.score is not None}
    cos = collected.signals.reference_similarity or {}
    items = [
        CanaryInput(
            index=r.index,
            miner=r.miner,
            text=round_.responses[r.index].text,
            usable=r.reason not in (Reason.ERROR, Reason.EMPTY, Reason.COPY),
            embedding=None if r.index not in cos else max(0.0, min(1.0, cos[r.index])),
            judge=judged.get(r.index),
        )
        for r in evaluation.results
    ]
    return judge_canary(round_.reference or "", items, evaluation.members, round_.prompt)


def run_stages(
    round_: Round,
    embedder: Embedder,
    settings: Settings,
    polarity: Mapping[int, Polarity] | None = None,
    lm: LMHandle | None = None,
    embeddings: Embeddings | None = None,
    *,
    canary: bool = False,
    known: Signals | None = None,
    evidence: LMEvidence | None = None,
    extensions: Extensions = NONE,
    narrative_budget_s: float | None = None,
    task: Task | None = None,
    nli: Judge | None = None,
) -> EvaluatedRound:
    """Evaluate one round: embed -> the LM's evidence -> decide once -> allocate -> render -> narrate.

    ``embeddings`` (stored ones, same model) skip the embedding stage in replay.
    ``known``: what the caller knows before the round (``Signals.entities``: operators it declared); the edge
    adds the rest.
    ``evidence``: what the LM said about this round before (``validator.records.lm_evidence``); without ``lm`` its
    signals and narrative are used instead of asking (replay and what-if), with ``lm`` it is ignored.
    ``polarity`` (labels known beforehand, e.g. in tests) replaces the LM's.
    ``canary``: the round's reference is a known answer; judge every answer
    against it (``EvaluatedRound.canary``).
    ``extensions``: rules from outside the product (``consensus.extensions``: the lab's, in benchmarks/); none
    by default. ``narrative_budget_s``: the narrative step's LM budget (``validator.round.narration``; None: none).
    ``task``: the round asked a verifiable task; its verifier decides who is paid (``validator.round.task_verification``,
    ``consensus.verified``), and the LM's checks of agreement are not asked (the truth is known).
    ``nli``: the NLI judge (``judge.nli``); with a reference it reads (``consensus.reference.judged``), each answer's
    P(it follows from the reference) is handed to the evaluation (``Signals.reference_entailment``;
    ``consensus.reference.support`` reads it) and stored with the round's evidence (``EvaluatedRound.evidence``,
    ``LMEvidence.judged`` without the LM); None: not asked. With stored ``evidence`` and no ``lm`` the stored
    verdicts are read instead (none when the original round had none), and the judge is not asked.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter
    t = clock()
    emb = (
        embeddings
        if embeddings is not None
        else embedder.embed(round_texts(round_, settings.consensus.text.normalise_text))
    )
    sim = cosine_matrix(emb.vectors)
    normalise = settings.consensus.text.normalise_text
    edges = edge_vectors(
        embedder,
        model_text(round_.prompt, normalise),
        model_text(round_.reference, normalise) if round_.reference else None,
        getattr(emb, "edges", None),
    )
    emb = RoundEmbeddings(emb.vectors, emb.windows, emb.tokens, emb.embedded, edges)
    ref_cos, prompt_cos = edge_similarities(emb.vectors, edges)
    timings["embed"] = clock() - t
    t = clock()
    usage_before = lm.client.meter.snapshot() if lm is not None and hasattr(lm.client, "meter") else None
    # the LM checks only the dominant cluster's answers (the only ones whose membership it can change)
    embedded = dataclasses.replace(
        known or Signals(),
        reference_similarity=ref_cos,
        prompt_similarity=prompt_cos,
        prompt_reference_similarity=float(edges[0] @ edges[1]) if len(edges) > 1 else None,
    )
    reused = evidence if lm is None else None  # the LM's answers of the original evaluation, not asked again
    judged_now = False
    if reused is not None:  # the verdicts the original round read, or none: the model is not asked again
        embedded = dataclasses.replace(embedded, reference_entailment=reused.signals.reference_entailment)
    elif nli is not None and round_.reference and task is None and judged(round_.reference, round_.prompt):
        t_nli = clock()
        entailment = reference_entailment(nli, round_.reference, {i: r.text for i, r in enumerate(round_.responses)})
        embedded = dataclasses.replace(embedded, reference_entailment=entailment)
        judged_now = True
        timings["nli"] = clock() - t_nli
    checks_lm = lm if task is None else None  # a task's truth is the verifier's: no LM check of agreement
    plan = (
        plan_checks(round_, emb.vectors, settings.consensus, embedded, sim, extensions)
        if checks_lm is not None
        else None
    )
    timings["consensus"] = clock() - t
    # labels given beforehand replace the LM's: do not ask it
    asked = (
        settings
        if polarity is None
        else dataclasses.replace(settings, lm=dataclasses.replace(settings.lm, polarity=False))
    )
    collected = gather_evidence(round_, sim, plan, asked, embedded, lm=checks_lm, stored=reused)
    timings.update(collected.timings)
    # the LM's signals on top of what was known before them (the same objects: the plan's stages are reused)
    signals = dataclasses.replace(
        collected.signals,
        entities=embedded.entities,
        prompt_reference_similarity=embedded.prompt_reference_similarity,
        reference_entailment=embedded.reference_entailment,
    )
    if polarity is not None:
        signals = dataclasses.replace(signals, polarity=polarity, polarity_leaning=None)
    t = clock()
    # the plan's stages up to the dominant cluster are not run twice (consensus.pipeline.decide(plan=))
    evaluation = decide(
        round_, emb.vectors, settings.consensus, signals=signals, sim=sim, plan=plan, extensions=extensions
    )
    timings["consensus"] += clock() - t
    verified: TaskOutcome | None = None
    if task is not None:
        t = clock()
        evaluation, verified = verify_round(round_, task, evaluation)
        timings["verify"] = clock() - t
    t = clock()
    allocation = allocate(round_, evaluation, settings.emissions)
    canary_result = _judge_canary(round_, evaluation, collected) if canary and round_.reference else None
    timings["emissions"] = clock() - t
    t = clock()
    heatmap_png = None
    heatmap_key = None
    if settings.output.heatmap:
        heatmap_key = keys.heatmap(round_.round_id)
        from narrative.heatmap import render_heatmap  # matplotlib loads here, not when a command starts

        heatmap_png = render_heatmap(
            sim,
            [r.miner for r in round_.responses],
            list(evaluation.members),
            [r.cluster for r in evaluation.results],
            round_.round_id,
            reasons=[r.reason.value for r in evaluation.results],
            reached=evaluation.consensus.reached,
        )
    timings["heatmap"] = clock() - t
    t = clock()
    told = None
    if lm is not None and settings.lm.narrative:
        told = narrate_round(lm.client, round_, evaluation, allocation, heatmap_key, narrative_budget_s)
        narrative, kind = told.text, told.kind
    else:
        narrative, kind = (
            template_narrative(narrative_input(round_, evaluation, allocation, heatmap_key)),
            "template",
        )
    checks = collected.checks
    skipped = checks.skipped
    if told is not None and told.skipped:
        skipped = (*skipped, SkippedCheck("narrative", None, told.skipped))
    if reused is not None and reused.narrative is not None:
        narrative, kind = stored_narrative(reused, round_, evaluation, allocation, heatmap_key, narrative)
        if reused.narrative.skipped:  # the original's record says its narrative budget was spent
            skipped = (*skipped, SkippedCheck("narrative", None, reused.narrative.skipped))
    timings["narrative"] = clock() - t
    usage = None
    if usage_before is not None:
        after = lm.client.meter.snapshot()
        usage = {k: after[k] - usage_before[k] for k in after}
    new_evidence = None
    if lm is not None:
        new_evidence = LMEvidence.of(
            round_.round_id,
            lm.client.name,
            collected,
            signals,
            None if told is None else narrative_evidence(told, round_, evaluation, allocation, heatmap_key),
            nli=nli.name if judged_now and nli is not None else None,
        )
    elif judged_now and nli is not None and signals.reference_entailment is not None:
        new_evidence = LMEvidence.judged(round_.round_id, nli.name, signals.reference_entailment)
    return EvaluatedRound(
        round_,
        evaluation,
        allocation,
        emb,
        sim,
        heatmap_png,
        narrative,
        kind,
        checks.polarity_checks,
        usage,
        timings,
        checks.reference_checks,
        checks.factual_checks,
        skipped,
        canary_result,
        checks.arbitration,
        new_evidence or reused,
        reused is not None,
        verified,
    )


@dataclass(frozen=True)
class LMHandle:
    """What a round needs from the LM edge: a client and the LM settings."""

    client: ChatClient
    config: LMConfig
