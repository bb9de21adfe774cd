"""One round: edge (embedding model) -> pure core -> artefacts ready to persist.

``run_round`` is what replay (and later the daemon) calls per round. It holds
no I/O beyond the injected embedder; persisting is the caller's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from consensus.embed import Embedder, Embeddings
from consensus.pipeline import evaluate
from consensus.similarity import cosine_matrix
from consensus.types import Evaluation, Polarity, Reason, Round
from emissions.allocate import Allocation, allocate
from narrative.heatmap import render_heatmap
from narrative.template import template_narrative
from storage import keys
from validator import __version__
from validator.settings import Settings

SCHEMA = "consensus-validator/evaluation/1"


@dataclass(frozen=True)
class PolarityCheck:
    index: int
    label: str
    score: int
    expected: float | None
    fallback: bool


@dataclass(frozen=True)
class RoundOutcome:
    round: Round
    evaluation: Evaluation
    allocation: Allocation
    embeddings: Embeddings
    sim: np.ndarray
    heatmap_png: bytes | None
    narrative: str
    narrative_kind: str
    polarity_checks: tuple[PolarityCheck, ...] = ()
    lm_usage: dict | None = None
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    reference_checks: tuple["ReferenceCheck", ...] = ()
    selectit_confidences: dict[int, float] = field(default_factory=dict)  # index -> confidence given by SelectIT


@dataclass(frozen=True)
class ReferenceCheck:
    index: int
    quality: int | None  # the judge's 1..5; None when it gave no valid verdict
    score: float | None  # (quality - 1) / 4
    error: str | None


def _judge_references(round_: Round, evaluation: Evaluation, lm: "LMHandle", settings: Settings
                      ) -> tuple[ReferenceCheck, ...]:
    """Every answer that can earn, judged against the round's reference, concurrently."""
    from concurrent.futures import ThreadPoolExecutor

    from judge.llmaaj import judge_against_reference

    # failed, empty and copied answers score 0 whatever a judge says
    todo = [r.index for r in evaluation.results if r.reason not in (Reason.ERROR, Reason.EMPTY, Reason.COPY)]

    def one(i: int) -> ReferenceCheck:
        res = judge_against_reference(lm.client, round_.prompt, round_.reference or "", round_.responses[i].text,
                                      retries=lm.config.retries)
        return ReferenceCheck(i, res.quality, res.normalised, res.error)

    if not todo:
        return ()
    with ThreadPoolExecutor(max_workers=min(settings.lm.workers, len(todo))) as pool:
        return tuple(pool.map(one, todo))


def _selectit_confidences(round_: Round, lm: "LMHandle", settings: Settings) -> tuple[Round, dict[int, float]]:
    """The round with SelectIT confidences for answers that carry none (the record keeps the input as sent)."""
    import dataclasses

    from judge.selectit import SelectitConfig, selectit_confidences

    todo = [i for i, r in enumerate(round_.responses) if r.confidence is None and r.error is None and r.text.strip()]
    if not todo:
        return round_, {}
    values = selectit_confidences(lm.client, SelectitConfig(), [(round_.prompt, round_.responses[i].text)
                                                                for i in todo])
    given = dict(zip(todo, values))
    responses = tuple(dataclasses.replace(r, confidence=given[i]) if i in given else r
                      for i, r in enumerate(round_.responses))
    return dataclasses.replace(round_, responses=responses), given


def run_round(round_: Round, embedder: Embedder, settings: Settings,
              polarity: Mapping[int, Polarity] | None = None, lm: "LMHandle | None" = None,
              embeddings: Embeddings | None = None) -> RoundOutcome:
    """Evaluate one round; with ``lm``, classify polarity and write the narrative with the LM.

    ``embeddings`` (stored ones, same model) skip the embedding stage in replay.

    Polarity is checked for the responses in the dominant cluster of a first
    pass (the only ones whose agreement it can change), concurrently; the
    round is then evaluated again with the labels.
    """
    timings: dict[str, float] = {}
    clock = time.perf_counter
    t = clock()
    confidence_from: dict[int, float] = {}
    if lm is not None and settings.lm.selectit_confidence:
        round_, confidence_from = _selectit_confidences(round_, lm, settings)
        timings["selectit"] = clock() - t
        t = clock()
    emb = embeddings if embeddings is not None else \
        embedder.embed([r.text if r.error is None else "" for r in round_.responses])
    timings["embed"] = clock() - t
    t = clock()
    sim = cosine_matrix(emb.vectors)
    evaluation = evaluate(round_, emb.vectors, settings.consensus, polarity=polarity, sim=sim)
    timings["consensus"] = clock() - t
    t = clock()
    checks: tuple[PolarityCheck, ...] = ()
    usage_before = lm.client.meter.snapshot() if lm is not None and hasattr(lm.client, "meter") else None
    labels = polarity
    leaning: dict[int, float] | None = None
    if lm is not None and polarity is None and settings.lm.polarity and settings.consensus.polarity_clustering \
            and evaluation.members:
        from lm.polarity import classify_many

        todo = [(i, round_.responses[i].text) for i in evaluation.members]
        outcomes = classify_many(lm.client, round_.prompt, todo, lm.config, workers=settings.lm.workers)
        # an LM failure (fallback 5) is no label at all: it must not count against the answer
        labels = {i: label for i, (label, res) in outcomes.items() if not res.fallback}
        leaning = {i: float(res.expected if res.expected is not None else res.score)
                   for i, (_, res) in outcomes.items() if not res.fallback}
        checks = tuple(PolarityCheck(i, label.value, res.score, res.expected, res.fallback)
                       for i, (label, res) in sorted(outcomes.items()))
    timings["polarity"] = clock() - t
    t = clock()
    judged: tuple[ReferenceCheck, ...] = ()
    if lm is not None and settings.lm.reference_judging and round_.reference:
        judged = _judge_references(round_, evaluation, lm, settings)
        timings["reference"] = clock() - t
        t = clock()
    if labels is not polarity or judged:
        scores = {j.index: j.score for j in judged if j.score is not None}
        evaluation = evaluate(round_, emb.vectors, settings.consensus, polarity=labels, sim=sim,
                              reference_scores=scores or None, polarity_leaning=leaning)
        timings["consensus"] += clock() - t
        t = clock()
    allocation = allocate(round_, evaluation, settings.emissions)
    timings["emissions"] = clock() - t
    t = clock()
    heatmap_png = None
    heatmap_key = None
    if settings.consensus.heatmap:
        heatmap_key = keys.heatmap(round_.round_id)
        heatmap_png = render_heatmap(
            sim, [r.miner for r in round_.responses], list(evaluation.members),
            [r.cluster for r in evaluation.results], f"round {round_.round_id}",
            reasons=[r.reason.value for r in evaluation.results])
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
    return RoundOutcome(round_, evaluation, allocation, emb, sim, heatmap_png, narrative, kind, checks, usage, timings,
                        judged, confidence_from)


@dataclass(frozen=True)
class LMHandle:
    """What a round needs from the LM edge: a client and the LM settings."""

    client: object
    config: object


def _f(x: float) -> float:
    """Floats as stored: plain Python floats (numpy scalars would not serialise)."""
    return float(x)


def build_record(outcome: RoundOutcome, settings: Settings, embedder: Embedder) -> dict:
    """The evaluation record: every number, its parts, the reasons and what produced them."""
    r, ev, al, emb = outcome.round, outcome.evaluation, outcome.allocation, outcome.embeddings
    c = ev.consensus
    responses = []
    for res, resp in zip(ev.results, r.responses):
        i = res.index
        s = res.score
        responses.append({
            "index": i,
            "miner": res.miner,
            "in_consensus": res.in_consensus,
            "reason": res.reason.value,
            "detail": res.detail,
            "cluster": res.cluster,
            "copy_of": res.copy_of,
            "polarity": None if res.polarity is None else res.polarity.value,
            "words": res.words,
            "tokens": int(emb.tokens[i]),
            "tokens_embedded": int(emb.embedded[i]),
            "windows": int(emb.windows[i]),
            "latency_s": _f(resp.latency_s),
            "confidence": None if resp.confidence is None else _f(resp.confidence),
            "confidence_source": None if resp.confidence is None else
            ("selectit" if i in outcome.selectit_confidences else "miner"),
            "error": resp.error,
            "score": {
                "composite": _f(s.composite), "alignment": _f(s.alignment), "quality": _f(s.quality),
                "confidence": _f(s.confidence), "bonus": _f(s.bonus), "penalty": _f(s.penalty),
                "reference": None if s.reference is None else _f(s.reference),
                "weights": {"alignment": _f(s.weights[0]), "quality": _f(s.weights[1]),
                            "confidence": _f(s.weights[2]), "bonus": _f(s.weights[3])},
            },
            "emissions": {
                "eligible": al.eligible[i], "amount": al.amounts[i], "share": _f(al.shares[i]),
                "speed": _f(al.speed[i]), "cluster": _f(al.cluster[i]), "top": _f(al.top[i]),
                "weight": _f(al.weights[i]),
            },
        })
    return {
        "schema": SCHEMA,
        "round_id": r.round_id,
        "prompt": r.prompt,
        "reference": r.reference,
        "producer": {"package": "consensus-validator", "version": __version__},
        "embedding": {"model": embedder.name, "checksum_sha256": embedder.checksum,
                      "runtime": getattr(embedder, "runtime", "unknown"),
                      "max_seq_length": getattr(embedder, "max_seq_length", None),
                      "long_texts": embedder.long_texts.describe() if hasattr(embedder, "long_texts") else None},
        "config": settings.as_dict(),
        "consensus": {
            "score": _f(c.score), "mean": _f(c.mean), "std": _f(c.std), "pairs": c.pairs, "reached": c.reached,
            "threshold": _f(settings.consensus.consensus_threshold),
            "lambda": _f(settings.consensus.lambda_factor),
            "polarity_agreed": c.polarity_agreed,
            "majority_polarity": None if c.majority_polarity is None else c.majority_polarity.value,
            "note": c.note,
        },
        "filters": {"lof": ev.lof, "quality_threshold_words": _f(ev.quality_threshold_words)},
        "members": list(ev.members),
        "emissions": {"pool": al.pool, "pool_scale": _f(al.pool_scale), "total": sum(al.amounts),
                      "top_index": al.top_index, "top_diff": _f(al.top_diff)},
        "responses": responses,
        "heatmap": {"key": keys.heatmap(r.round_id) if outcome.heatmap_png is not None else None},
        "narrative": {"kind": outcome.narrative_kind, "text": outcome.narrative},
        "polarity_checks": [{"index": p.index, "label": p.label, "score": p.score, "expected": p.expected,
                             "fallback": p.fallback} for p in outcome.polarity_checks],
        "reference_checks": [{"index": j.index, "quality": j.quality, "score": j.score, "error": j.error}
                             for j in outcome.reference_checks],
        "notes": list(ev.notes),
    }
