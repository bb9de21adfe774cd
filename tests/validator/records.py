"""Hand-made evaluation records (``validator.records.evaluation_record``) for unit tests of the record's readers."""

from __future__ import annotations

from collections.abc import Sequence

from validator.records import evaluation_record as rec
from validator.records.recorded_config import RecordedConfig


def response(
    index: int,
    miner: str,
    *,
    in_consensus: bool = True,
    amount: int = 0,
    composite: float = 50.0,
    error: str | None = None,
) -> rec.ResponseRecord:
    """One evaluated response: every part present, the numbers given, the rest plain."""
    return rec.ResponseRecord(
        index=index,
        miner=miner,
        in_consensus=in_consensus,
        reason="in_consensus" if in_consensus else "outlier",
        detail="",
        cluster=0 if in_consensus else -1,
        copy_of=None,
        polarity=None,
        words=5,
        tokens=7,
        tokens_embedded=7,
        windows=1,
        latency_s=1.0 + index,
        confidence=None,
        confidence_source=None,
        error=error,
        score=rec.ScoreRecord(
            composite=composite,
            alignment=0.5,
            quality=0.5,
            confidence=0.5,
            bonus=1.0,
            penalty=0.0,
            reference=None,
            weights=rec.WeightsRecord(alignment=0.5, quality=0.2, confidence=0.2, bonus=0.1),
        ),
        emissions=rec.EmissionRecord(
            eligible=amount > 0, amount=amount, share=0.0, speed=1.0, cluster=1.0, top=1.0, weight=1.0
        ),
    )


def make_record(
    round_id: str,
    rows: Sequence[tuple[str, bool, int]],
    score: float = 0.8,
    *,
    pool: int = 1000,
    status: str | None = None,
    sequence: int | None = None,
    canary: rec.CanaryRecord | None = None,
) -> rec.RoundRecord:
    """An evaluated round's record; ``rows`` are (miner, in consensus, amount paid)."""
    responses = tuple(response(i, m, in_consensus=inside, amount=a) for i, (m, inside, a) in enumerate(rows))
    return rec.RoundRecord(
        round_id=round_id,
        prompt="Q?",
        reference=None,
        producer=rec.Producer(package="consensus-validator", version="test"),
        embedding=rec.EmbeddingInfo(
            model="fake", checksum_sha256="0" * 64, runtime="fake", max_seq_length=None, long_texts=None
        ),
        config=RecordedConfig.__from_plain__({"daemon": {"moving_average_alpha": 0.1}}, "config"),
        consensus=rec.ConsensusRecord(
            score=score,
            mean=score,
            std=0.0,
            pairs=1,
            reached=score >= 0.7,
            threshold=0.7,
            lambda_=1.0,
            polarity_agreed=None,
            majority_polarity=None,
            note="",
        ),
        filters=rec.FiltersRecord(lof="disabled", quality_threshold_words=3.0),
        members=tuple(i for i, (_, inside, _) in enumerate(rows) if inside),
        emissions=rec.EmissionsSummary(
            pool=pool, pool_scale=1.0, total=sum(a for _, _, a in rows), top_index=None, top_diff=0.0
        ),
        responses=responses,
        heatmap=rec.HeatmapInfo(key=None),
        narrative=rec.NarrativeRecord(kind="template", text=""),
        polarity_checks=(),
        reference_checks=(),
        notes=(),
        status=status,
        canary=canary,
        daemon=None if sequence is None else rec.DaemonMarker(sequence=sequence, started_at=f"t{sequence}"),
    )
