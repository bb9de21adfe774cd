"""Per-round views of stored evaluation records: ``RoundRow`` (with its ``ResponseRow``s) and ``RoundReview``.

``parse_record`` turns one typed record (``validator.records.evaluation_record.RoundRecord``) into
the ``RoundRow`` the index, the round pages and the notebooks show; every
display string goes through ``printable``. ``RoundReview`` adds what
``load_round`` reads beside the record: the answers' texts and the heatmap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from emissions.ticks import TickPart
from validator.records.evaluation_record import (
    CanaryRecord,
    ClosePairRecord,
    FactualCheckRecord,
    ResponseRecord,
    RoundRecord,
    TaskRecord,
)
from validator.records.ledger_entries import tick_part
from validator.review.display import PNG, Table, display_text, printable

__all__ = ["ResponseRow", "RoundReview", "RoundRow", "parse_record"]


@dataclass(frozen=True)
class ResponseRow:
    """One response of a round: its score and parts (0..1, composite 0..100), in/out and reason, pay."""

    index: int
    miner: str
    in_consensus: bool
    reason: str
    detail: str | None
    error: str | None
    latency_s: float | None
    confidence: float | None  # as reported by the miner (or estimated)
    composite: float | None
    alignment: float | None
    quality: float | None
    score_confidence: float | None
    bonus: float | None
    penalty: float | None
    reference: float | None
    emission: int
    share: float | None
    yes_no: str | None = None  # the LM's reading of the answer to a yes/no prompt: "yes", "no", "unclear"
    factual: str | None = None  # the factual check's verdict in words (dominant-cluster members, LM on)


YES_NO = {"affirmative": "yes", "negative": "no", "unclear": "unclear"}


@dataclass(frozen=True)
class RoundRow:
    """One evaluated round as the index shows it; ``order`` is its 1-based place in the store's order."""

    round_id: str
    order: int
    sequence: int | None  # daemon rounds only
    started_at: str | None  # daemon rounds only (file replays carry no time)
    prompt: str
    reference: str | None
    status: str  # "ok", "no_quorum" or "replay" (a file replay's record has no status)
    score: float | None
    threshold: float | None
    reached: bool
    note: str
    pool: int
    emitted: int
    responses: tuple[ResponseRow, ...]
    narrative_kind: str
    narrative: str
    has_heatmap: bool
    replays: tuple[str, ...] = ()  # ids of re-evaluations stored beside the record
    canary: CanaryRecord | None = None  # a canary round's judgement against its known answer
    nominal_pool: int | None = None  # emissions.pool_units of the config that ran (pool = nominal x consensus scale)
    majority_yes_no: str | None = None  # the yes/no answers' majority ("yes", "no"), when the prompt was yes/no
    yes_no_agreed: bool | None = None  # did the yes/no answers agree (None: not a yes/no round)
    close_pairs: tuple[ClosePairRecord, ...] = ()  # miners far more alike than the round (the ledger's pairs)
    comparable: tuple[str, ...] | None = None  # miners whose answers could be compared (None: all that answered)
    forgotten: tuple[str, ...] = ()  # hotkeys the daemon dropped from its ledger before the round
    tick: TickPart | None = (
        None  # the tick and committee the round was (validator.daemon.committee_draw); None: before them
    )
    task: TaskRecord | None = None  # a task round: the task and every answer's verdict (docs/daemon.md "Tasks")

    @property
    def miners(self) -> int:
        return len(self.responses)

    @property
    def failures(self) -> int:
        return sum(1 for r in self.responses if r.error is not None)

    @property
    def failure_kinds(self) -> dict[str, int]:
        kinds: dict[str, int] = {}
        for r in self.responses:
            if r.error is not None:
                kinds[r.error] = kinds.get(r.error, 0) + 1
        return dict(sorted(kinds.items()))


@dataclass(frozen=True)
class RoundReview:
    """One round in full: the view, the answers' texts (by response index), the heatmap, the typed record."""

    round: RoundRow
    texts: tuple[str | None, ...]
    heatmap_png: PNG | None
    record: RoundRecord = field(repr=False)

    @property
    def narrative(self) -> str:
        return self.round.narrative

    def heatmap(self) -> PNG | None:
        return self.heatmap_png

    def answers(self) -> Table:
        """Each answer's text (``None`` when the store lacks it) with its miner and reason."""
        rows = tuple(
            (r.index, r.miner, r.reason, r.error, self.texts[r.index] if r.index < len(self.texts) else None)
            for r in self.round.responses
        )
        return Table(("index", "miner", "reason", "error", "text"), rows, title=f"answers of {self.round.round_id}")

    def scores(self) -> Table:
        cols = (
            "index",
            "miner",
            "composite",
            "alignment",
            "quality",
            "confidence",
            "bonus",
            "penalty",
            "in_consensus",
            "reason",
            "yes_no",
            "factual",
            "error",
            "emission",
            "latency_s",
        )
        rows = tuple(
            (
                r.index,
                r.miner,
                r.composite,
                r.alignment,
                r.quality,
                r.score_confidence,
                r.bonus,
                r.penalty,
                r.in_consensus,
                r.reason,
                r.yes_no,
                r.factual,
                r.error,
                r.emission,
                r.latency_s,
            )
            for r in self.round.responses
        )
        return Table(cols, rows, title=f"round {self.round.round_id}")


def _factual_verdict(check: FactualCheckRecord) -> str:
    """One member's factual check in words (``lm.factual``: how many of the other checked members agree)."""
    if check.skipped:
        return f"not checked: {printable(check.skipped)}"
    if check.agreement is None:
        return "no short answer"
    agree = len(check.anchors)
    others = round(agree / check.agreement) if check.agreement > 0 else None
    if agree == 0:
        return "no other checked member agrees"
    return f"{agree} of {others} other checked members agree" if others else f"{agree} other checked members agree"


def _response_row(r: ResponseRecord, factual: FactualCheckRecord | None = None) -> ResponseRow:
    sc = r.score
    return ResponseRow(
        index=r.index,
        miner=r.miner,
        in_consensus=r.in_consensus,
        reason=printable(r.reason),
        detail=display_text(r.detail),
        error=display_text(r.error),
        latency_s=r.latency_s,
        confidence=r.confidence,
        composite=sc.composite,
        alignment=sc.alignment,
        quality=sc.quality,
        score_confidence=sc.confidence,
        bonus=sc.bonus,
        penalty=sc.penalty,
        reference=sc.reference,
        emission=r.emissions.amount,
        share=r.emissions.share,
        yes_no=None if r.polarity is None else YES_NO.get(r.polarity, printable(r.polarity)),
        factual=None if factual is None else _factual_verdict(factual),
    )


def parse_record(
    record: RoundRecord | Any, *, order: int = 0, replays: Sequence[str] = (), source: str = "record"
) -> RoundRow:
    """The view of one evaluation record (a ``RoundRecord``, or its stored JSON read with
    ``RoundRecord.from_json``); ``RecordError`` (a ``ValueError``) naming the field if it is not one."""
    if not isinstance(record, RoundRecord):
        record = RoundRecord.from_json(record, source)
    daemon = record.daemon
    factual = {c.index: c for c in record.factual_checks or ()}
    responses = tuple(_response_row(r, factual.get(r.index)) for r in record.responses)
    c = record.consensus
    return RoundRow(
        round_id=record.round_id,
        order=order,
        sequence=None if daemon is None else daemon.sequence,
        started_at=None if daemon is None else display_text(daemon.started_at),
        prompt=printable(record.prompt),
        reference=display_text(record.reference),
        status=printable(record.status or "replay"),
        score=record.consensus.score,
        threshold=record.consensus.threshold,
        reached=record.consensus.reached,
        note=printable(record.consensus.note),
        pool=record.emissions.pool,
        emitted=sum(r.emission for r in responses),
        responses=responses,
        narrative_kind=printable(record.narrative.kind),
        narrative=printable(record.narrative.text),
        has_heatmap=record.heatmap.key is not None,
        replays=tuple(replays),
        nominal_pool=_nominal_pool(record),
        canary=record.canary,
        majority_yes_no=None
        if c.majority_polarity is None
        else YES_NO.get(c.majority_polarity, printable(c.majority_polarity)),
        yes_no_agreed=c.polarity_agreed,
        close_pairs=tuple(record.close_pairs or ()),
        comparable=record.comparable,
        forgotten=() if daemon is None else tuple(daemon.forgotten or ()),
        tick=tick_part(daemon),
        task=record.task,
    )


def _nominal_pool(record: RoundRecord) -> int | None:
    """The configured pool of the run (the record's config), if it names one."""
    units = record.config.value("emissions", "pool_units")
    return units if isinstance(units, int) and not isinstance(units, bool) else None
