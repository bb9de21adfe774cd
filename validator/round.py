"""One round: collect signals (edges) -> evaluate once (pure core) -> allocate -> render -> narrate.

``run_round`` is what replay, ``validator round`` and the daemon call per
round. It holds no I/O beyond the injected embedder and LM; persisting is the
caller's. The signals (reference similarity, polarity, factual agreement, the
judge, SelectIT) are gathered by ``validator.signals.collect_signals``; on a
canary round the answers are then judged against the known answer
(``validator.canaries``).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from consensus.embedder import Embedder, Embeddings
from consensus.pipeline import evaluate, plan_checks
from consensus.signals import Signals
from consensus.similarity import cosine_matrix
from consensus.text import model_text
from consensus.types import Evaluation, Polarity, Reason, Response, ResponseResult, Round
from emissions.allocate import Allocation, allocate
from narrative.template import template_narrative
from storage import keys
from validator import __version__
from validator import record as rec
from validator.canaries import RIGHT_AT, CanaryInput, CanaryResult, judge_canary
from validator.settings import Settings
from lm.arbitrate import ArbitrationCheck
from lm.factual import FactualCheck
from validator.artefacts import RoundEmbeddings
from validator.pipelining import round_texts
from validator.signals import (Collected, PolarityCheck, ReferenceCheck, SkippedCheck, collect_signals,
                               edge_sentences, edge_similarities, edge_vectors)

@dataclass(frozen=True)
class RoundOutcome:
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
    selectit_confidences: Mapping[int, float] = field(default_factory=dict)  # index -> confidence given by SelectIT
    factual_checks: tuple["FactualCheck", ...] = ()  # per checked member of the dominant cluster
    lm_skipped: tuple[SkippedCheck, ...] = ()  # LM checks not run (not a yes/no prompt, budget spent, ...)
    canary: CanaryResult | None = None  # set on canary rounds
    arbitration: ArbitrationCheck | None = None  # the LM's arbitration, when the factual check ran


def _judge_canary(round_: Round, evaluation: Evaluation, collected: Collected) -> CanaryResult:
    judged = {j.index: j.score for j in collected.reference_checks if j.score is not None}
    cos = collected.signals.reference_similarity or {}
    items = [CanaryInput(index=r.index, miner=r.miner, text=round_.responses[r.index].text,
                         usable=r.reason not in (Reason.ERROR, Reason.EMPTY, Reason.COPY),
                         embedding=None if r.index not in cos else max(0.0, min(1.0, cos[r.index])),
                         judge=judged.get(r.index))
             for r in evaluation.results]
    return judge_canary(round_.reference or "", items, evaluation.members)


def run_round(round_: Round, embedder: Embedder, settings: Settings,
              polarity: Mapping[int, Polarity] | None = None, lm: "LMHandle | None" = None,
              embeddings: Embeddings | None = None, *, canary: bool = False) -> RoundOutcome:
    """Evaluate one round: collect signals -> evaluate once -> allocate -> render -> narrate.

    ``embeddings`` (stored ones, same model) skip the embedding stage in replay.
    ``polarity`` (labels known beforehand, e.g. in tests) replaces the LM's.
    ``canary``: the round's reference is a known answer; judge every answer
    against it (``RoundOutcome.canary``).
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter
    t = clock()
    emb = embeddings if embeddings is not None else \
        embedder.embed(round_texts(round_, settings.consensus.normalise_text))
    sim = cosine_matrix(emb.vectors)
    normalise = settings.consensus.normalise_text
    edges = edge_vectors(embedder, model_text(round_.prompt, normalise),
                         model_text(round_.reference, normalise) if round_.reference else None,
                         getattr(emb, "edges", None))
    emb = RoundEmbeddings(emb.vectors, emb.windows, emb.tokens, emb.embedded, edges)
    ref_cos, prompt_cos = edge_similarities(emb.vectors, edges)
    sentences = edge_sentences(embedder, round_, settings.consensus)  # None unless coverage_semantic > 0
    timings["embed"] = clock() - t
    t = clock()
    usage_before = lm.client.meter.snapshot() if lm is not None and hasattr(lm.client, "meter") else None
    # the LM checks only the dominant cluster's answers (the only ones whose membership it can change)
    embedded = Signals(reference_similarity=ref_cos, prompt_similarity=prompt_cos)
    plan = plan_checks(round_, emb.vectors, settings.consensus, embedded, sim) if lm is not None else None
    timings["consensus"] = clock() - t
    # labels given beforehand replace the LM's: do not ask it
    asked = settings if polarity is None else \
        dataclasses.replace(settings, lm=dataclasses.replace(settings.lm, polarity=False))
    collected = Collected(embedded) if plan is None else \
        collect_signals(round_, sim, plan, asked, lm=lm, reference_cos=ref_cos, prompt_cos=prompt_cos)
    timings.update(collected.timings)
    signals = dataclasses.replace(collected.signals, sentence_vectors=sentences)
    if polarity is not None:
        signals = dataclasses.replace(signals, polarity=polarity, polarity_leaning=None)
    t = clock()
    evaluation = evaluate(round_, emb.vectors, settings.consensus, signals=signals, sim=sim)
    timings["consensus"] += clock() - t
    t = clock()
    allocation = allocate(round_, evaluation, settings.emissions)
    canary_result = _judge_canary(round_, evaluation, collected) if canary and round_.reference else None
    timings["emissions"] = clock() - t
    t = clock()
    heatmap_png = None
    heatmap_key = None
    if settings.consensus.heatmap:
        heatmap_key = keys.heatmap(round_.round_id)
        from narrative.heatmap import render_heatmap  # matplotlib loads here, not when a command starts

        heatmap_png = render_heatmap(
            sim, [r.miner for r in round_.responses], list(evaluation.members),
            [r.cluster for r in evaluation.results], round_.round_id,
            reasons=[r.reason.value for r in evaluation.results], reached=evaluation.consensus.reached)
    timings["heatmap"] = clock() - t
    t = clock()
    if lm is not None and settings.lm.narrative:
        from narrative.narrate import narrate

        told = narrate(lm.client, round_, evaluation, allocation.amounts, allocation.pool, heatmap_key)
        narrative, kind = told.text, told.kind
    else:
        narrative, kind = template_narrative(round_, evaluation, allocation.amounts, allocation.pool, heatmap_key), \
            "template"
    timings["narrative"] = clock() - t
    usage = None
    if usage_before is not None:
        after = lm.client.meter.snapshot()
        usage = {k: after[k] - usage_before[k] for k in after}
    return RoundOutcome(round_, evaluation, allocation, emb, sim, heatmap_png, narrative, kind,
                        collected.polarity_checks, usage, timings, collected.reference_checks,
                        dict(collected.selectit_confidences), collected.factual_checks, collected.skipped,
                        canary_result, collected.arbitration)


@dataclass(frozen=True)
class LMHandle:
    """What a round needs from the LM edge: a client and the LM settings."""

    client: object
    config: object


def _opt(x: float | None) -> float | None:
    """Floats as stored: plain Python floats (numpy scalars would not serialise)."""
    return None if x is None else float(x)


def _response_record(outcome: RoundOutcome, res: ResponseResult, resp: Response) -> rec.ResponseRecord:
    i, s = res.index, res.score
    al, emb = outcome.allocation, outcome.embeddings
    # the record keeps the confidence the score used: the miner's, else the one SelectIT gave
    given = outcome.selectit_confidences.get(i)
    confidence = resp.confidence if resp.confidence is not None else given
    return rec.ResponseRecord(
        index=res.index, miner=res.miner, in_consensus=bool(res.in_consensus), reason=res.reason.value,
        detail=res.detail, cluster=res.cluster, copy_of=res.copy_of,
        polarity=None if res.polarity is None else res.polarity.value, words=int(res.words),
        tokens=int(emb.tokens[i]), tokens_embedded=int(emb.embedded[i]), windows=int(emb.windows[i]),
        latency_s=float(resp.latency_s), confidence=_opt(confidence),
        confidence_source=None if confidence is None else ("selectit" if resp.confidence is None else "miner"),
        error=resp.error,
        score=rec.ScoreRecord(
            composite=float(s.composite), alignment=float(s.alignment), quality=float(s.quality),
            confidence=float(s.confidence), bonus=float(s.bonus), penalty=float(s.penalty),
            reference=_opt(s.reference),
            weights=rec.Weights(alignment=float(s.weights[0]), quality=float(s.weights[1]),
                                confidence=float(s.weights[2]), bonus=float(s.weights[3]))),
        emissions=rec.EmissionRecord(
            eligible=bool(al.eligible[i]), amount=int(al.amounts[i]), share=float(al.shares[i]),
            speed=float(al.speed[i]), cluster=float(al.cluster[i]), top=float(al.top[i]),
            weight=float(al.weights[i])))


def _canary_record(result: CanaryResult | None) -> rec.CanaryRecord | None:
    if result is None:
        return None
    return rec.CanaryRecord(
        canary=True, right_at=RIGHT_AT, consensus_accuracy=_opt(result.consensus_accuracy),
        consensus_right=result.consensus_right,
        answers=tuple(rec.CanaryAnswerRecord(index=a.index, miner=a.miner, accuracy=float(a.accuracy),
                                             embedding=_opt(a.embedding), judge=_opt(a.judge), stance=a.stance,
                                             right=a.right, note=a.note) for a in result.answers))


def build_record(outcome: RoundOutcome, settings: Settings, embedder: Embedder) -> rec.RoundRecord:
    """The evaluation record (``validator.record``): every number, its parts, the reasons and what produced them."""
    r, ev, al = outcome.round, outcome.evaluation, outcome.allocation
    c = ev.consensus
    policy = getattr(embedder, "long_texts", None)
    return rec.RoundRecord(
        round_id=r.round_id, prompt=r.prompt, reference=r.reference,
        producer=rec.Producer(package="consensus-validator", version=__version__),
        embedding=rec.EmbeddingInfo(model=embedder.name, checksum_sha256=embedder.checksum,
                                    runtime=getattr(embedder, "runtime", "unknown"),
                                    max_seq_length=getattr(embedder, "max_seq_length", None),
                                    long_texts=policy.describe() if policy is not None else None),
        config=settings.as_dict(),
        consensus=rec.ConsensusRecord(
            score=float(c.score), mean=float(c.mean), std=float(c.std), pairs=int(c.pairs), reached=bool(c.reached),
            threshold=float(settings.consensus.consensus_threshold), lambda_=float(settings.consensus.lambda_factor),
            polarity_agreed=c.polarity_agreed,
            majority_polarity=None if c.majority_polarity is None else c.majority_polarity.value, note=c.note),
        filters=rec.Filters(lof=ev.lof, quality_threshold_words=float(ev.quality_threshold_words)),
        members=tuple(int(m) for m in ev.members),
        emissions=rec.EmissionsSummary(pool=int(al.pool), pool_scale=float(al.pool_scale), total=int(sum(al.amounts)),
                                       top_index=al.top_index, top_diff=float(al.top_diff)),
        responses=tuple(_response_record(outcome, res, resp) for res, resp in zip(ev.results, r.responses)),
        heatmap=rec.HeatmapInfo(key=keys.heatmap(r.round_id) if outcome.heatmap_png is not None else None),
        narrative=rec.Narrative(kind=outcome.narrative_kind, text=outcome.narrative),
        polarity_checks=tuple(rec.PolarityCheckRecord(index=p.index, label=p.label, score=p.score,
                                                      expected=_opt(p.expected), fallback=p.fallback)
                              for p in outcome.polarity_checks),
        reference_checks=tuple(rec.ReferenceCheckRecord(index=j.index, quality=j.quality, score=_opt(j.score),
                                                        error=j.error) for j in outcome.reference_checks),
        notes=tuple(ev.notes),
        canary=_canary_record(outcome.canary),
        factual_checks=tuple(rec.FactualCheckRecord(index=c.index, anchors=tuple(c.anchors), agreement=_opt(c.agreement),
                                                    score=c.score, skipped=c.skipped)
                             for c in outcome.factual_checks) or None,
        lm_skipped=tuple(rec.SkippedCheckRecord(stage=k.stage, index=k.index, reason=k.reason)
                         for k in outcome.lm_skipped) or None,
        arbitration=_arbitration_record(outcome.arbitration))


def _arbitration_record(check: ArbitrationCheck | None) -> rec.ArbitrationRecord | None:
    if check is None:
        return None
    return rec.ArbitrationRecord(
        question=check.question, answer=check.answer, confidence=_opt(check.confidence), groups=int(check.groups),
        agrees=tuple(i for i, ok in sorted(check.agrees.items()) if ok),
        disagrees=tuple(i for i, ok in sorted(check.agrees.items()) if not ok), from_text=tuple(check.from_text),
        skipped=check.skipped)
