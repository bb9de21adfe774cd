"""One round's evaluation, whoever drives it: the stored round in, its evaluation record out.

``evaluate_stored`` is the unit of work the daemon, ``validator round``, file and
store replay, what-if and both replay engines share: a stored ``Round``
(``consensus.types``, with its failures and the daemon's marker: ``validator.records.stored_round``) and the settings give the round's record
(``validator.records.evaluation_record.RoundRecord``) and, unless the round was below quorum, the
``EvaluatedRound`` (``validator.round.stages.run_stages``) its artefacts are
written from (``validator.records.writer.RoundWriter``). The
two record builders live here: ``build_record`` for an evaluated round,
``no_quorum_record`` for a round below ``daemon.quorum`` (nobody paid).

A rounds file's first evaluation (``quorum=False``) is the one exception to
the quorum: ``validator replay FILE`` evaluates every round as given and its
records carry no ``status`` (they never have).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from consensus.arbitration import ArbitrationCheck
from consensus.embedder import Embedder, Embeddings
from consensus.extensions import NONE, Extensions
from consensus.types import Response, ResponseResult, Round
from storage import keys
from validator import __version__
from validator.records import evaluation_record as rec
from validator.records.recorded_config import RecordedConfig
from validator.round.canaries import RIGHT_AT, CanaryResult
from validator.round.stages import EvaluatedRound, run_stages
from validator.round.task_verification import task_record
from validator.settings import Settings

if TYPE_CHECKING:
    from judge.nli import Judge
    from validator.records.lm_evidence import LMEvidence
    from validator.round.stages import LMHandle


def evaluate_stored(
    stored: Round,
    settings: Settings,
    embedder: Embedder,
    *,
    lm: LMHandle | None = None,
    embeddings: Embeddings | None = None,
    quorum: bool = True,
    defer_narrative: bool = False,
    evidence: LMEvidence | None = None,
    extensions: Extensions = NONE,
    nli: Judge | None = None,
) -> tuple[rec.RoundRecord, EvaluatedRound | None]:
    """Evaluate one round as stored (``Round``, its failures and marker): its record and what the evaluation decided (``EvaluatedRound``); below
    ``daemon.quorum`` a no-quorum record and None (nothing was evaluated).

    ``embeddings``: vectors of the round's texts computed beforehand (stored ones, or embedded
    ahead on another thread), the same as the embedder would give. ``quorum=False``: a rounds
    file's first evaluation (module docstring). ``defer_narrative``: the record carries the template
    narrative and the caller runs the narrative step (``validator.round.narration.narrate_round``, the same one
    ``run_stages`` calls) after committing it (``validator.daemon.daemon``); the stored config still says what ran. ``evidence``: the LM's stored answers for this round, used instead of
    the LM when ``lm`` is None (``validator.records.lm_evidence``). The identity links stored with the round
    steered the draw and are shown; they never enter the evaluation (``consensus.identity``). The evaluation itself (plan, signals,
    the one pass of ``consensus.pipeline.decide``) is ``validator.round.stages.run_stages``. ``extensions``: rules
    from outside the product (``consensus.extensions``; the benchmarks' lab), none by default. ``nli``: the NLI judge
    (``judge.nli``; the App's), asked with a reference unless stored ``evidence`` is read instead.
    """
    round_ = stored
    if quorum:
        usable = sum(1 for r in round_.responses if r.error is None)
        if usable < settings.daemon.quorum:
            return no_quorum_record(stored, settings, usable), None
    run_settings = settings
    if defer_narrative and lm is not None and settings.lm.narrative:
        run_settings = dataclasses.replace(settings, lm=dataclasses.replace(settings.lm, narrative=False))
    outcome = run_stages(
        round_,
        embedder,
        run_settings,
        lm=lm,
        embeddings=embeddings,
        canary=stored.canary,
        evidence=evidence,
        extensions=extensions,
        task=stored.task,
        nli=nli,
    )
    record = build_record(outcome, settings, embedder)
    if quorum:
        details = stored.failures
        responses = tuple(dataclasses.replace(r, detail=details.get(r.miner, r.detail)) for r in record.responses)
        record = dataclasses.replace(record, status="ok", responses=responses)
    return record, outcome


def _producer() -> rec.Producer:
    return rec.Producer(package="consensus-validator", version=__version__)


def no_quorum_record(stored: Round, settings: Settings, usable: int) -> rec.RoundRecord:
    """A round below quorum: every answer listed, no evaluation, nobody paid."""
    round_, details = stored, stored.failures
    responses = tuple(
        rec.ResponseRecord(
            index=i,
            miner=r.miner,
            in_consensus=False,
            reason=rec.NO_QUORUM,
            detail=details.get(r.miner),
            error=r.error,
            latency_s=float(r.latency_s),
            confidence=r.confidence,
            words=len(r.text.split()),
            score=rec.ScoreRecord(composite=0.0),
            emissions=rec.EmissionRecord(eligible=False, amount=0, share=0.0),
        )
        for i, r in enumerate(round_.responses)
    )
    return rec.RoundRecord(
        status=rec.NO_QUORUM,
        round_id=round_.round_id,
        prompt=round_.prompt,
        reference=round_.reference,
        producer=_producer(),
        config=RecordedConfig.of(settings),
        consensus=rec.ConsensusRecord(
            score=None,
            reached=False,
            note=f"no quorum: {usable} usable answer(s), the quorum is {settings.daemon.quorum}",
        ),
        members=(),
        emissions=rec.EmissionsSummary(pool=0, total=0),
        responses=responses,
        heatmap=rec.HeatmapInfo(key=None),
        narrative=rec.NarrativeRecord(kind="none", text=""),
        notes=(),
    )


R = TypeVar("R")


@functools.cache
def _casts(cls: type) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """Per record part, once: each field and the plain type its value is stored as (None: kept as it is)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        inner = [a for a in typing.get_args(tp) if a is not type(None)] if type(None) in typing.get_args(tp) else [tp]
        base = inner[0] if len(inner) == 1 else None
        cast = base if base in (float, int, bool) else tuple if typing.get_origin(base) is tuple else None
        out.append((f.name, cast))
    return tuple(out)


def part_of(cls: type[R], source: Any, **given: Any) -> R:
    """The record part ``cls`` from the attributes of the same names of ``source`` (a value of the pure core),
    each stored as its field declares it: ``float``, ``int``, ``bool`` and tuples as plain Python values (numpy
    scalars would not serialise), ``None`` kept. ``given``: the fields that ``source`` has not, or has otherwise."""
    values = dict(given)
    for name, cast in _casts(cls):
        if name not in values:
            value = getattr(source, name)
            values[name] = value if value is None or cast is None else cast(value)
    return cls(**values)


def _opt(x: float | None) -> float | None:
    """Floats as stored: plain Python floats (numpy scalars would not serialise)."""
    return None if x is None else float(x)


def _response_record(outcome: EvaluatedRound, res: ResponseResult, resp: Response) -> rec.ResponseRecord:
    i, s = res.index, res.score
    al, emb = outcome.allocation, outcome.embeddings
    confidence = resp.confidence  # the confidence the score used: the miner's
    return rec.ResponseRecord(
        index=res.index,
        miner=res.miner,
        in_consensus=bool(res.in_consensus),
        reason=res.reason.value,
        detail=res.detail,
        cluster=res.cluster,
        copy_of=res.copy_of,
        polarity=None if res.polarity is None else res.polarity.value,
        words=int(res.words),
        tokens=int(emb.tokens[i]),
        tokens_embedded=int(emb.embedded[i]),
        windows=int(emb.windows[i]),
        latency_s=float(resp.latency_s),
        confidence=_opt(confidence),
        confidence_source=None if confidence is None else "miner",
        error=resp.error,
        score=part_of(
            rec.ScoreRecord,
            s,
            weights=rec.WeightsRecord(
                **{f.name: float(w) for f, w in zip(dataclasses.fields(rec.WeightsRecord), s.weights)}
            ),
        ),
        emissions=rec.EmissionRecord(
            eligible=bool(al.eligible[i]),
            amount=int(al.amounts[i]),
            share=float(al.shares[i]),
            speed=float(al.speed[i]),
            cluster=float(al.cluster[i]),
            top=float(al.top[i]),
            weight=float(al.weights[i]),
        ),
    )


def _canary_record(result: CanaryResult | None) -> rec.CanaryRecord | None:
    if result is None:
        return None
    answers = tuple(part_of(rec.CanaryAnswerRecord, a) for a in result.answers)
    return part_of(rec.CanaryRecord, result, canary=True, right_at=RIGHT_AT, answers=answers)


def build_record(outcome: EvaluatedRound, settings: Settings, embedder: Embedder) -> rec.RoundRecord:
    """The evaluation record (``validator.records.evaluation_record``): every number, its parts, the reasons and what produced them."""
    r, ev, al = outcome.round, outcome.evaluation, outcome.allocation
    c = ev.consensus
    policy = getattr(embedder, "long_texts", None)
    return rec.RoundRecord(
        round_id=r.round_id,
        prompt=r.prompt,
        reference=r.reference,
        producer=_producer(),
        embedding=rec.EmbeddingInfo(
            model=embedder.name,
            checksum_sha256=embedder.checksum,
            runtime=getattr(embedder, "runtime", "unknown"),
            max_seq_length=getattr(embedder, "max_seq_length", None),
            long_texts=policy.describe() if policy is not None else None,
        ),
        config=RecordedConfig.of(settings),
        consensus=part_of(
            rec.ConsensusRecord,
            c,
            threshold=float(settings.consensus.clusters.consensus_threshold),
            lambda_=float(settings.consensus.clusters.lambda_factor),
            majority_polarity=None if c.majority_polarity is None else c.majority_polarity.value,
        ),
        filters=rec.FiltersRecord(lof=ev.lof, quality_threshold_words=float(ev.quality_threshold_words)),
        members=tuple(int(m) for m in ev.members),
        emissions=rec.EmissionsSummary(
            pool=int(al.pool),
            pool_scale=float(al.pool_scale),
            total=int(sum(al.amounts)),
            top_index=al.top_index,
            top_diff=float(al.top_diff),
        ),
        responses=tuple(_response_record(outcome, res, resp) for res, resp in zip(ev.results, r.responses)),
        heatmap=rec.HeatmapInfo(key=keys.heatmap(r.round_id) if outcome.heatmap_png is not None else None),
        narrative=rec.NarrativeRecord(kind=outcome.narrative_kind, text=outcome.narrative),
        polarity_checks=tuple(part_of(rec.PolarityCheckRecord, p) for p in outcome.polarity_checks),
        reference_checks=tuple(part_of(rec.ReferenceCheckRecord, j) for j in outcome.reference_checks),
        notes=tuple(ev.notes),
        canary=_canary_record(outcome.canary),
        factual_checks=tuple(part_of(rec.FactualCheckRecord, c) for c in outcome.factual_checks) or None,
        lm_skipped=tuple(part_of(rec.SkippedCheckRecord, k) for k in outcome.lm_skipped) or None,
        arbitration=_arbitration_record(outcome.arbitration),
        close_pairs=tuple(part_of(rec.ClosePairRecord, p) for p in ev.close_pairs) or None,
        comparable=tuple(ev.comparable) if settings.consensus.identity.identity_persistence else None,
        task=None if outcome.task is None else task_record(outcome.task, ev),
    )


def _arbitration_record(check: ArbitrationCheck | None) -> rec.ArbitrationRecord | None:
    if check is None:
        return None
    verdicts = sorted(check.agrees.items())
    agrees, disagrees = tuple(i for i, ok in verdicts if ok), tuple(i for i, ok in verdicts if not ok)
    return part_of(rec.ArbitrationRecord, check, agrees=agrees, disagrees=disagrees)
