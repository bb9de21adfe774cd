"""One stored round through its job: load it, evaluate it, write its artefacts, report what the fold needs.

Every engine runs a round the same two steps: ``prepare`` (read the stored
input, apply the selection, find reusable stored embeddings and, without the
LM, the LM's stored evidence) and ``finish`` (``validator.round.evaluate.evaluate_stored``
with the original's values of the settings that do not apply offline,
``validator.replaying.original_settings``, then ``validator.records.writer.RoundWriter`` at the job's
target, then the compact ``JobResult``: what the ledger fold, the diff and
the summary need, never the texts). The in-process engine embeds
the next prepared round on a background thread between the two; a Ray task
runs both back to back (``run_batch``). The vectors are the same either way,
so every byte written is too.

A round's failure is a result, never an exception: the others go on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from consensus.embedder import Embeddings, RoundEmbeddings
from consensus.errors import RoundError
from consensus.identity import ClosePair
from consensus.types import Round
from storage.base import KeyNotFound
from validator.records import evaluation_record as rec
from validator.records.ledger_entries import (
    MinerEntry,
    TickPart,
    close_pairs,
    comparable,
    consensus_right,
    entries_from_record,
    tick_part,
)
from validator.records.lm_evidence import EvidenceError, LMEvidence
from validator.records.reader import RoundReader
from validator.records.replay_summary import RoundDiffRow
from validator.records.writer import RoundWriter
from validator.replaying.diff import diff_records
from validator.replaying.original_settings import offline_settings
from validator.replaying.spec import Job, Resources
from validator.round.evaluate import evaluate_stored

log = logging.getLogger(__name__)

Row = tuple[str, bool, float, int]  # (miner, in consensus, composite, amount) of one response


@dataclass(frozen=True)
class Side:
    """One evaluation of a round (the stored original or the new one), as the fold and the report need it."""

    reached: bool
    no_quorum: bool
    score: float | None
    members: tuple[str, ...]  # miners in consensus, sorted
    entries: tuple[MinerEntry, ...]
    consensus_right: bool | None
    alpha: float  # the moving_average_alpha this evaluation was made with
    canary_alpha: float
    rows: tuple[Row, ...] = ()  # per response, for a run's summary
    close: tuple[ClosePair, ...] = ()  # the round's close pairs, for the ledger's pair evidence
    comparable: tuple[str, ...] | None = None  # the miners it could compare (None: every miner that answered)

    @classmethod
    def of(cls, record: rec.RoundRecord) -> Side:
        daemon = record.config.daemon  # today's defaults where an older record holds none
        return cls(
            reached=bool(record.consensus.reached),
            no_quorum=not record.evaluated,
            score=record.consensus.score,
            members=tuple(sorted({r.miner for r in record.responses if r.in_consensus})),
            entries=tuple(entries_from_record(record)),
            consensus_right=consensus_right(record),
            alpha=float(daemon.moving_average_alpha),
            canary_alpha=float(daemon.canary_alpha),
            rows=tuple(
                (r.miner, bool(r.in_consensus), r.score.composite, int(r.emissions.amount)) for r in record.responses
            ),
            close=close_pairs(record),
            comparable=comparable(record),
        )


@dataclass(frozen=True)
class JobResult:
    """One stored round's outcome: ``status`` is "ok", "skipped" (outside the selection) or "failed"."""

    key: str
    status: str
    round_id: str | None = None
    error: str | None = None
    old: Side | None = None  # None: no readable original record (or a first evaluation)
    new: Side | None = None
    diff: RoundDiffRow | None = None  # re-evaluations only
    embeddings_reused: bool = False
    forgotten: tuple[str, ...] = ()  # the hotkeys its input says the daemon dropped before it (Ledger.without)
    tick: TickPart | None = None  # the tick and committee its input says it was (Ledger.apply(tick=))


@dataclass(frozen=True)
class Prepared:
    """A stored round ready to evaluate: its input and, when they fit the model, its stored embeddings."""

    key: str
    stored: Round
    reused: RoundEmbeddings | None = None
    evidence: LMEvidence | None = None  # the LM's stored answers (read only when this engine has no LM)


def prepare(job: Job, res: Resources, key: str) -> Prepared | JobResult:
    """Read the input under ``key``; a ``JobResult`` when it is unreadable or outside the selection."""
    try:
        stored = RoundReader(res.store).input_at(key, res.settings.input)
    except (ValueError, RoundError, KeyNotFound) as exc:
        return JobResult(key, "failed", error=f"unreadable input: {exc}")
    if job.is_first:
        return Prepared(key, stored)
    if not job.selection.keeps(stored.round_id, stored.started_at):
        return JobResult(key, "skipped", stored.round_id)
    try:  # without the LM the round's own answers from it are reused (validator.records.lm_evidence)
        evidence = RoundReader(res.store).evidence(stored.round_id) if res.lm is None else None
    except EvidenceError as exc:
        return JobResult(key, "failed", stored.round_id, error=f"unreadable LM evidence: {exc}")
    return Prepared(
        key,
        stored,
        RoundReader(res.store).embeddings(stored.round_id, res.embedder, len(stored.responses)),
        evidence,
    )


def finish(job: Job, res: Resources, p: Prepared, ahead: Callable[[], Embeddings | None] | None = None) -> JobResult:
    """Evaluate a prepared round, write it, report it; ``ahead()`` gives its texts' vectors computed ahead
    (an embedding error it raises fails this round only)."""
    rid = p.stored.round_id
    original: rec.RoundRecord | None = None
    settings = res.settings
    if not job.is_first:
        try:
            original = RoundReader(res.store).record(rid)
        except KeyNotFound:  # none: a crash before its commit, everything is new
            original = None
        except (OSError, ValueError) as exc:  # damaged: its old pay is unknown, not zero (what-if and diff)
            return JobResult(p.key, "failed", rid, error=f"unreadable original record: {exc}")
        if original is not None and res.lm is None:  # what does not apply offline is the original's
            settings = offline_settings(res.settings, original.config, evidence=p.evidence is not None)
    try:
        embedded = ahead() if ahead is not None and p.reused is None else None
        reused = p.reused is not None
        record, outcome = evaluate_stored(
            p.stored,
            settings,
            res.embedder,
            lm=res.lm,
            embeddings=p.reused if p.reused is not None else embedded,
            quorum=not job.is_first,
            evidence=p.evidence,
            # a first evaluation asks the NLI judge, and a replay that asks the LM again; otherwise a replay reads
            # the verdicts stored with the round's evidence, or none (as the original did), never new ones
            nli=res.nli if job.is_first or res.lm is not None else None,
        )
        record = RoundWriter(res.store, res.embedder, job.target).write(
            p.stored, record, outcome, embeddings_reused=reused
        )
    except Exception as exc:  # one round's failure must not lose the others
        log.exception("round %r: evaluation failed", rid)
        return JobResult(p.key, "failed", rid, error=f"evaluation failed: {type(exc).__name__}: {exc}")
    forgotten = p.stored.daemon.forgotten if p.stored.daemon is not None else ()
    tick = tick_part(p.stored.daemon)
    if job.is_first:
        return JobResult(p.key, "ok", rid, new=Side.of(record), forgotten=forgotten, tick=tick)
    diff = diff_records(original, record, embeddings_reused=reused)
    return JobResult(
        p.key,
        "ok",
        rid,
        old=None if original is None else Side.of(original),
        new=Side.of(record),
        diff=diff,
        embeddings_reused=reused,
        forgotten=forgotten,
        tick=tick,
    )


def run_one(job: Job, res: Resources, key: str) -> JobResult:
    """``prepare`` then ``finish``, the round embedding its own texts."""
    prepared = prepare(job, res, key)
    return prepared if isinstance(prepared, JobResult) else finish(job, res, prepared)


def run_batch(res: Resources, job: Job, batch: Sequence[str]) -> list[JobResult]:
    """The rounds under ``batch`` (input keys), one result per key, in order: a Ray task's work."""
    return [run_one(job, res, key) for key in batch]
