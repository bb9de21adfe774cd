"""The validator daemon: round after round, ask the miners, evaluate, pay, persist, update the ledger.

Every edge is injected: the store, the embedder, the miners (a ``query``
callable), the LM, the clock. One round, with its crash points:

1. ``seq = ledger.last_sequence + 1``, ``round_id = prefix + seq``.
2. The evaluation of ``round_id`` is already stored (a crash after step 5):
   apply it to the ledger, nothing else.
3. The input is already stored (a crash after step 4): evaluate it again,
   without asking the miners.
4. Otherwise ask the miners and store the input (answers, failures, timing).
5. Evaluate; store heatmap, embeddings, then the evaluation record (the
   round's commit point).
6. Apply to the ledger; store it when the tick's last committee is applied (the ledger's commit point: it
   names the last applied sequence, so a round is never counted twice; a restart mid-tick applies the tick's
   stored records again through step 2).

The hotkeys ``forget`` drops between rounds (chain mode's deregistered ones, ``Ledger.forgotten``) are
stored in the next round's input marker and record, so a ledger folded from the records drops them too.

A stored round that carries another sequence (or none) under the same id is
not this daemon's: it is never overwritten and the daemon stops with an error
naming it. SIGINT/SIGTERM end the loop after the current round.

Ticks and committees (docs/daemon.md "Committees"): every tick the usable miners are split into committees
(``validator.daemon.committee_draw``, seeded by the validator's secret and the tick number) and each committee is one
round of the steps above, asked its own prompt; the tick's plan is stored when it starts
(``DaemonState.tick_plan``), the rounds carry their tick and committee, and the ledger folds the EMA once
per tick. ``interval_s`` paces ticks.

One daemon per store: ``store_lease`` takes the store's lease (``storage.lease``) before
anything is written, the daemon renews it after every round and releases it at exit.

This module holds ``Daemon``'s rounds and its loop; its ledger and the checks of what is already
stored are ``validator.daemon.state`` (``DaemonState``, ``DaemonError``), the lease is
``validator.daemon.lease`` (``store_lease``); both are re-exported here.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from consensus.embedder import Embedder
from consensus.types import InputMarker, Round
from judge.nli import Judge
from storage import keys
from storage.base import Store
from validator.daemon.committee_draw import TickPlan
from validator.daemon.committee_secret import committee_secret
from validator.daemon.lease import LEASE_MARGIN_S, store_lease
from validator.daemon.round_line import RoundLine, unreached_why
from validator.daemon.state import DaemonError, DaemonState
from validator.daemon.task_source import TaskSource, repeat_notice
from validator.daemon.tick import ask_committees
from validator.miners.query import Query, QueryResult, miners_query
from validator.records import evaluation_record as rec
from validator.records.ledger_entries import (
    fold_record,
    forgotten,
    identity_links,
    tick_part,
)
from validator.records.reader import marker_of, parse_input
from validator.records.writer import RoundWriter
from validator.review.unpaid import unpaid_reasons
from validator.round.evaluate import evaluate_stored
from validator.round.narration import narrate_round, narrative_evidence
from validator.round.prompt_source import PromptItem
from validator.round.stages import EvaluatedRound, LMHandle
from validator.round.task_verification import task_line
from validator.settings import Settings

__all__ = ["LEASE_MARGIN_S", "Daemon", "DaemonError", "Query", "QueryResult", "miners_query", "store_lease"]

log = logging.getLogger("validator.daemon")  # the daemon's logger: its messages keep the name operators see


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Daemon(DaemonState):
    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        prompts: Sequence[PromptItem],
        query: Query,
        lm: LMHandle | None = None,
        clock: Callable[[], float] = time.time,
        presign: Callable[[str], str | None] | None = None,
        metrics=None,
        state_dir: str | Path | None = None,
        stop: threading.Event | None = None,
        on_progress: Callable[[str], None] | None = None,
        canaries: Sequence[PromptItem] = (),
        secret: bytes | None = None,
        roster: Callable[[], Sequence[tuple[str, str | None]]] | None = None,
        tasks: TaskSource | None = None,
        nli: Judge | None = None,
    ) -> None:
        self.store = store
        self.canaries = tuple(canaries)  # known-answer prompts mixed in (validator.round.canaries)
        self.embedder = embedder
        self.settings = settings
        self.prompts = tuple(prompts)
        self.query = query
        self.lm = lm
        self.nli = nli  # the NLI judge (judge.nli; the App's): its verdicts are stored with the round's evidence
        self.clock = clock
        self.presign = presign
        self.metrics = metrics
        self.stop = stop or threading.Event()
        self.on_progress = on_progress  # told each stage of a round as it starts (the terminal shows it)
        self._rid = ""  # the round under way, for progress messages
        self.mirror = Path(state_dir) / "ledger.json" if state_dir is not None else None
        self.ledger = self._load_ledger()
        # the committees' secret: given, else the settings' or the one kept in the local state (never logged)
        self.secret = secret if secret is not None else committee_secret(settings, state_dir)
        self.roster = roster if roster is not None else lambda: roster_of(self.query)
        self.tasks = tasks  # verifiable tasks mixed into the rounds (validator.daemon.task_source); None: prompts only
        if not self.prompts and self.tasks is None:
            raise DaemonError("no prompt source: give prompts, or tasks ([tasks] enabled = true)")
        self._plan: TickPlan | None = None
        self._asked: set[str] = set()  # rounds whose input was stored when their tick's committees were asked

    def repeat_notice(self) -> str | None:
        """When this daemon's prompts start repeating (``validator.daemon.task_source.repeat_notice``); None without."""
        return repeat_notice(self.prompts, len(self.roster()), self.settings.daemon, self.tasks, bool(self.canaries))

    # ---- one round -------------------------------------------------------------------------------
    def run_one(self) -> RoundLine:
        start = time.perf_counter()
        sequence = self.ledger.last_sequence + 1
        rid = self._rid = self.round_id(sequence)
        doc = self._stored_json(keys.evaluation(rid))
        stages: dict[str, float] = {}
        recovered = None
        latencies: tuple[float, ...] = ()
        outcome: EvaluatedRound | None = None
        if doc is not None:
            self._check_ours(marker_of(doc), keys.evaluation(rid), sequence)
            record = self._parse_record(doc, keys.evaluation(rid))
            recovered = "evaluation"
        else:
            stored, recovered = self._round_input(rid, sequence, stages)
            latencies = tuple(r.latency_s for r in stored.responses if r.error is None)
            record, outcome = self._evaluate(stored, stages)
        status = record.status or "ok"
        t = time.perf_counter()
        # the hotkeys stored as forgotten before this round: already gone from this ledger (``forget``), unless
        # it is older than the round's input; dropped here as every fold of the records does
        self.ledger = fold_record(self.ledger.without(forgotten(record)), sequence, record, tick_part(record.daemon))
        if self.ledger.open_tick is None:
            # stored once per tick: a restart mid-tick applies the tick's stored records again (step 2), so the
            # committees' rounds need no ledger write of their own (a 256-miner ledger took 38 ms to write)
            self._save_ledger()
        stages["ledger"] = time.perf_counter() - t
        if outcome is not None:
            record = self._add_narrative(record, outcome, stages)
        report = self._report(sequence, rid, record, recovered, time.perf_counter() - start, stages, latencies)
        part = tick_part(record.daemon)
        if part is not None:
            report = dataclasses.replace(report, tick=part.tick, committee=part.committee, committees=part.committees)
        if self.metrics is not None:
            if self.ledger.open_tick is None:
                self.metrics.observe_tick(self.ledger.last_tick, self.ledger.last_tick_committees)
            pending = getattr(self.store, "pending", None)
            if pending is not None:
                self.metrics.spool_pending.set(pending())
            failures = [r.error for r in record.responses if r.error]
            if record.task is not None:
                self.metrics.tasks.inc()
            self.metrics.observe_round(
                sequence=sequence,
                status=status,
                reached=report.reached,
                latencies=latencies,
                failures=failures,
                stages=stages,
            )
        return report

    def _round_input(self, rid: str, sequence: int, stages: dict[str, float]) -> tuple[Round, str | None]:
        """The round's stored input and "input" when this daemon stored it before a crash (the miners are not
        asked again); else ask the miners (this committee and the tick's later ones, ``validator.daemon.tick``)
        and store the inputs (step 4) first."""
        doc = self._stored_json(keys.round_input(rid))
        if doc is not None:
            self._check_ours(marker_of(doc), keys.round_input(rid), sequence)
            stored = self._as_of_now(parse_input(doc, keys.round_input(rid), self.settings.input))
            return stored, None if rid in self._asked else "input"
        plan = self.tick_plan(sequence)
        committee = plan.committee_of(sequence)
        if len(plan.committees) > 1:
            self._rid = f"{rid} (tick {plan.tick}, committee {committee + 1}/{len(plan.committees)})"
        self._progress("querying miners" if len(plan.committees) == 1 else "querying the tick's committees")
        t = time.perf_counter()
        asked = ask_committees(
            self.query,
            plan,
            range(committee, len(plan.committees)),
            prompts=self.prompts,
            canaries=self.canaries,
            secret=self.secret,
            settings=self.settings,
            clock=self.clock,
            on_done=lambda k, n: self._progress(f"{k}/{n} miners done"),
            tasks=self.tasks,
        )
        stages["query"] = time.perf_counter() - t
        t = time.perf_counter()
        out: Round | None = None
        for a in asked:
            # the canary flag lives only in the validator's stored input: miners see a plain prompt
            stored = Round(
                self.round_id(a.sequence),
                a.item.prompt,
                a.result.responses,
                a.item.reference,
                dict(a.result.details),
                InputMarker(
                    sequence=a.sequence,
                    started_at=_utc(a.started_at),
                    canary=a.canary,
                    links=identity_links(self.ledger, self.settings.consensus, [r.miner for r in a.result.responses]),
                    forgotten=self.ledger.forgotten,  # dropped since the last round (``forget``)
                    tick=plan.tick,
                    committee=a.committee,
                    committees=len(plan.committees),
                    task=a.task,
                ),
            )
            self._writer().write_input(stored)
            if a.committee == committee:
                out = stored
            else:
                self._asked.add(stored.round_id)
        stages["persist"] = time.perf_counter() - t
        assert out is not None
        return out, None

    def _as_of_now(self, stored: Round) -> Round:
        """A stored input with the links and forgotten hotkeys of the ledger as it is before this round (stored
        again when they changed): what the round would have held had it been asked just now. An input stored
        with its tick's committees is asked before the earlier committees were applied; one stored before a crash
        already holds them (the ledger has not moved since)."""
        m = stored.daemon
        if m is None:
            return stored
        links = identity_links(self.ledger, self.settings.consensus, [r.miner for r in stored.responses])
        if links == m.links and self.ledger.forgotten == m.forgotten:
            return stored
        stored = dataclasses.replace(
            stored, daemon=dataclasses.replace(m, links=links, forgotten=self.ledger.forgotten)
        )
        self._writer().write_input(stored)
        return stored

    def _writer(self) -> RoundWriter:
        return RoundWriter(self.store, self.embedder, presign=self.presign)

    def _evaluate(self, stored: Round, stages: dict[str, float]) -> tuple[rec.RoundRecord, EvaluatedRound | None]:
        """Evaluate; store heatmap, embeddings, then the record (the round's commit point, crash point 5)."""
        self._progress("evaluating")
        record, outcome = evaluate_stored(
            stored, self.settings, self.embedder, lm=self.lm, defer_narrative=True, nli=self.nli
        )
        if outcome is not None:
            stages.update(outcome.timings)
        t = time.perf_counter()
        self._progress("storing")
        record = self._writer().write(stored, record, outcome)
        stages["persist"] = stages.get("persist", 0.0) + time.perf_counter() - t
        return record, outcome

    def _add_narrative(
        self, record: rec.RoundRecord, outcome: EvaluatedRound, stages: dict[str, float]
    ) -> rec.RoundRecord:
        """The LM's narrative (``validator.round.narration.narrate_round``), written after the round is committed.

        The narrative changes no number, so it never holds up the commit (record and ledger): a crash (or an
        LM that fails) here leaves a complete record with the template narrative, and nothing is redone; this
        is why the record is written a second time when the narrative changes it. Its LM calls, retries
        included, get ``lm.round_budget_s`` seconds in all (an allowance of their own, after the checks');
        when that is spent the template stays and the record says so.
        """
        if self.lm is None or not self.settings.lm.narrative:
            return record
        self._progress("narrative")
        t = time.perf_counter()
        round_, ev, al, key = outcome.round, outcome.evaluation, outcome.allocation, record.heatmap.key
        told = narrate_round(self.lm.client, round_, ev, al, key, self.settings.lm.round_budget_s)
        stages["narrative"] = stages.get("narrative", 0.0) + time.perf_counter() - t
        t = time.perf_counter()
        if outcome.evidence is not None:  # into the LM evidence before the record that shows it (replay reuses it)
            narrated = outcome.evidence.with_narrative(narrative_evidence(told, round_, ev, al, key))
            self._writer().write_evidence(narrated)
        if told.kind == "template" and told.skipped is None:
            return record  # the stored record already says so
        if told.skipped is not None:
            skipped = rec.SkippedCheckRecord(stage="narrative", index=None, reason=told.skipped)
            record = dataclasses.replace(record, lm_skipped=(*(record.lm_skipped or ()), skipped))
        else:
            record = dataclasses.replace(record, narrative=rec.NarrativeRecord(kind=told.kind, text=told.text))
        self._writer().write_record(record)
        stages["persist"] = stages.get("persist", 0.0) + time.perf_counter() - t
        return record

    def _progress(self, stage: str) -> None:
        if self.on_progress is not None:
            self.on_progress(f"{self._rid}: {stage}")

    def _report(
        self,
        sequence: int,
        rid: str,
        record: rec.RoundRecord,
        recovered: str | None,
        seconds: float,
        stages: dict[str, float],
        latencies: tuple[float, ...],
    ) -> RoundLine:
        failures: dict[str, int] = {}
        for r in record.responses:
            if r.error:
                failures[r.error] = failures.get(r.error, 0) + 1
        return RoundLine(
            sequence=sequence,
            round_id=rid,
            status=record.status or "ok",
            recovered=recovered,
            miners=len(record.responses),
            usable=len(record.responses) - sum(failures.values()),
            failures=failures,
            consensus_score=record.consensus.score,
            reached=record.consensus.reached,
            top_miner=record.top_miner,
            paid=record.emissions.total,
            seconds=seconds,
            stages=stages,
            latencies=latencies,
            pool=self.settings.emissions.pool_units,
            unreached_why=unreached_why(record.consensus),
            unpaid=unpaid_reasons(record),
            members=tuple(r.miner for r in record.responses),
            task=None if record.task is None else task_line(record.task),
        )

    # ---- the loop --------------------------------------------------------------------------------
    def run(
        self,
        rounds: int = 0,
        stop: threading.Event | None = None,
        on_round: Callable[[RoundLine], None] | None = None,
        ticks: int = 0,
    ) -> list[RoundLine]:
        """Run ``rounds`` rounds, or ``ticks`` ticks (both 0: until ``stop`` is set); a tick starts ``interval_s``
        after the previous one started (its committees' rounds run back to back)."""
        stop = stop or self.stop
        reports: list[RoundLine] = []
        done_ticks = 0
        began = time.perf_counter()
        while not stop.is_set() and (rounds == 0 or len(reports) < rounds) and (ticks == 0 or done_ticks < ticks):
            report = self.run_one()
            reports.append(report)
            if on_round is not None:
                on_round(report)
            if self.ledger.open_tick is not None:
                continue  # the tick's next committee
            done_ticks += 1
            if (rounds and len(reports) >= rounds) or (ticks and done_ticks >= ticks):
                break
            wait = self.settings.daemon.interval_s - (time.perf_counter() - began)
            if wait > 0:
                stop.wait(wait)
            began = time.perf_counter()
        if self.ledger.open_tick is not None:
            self._save_ledger()  # stopped mid-tick: a restart resumes from here rather than from the records
        return reports


def roster_of(query: object) -> tuple[tuple[str, str | None], ...]:
    """The miners a query asks and their entities (its ``specs``: the miners file's, the metagraph's, the pool's);
    empty when it does not say (a plain callable): the tick is then one committee of whoever it asks."""
    specs = getattr(query, "specs", None) or ()
    return tuple((s.hotkey, s.entity) for s in specs)
