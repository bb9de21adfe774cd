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
6. Apply to the ledger and store it (the ledger's commit point: it names the
   last applied sequence, so a round is never counted twice).

A stored round that carries another sequence (or none) under the same id is
not this daemon's: it is never overwritten and the daemon stops with an error
naming it. SIGINT/SIGTERM end the loop after the current round.

One daemon per store: ``store_lease`` takes the store's lease (``storage.lease``) before
anything is written, the daemon renews it after every round and releases it at exit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from consensus.embedder import Embedder
from consensus.types import Round
from storage import keys
from storage.base import KeyNotFound, PermanentStoreError, Store, StoreError
from storage.codec import dumps
from storage.files import write_atomic
from validator import record as rec
from validator.artefacts import RoundWriter
from validator.canaries import pick_prompt
from validator.evaluate import Evaluated, evaluate
from validator.ledger import Ledger, close_pairs, comparable, consensus_right, entries_from_record, identity_links
from validator.miners.query import Query, QueryResult, miners_query
from validator.prompts import PromptItem
from validator.round import LMHandle, with_narrative
from validator.round_report import RoundReport, unreached_why
from validator.settings import Settings
from validator.stored import InputMarker, StoredRound, parse_stored, read_marker

__all__ = ["Daemon", "DaemonError", "Query", "QueryResult", "miners_query"]

log = logging.getLogger(__name__)


class DaemonError(RuntimeError):
    """The daemon cannot go on safely (a foreign round under its id, a corrupt ledger)."""


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Daemon:
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
    ) -> None:
        self.store = store
        self.canaries = tuple(canaries)  # known-answer prompts mixed in (validator.canaries)
        self.embedder = embedder
        self.settings = settings
        self.prompts = tuple(prompts)
        self.query = query
        self.lm = lm
        self.clock = clock
        self.presign = presign
        self.metrics = metrics
        self.stop = stop or threading.Event()
        self.on_progress = on_progress  # told each stage of a round as it starts (the terminal shows it)
        self._rid = ""  # the round under way, for progress messages
        self.mirror = Path(state_dir) / "ledger.json" if state_dir is not None else None
        self.ledger = self._load_ledger()

    # ---- state -----------------------------------------------------------------------------------
    def _load_ledger(self, retry_s: float = 5.0) -> Ledger:
        """The stored ledger; while the store is down, the local mirror; with neither, wait for the store.

        Only an outage is waited out: a store that can never work (``PermanentStoreError``) is raised.
        """
        waiting_since: float | None = None
        while True:
            try:
                raw: bytes | None = self.store.get(keys.ledger())
            except KeyNotFound:
                raw = None
            except PermanentStoreError:
                raise
            except StoreError as exc:
                if self.mirror is not None and self.mirror.is_file():
                    log.warning("store unreachable (%s); resuming from the local ledger copy %s", exc, self.mirror)
                    return self._parse_ledger(self.mirror.read_bytes(), str(self.mirror))
                if waiting_since is None:  # once per outage, not once per retry
                    waiting_since = time.monotonic()
                    log.warning(
                        "store unreachable and no local ledger copy: retrying every %.0f s until it is back (%s)",
                        retry_s,
                        exc,
                    )
                if self.stop.wait(retry_s):
                    raise DaemonError("stopped while waiting for the store to read the ledger") from exc
                continue
            if waiting_since is not None:
                log.warning("store is back after %.0f s; ledger read", time.monotonic() - waiting_since)
            if raw is None:
                if self.mirror is not None and self.mirror.is_file():
                    # the store lost its ledger (or a new bucket) but this machine has one: never restart at 1
                    raise DaemonError(
                        f"{keys.ledger()} is missing from the store but {self.mirror} exists; "
                        f"restore the ledger or delete the local copy to start over"
                    )
                return Ledger(
                    alpha=self.settings.daemon.moving_average_alpha, canary_alpha=self.settings.daemon.canary_alpha
                )
            ledger = self._parse_ledger(raw, keys.ledger())
            if self.mirror is not None and self.mirror.is_file():
                local = self._parse_ledger(self.mirror.read_bytes(), str(self.mirror))
                if local.last_sequence > ledger.last_sequence:
                    ledger = local  # written after the store's copy (e.g. the store's was lost with a spool)
            if ledger.alpha != self.settings.daemon.moving_average_alpha:
                log.warning(
                    "ledger alpha %s differs from moving_average_alpha %s; the ledger's value is kept",
                    ledger.alpha,
                    self.settings.daemon.moving_average_alpha,
                )
            return ledger

    @staticmethod
    def _parse_ledger(raw: bytes, where: str) -> Ledger:
        try:
            return Ledger.from_json(json.loads(raw))
        except ValueError as exc:  # LedgerError is a ValueError
            raise DaemonError(f"{where}: {exc}; move it aside to start a new ledger") from exc

    def _save_ledger(self) -> None:
        data = dumps(self.ledger.to_json())
        if self.mirror is not None:
            write_atomic(self.mirror, data)
        self.store.put(keys.ledger(), data, "application/json")

    def forget(self, miners: Iterable[str]) -> None:
        """Drop ``miners`` from the ledger and store it (chain mode: hotkeys that left the subnet, docs/chain.md)."""
        ledger = self.ledger.without(miners)
        if ledger is not self.ledger:
            self.ledger = ledger
            self._save_ledger()

    def round_id(self, sequence: int) -> str:
        return f"{self.settings.daemon.round_prefix}{sequence:06d}"

    def _stored_json(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.store.get(key))
        except KeyNotFound:
            return None
        except StoreError as exc:
            # Only a crash in the middle of this very round could have left something here; the
            # ledger never counted it, so asking again and overwriting it on upload is safe. A
            # spooling store logs the outage itself, once when it starts and once when it ends.
            quiet = getattr(self.store, "reports_outages", False)
            log.log(
                logging.DEBUG if quiet else logging.WARNING, "cannot check %s (%s); treating it as not stored", key, exc
            )
            return None

    def _check_ours(self, marker: InputMarker | None, key: str, sequence: int) -> None:
        """``marker`` (a record's or an input's daemon marker, ``read_marker``) must name this daemon's ``sequence``."""
        if marker is None or marker.sequence != sequence:
            raise DaemonError(
                f"{key} exists and was not written by this daemon for sequence {sequence}; "
                f"it is left untouched. Use another daemon.round_prefix or another store."
            )

    @staticmethod
    def _parse_record(doc: dict[str, Any], key: str) -> rec.RoundRecord:
        try:
            return rec.RoundRecord.from_json(doc, key)
        except rec.RecordError as exc:
            raise DaemonError(
                f"{exc}; the round cannot be resumed from it (move it aside to evaluate the round again)"
            ) from exc

    # ---- one round -------------------------------------------------------------------------------
    def run_one(self) -> RoundReport:
        start = time.perf_counter()
        sequence = self.ledger.last_sequence + 1
        rid = self._rid = self.round_id(sequence)
        doc = self._stored_json(keys.evaluation(rid))
        stages: dict[str, float] = {}
        recovered = None
        latencies: tuple[float, ...] = ()
        evaluated: Evaluated | None = None
        if doc is not None:
            self._check_ours(read_marker(doc), keys.evaluation(rid), sequence)
            record = self._parse_record(doc, keys.evaluation(rid))
            recovered = "evaluation"
        else:
            stored, recovered = self._round_input(rid, sequence, stages)
            latencies = tuple(r.latency_s for r in stored.round.responses if r.error is None)
            evaluated = self._evaluate(stored, stages)
            record = evaluated.record
        status = record.status or "ok"
        t = time.perf_counter()
        self.ledger = self.ledger.apply(
            sequence,
            rid,
            entries_from_record(record),
            no_quorum=status == "no_quorum",
            consensus_right=consensus_right(record),
            close=close_pairs(record),
            comparable=comparable(record),
        )
        self._save_ledger()
        stages["ledger"] = time.perf_counter() - t
        if evaluated is not None and evaluated.outcome is not None:
            record = self._add_narrative(record, evaluated, stages)
        report = self._report(sequence, rid, record, recovered, time.perf_counter() - start, stages, latencies)
        if self.metrics is not None:
            pending = getattr(self.store, "pending", None)
            if pending is not None:
                self.metrics.spool_pending.set(pending())
            failures = [r.error for r in record.responses if r.error]
            self.metrics.observe_round(
                sequence=sequence,
                status=status,
                reached=report.reached,
                latencies=latencies,
                failures=failures,
                stages=stages,
            )
        return report

    def _round_input(self, rid: str, sequence: int, stages: dict[str, float]) -> tuple[StoredRound, str | None]:
        """The round's stored input and "input" when this daemon stored it before a crash (the miners are not
        asked again); else ask the miners and store the input (step 4) first."""
        doc = self._stored_json(keys.round_input(rid))
        if doc is not None:
            self._check_ours(read_marker(doc), keys.round_input(rid), sequence)
            return parse_stored(doc, keys.round_input(rid), self.settings.input), "input"
        started_at = _utc(self.clock())
        d = self.settings.daemon
        item, canary = pick_prompt(self.prompts, self.canaries, sequence, d.canary_rate, d.canary_seed)
        self._progress("querying miners")
        t = time.perf_counter()
        result = self.query(item.prompt, on_done=lambda k, n: self._progress(f"{k}/{n} miners done"))
        stages["query"] = time.perf_counter() - t
        # the canary flag lives only in the validator's stored input: miners see a plain prompt
        stored = StoredRound(
            Round(rid, item.prompt, result.responses, item.reference),
            dict(result.details),
            InputMarker(
                sequence=sequence,
                started_at=started_at,
                canary=canary,
                links=identity_links(self.ledger, self.settings.consensus, [r.miner for r in result.responses]),
            ),
        )
        t = time.perf_counter()
        self._writer().write_input(stored)
        stages["persist"] = time.perf_counter() - t
        return stored, None

    def _writer(self) -> RoundWriter:
        return RoundWriter(self.store, self.embedder, presign=self.presign)

    def _evaluate(self, stored: StoredRound, stages: dict[str, float]) -> Evaluated:
        """Evaluate; store heatmap, embeddings, then the record (the round's commit point, crash point 5)."""
        self._progress("evaluating")
        evaluated = evaluate(stored, self.settings, self.embedder, lm=self.lm, defer_narrative=True)
        if evaluated.outcome is not None:
            stages.update(evaluated.outcome.timings)
        t = time.perf_counter()
        self._progress("storing")
        record = self._writer().write(evaluated)
        stages["persist"] = stages.get("persist", 0.0) + time.perf_counter() - t
        return dataclasses.replace(evaluated, record=record)

    def _add_narrative(
        self, record: rec.RoundRecord, evaluated: Evaluated, stages: dict[str, float]
    ) -> rec.RoundRecord:
        """The LM's narrative, written after the round is committed (record and ledger).

        The narrative changes no number, so it never holds up the commit: a crash (or an LM that
        fails) here leaves a complete record with the template narrative, and nothing is redone.
        Its LM calls, retries included, get ``lm.round_budget_s`` seconds in all (an allowance of
        their own, after the checks'); when that is spent the template stays and the record says so.
        """
        if self.lm is None or not self.settings.lm.narrative or evaluated.outcome is None:
            return record
        from lm.client import DeadlineClient, labelled
        from narrative.narrate import narrate

        self._progress("narrative")
        t = time.perf_counter()
        outcome = evaluated.outcome
        round_, ev, al = outcome.round, outcome.evaluation, outcome.allocation
        budget = self.settings.lm.round_budget_s
        bounded = DeadlineClient(self.lm.client, budget) if budget > 0 else self.lm.client
        told = narrate(labelled(bounded, "narrative"), round_, ev, al.amounts, al.pool, record.heatmap.key)
        stages["narrative"] = stages.get("narrative", 0.0) + time.perf_counter() - t
        spent = None
        if told.kind == "template":
            if not getattr(bounded, "spent", False):
                self._store_narrative(outcome, told, record)  # a replay keeps the template too
                return record  # the stored record already says so
            spent = f"skipped: the narrative's LM budget of {budget:.0f} s is spent; template kept"
            skipped = rec.SkippedCheckRecord(stage="narrative", index=None, reason=spent)
            record = dataclasses.replace(record, lm_skipped=(*(record.lm_skipped or ()), skipped))
        else:
            record = dataclasses.replace(record, narrative=rec.Narrative(kind=told.kind, text=told.text))
        t = time.perf_counter()
        self._store_narrative(outcome, told, record, spent)
        self._writer().write_record(record)
        stages["persist"] = stages.get("persist", 0.0) + time.perf_counter() - t
        return record

    def _store_narrative(self, outcome, told, record: rec.RoundRecord, spent: str | None = None) -> None:
        """The narrative into the round's LM evidence, before the record that shows it (a replay reuses it)."""
        if outcome.evidence is not None:
            self._writer().write_evidence(with_narrative(outcome, told.kind, told.text, record.heatmap.key, spent))

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
    ) -> RoundReport:
        failures: dict[str, int] = {}
        for r in record.responses:
            if r.error:
                failures[r.error] = failures.get(r.error, 0) + 1
        return RoundReport(
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
        )

    # ---- the loop --------------------------------------------------------------------------------
    def run(
        self,
        rounds: int = 0,
        stop: threading.Event | None = None,
        on_round: Callable[[RoundReport], None] | None = None,
    ) -> list[RoundReport]:
        """Run ``rounds`` rounds (0: until ``stop`` is set), one per ``interval_s``."""
        stop = stop or self.stop
        reports: list[RoundReport] = []
        while not stop.is_set() and (rounds == 0 or len(reports) < rounds):
            began = time.perf_counter()
            report = self.run_one()
            reports.append(report)
            if on_round is not None:
                on_round(report)
            if rounds and len(reports) >= rounds:
                break
            wait = self.settings.daemon.interval_s - (time.perf_counter() - began)
            if wait > 0:
                stop.wait(wait)
        return reports


LEASE_MARGIN_S = 600.0  # an S3 lease's time to live beyond the longest a round and its wait can take


@contextlib.contextmanager
def store_lease(
    uri: str,
    settings: Settings,
    *,
    create_bucket: bool = False,
    stop: threading.Event | None = None,
    retry_s: float = 5.0,
) -> Iterator[Callable[[], None]]:
    """One daemon per store: hold the store's lease (``storage.lease``) for the block; yields ``renew``.

    Taken before anything is written (enter this before ``open_app``: its store probe writes): a
    store another daemon holds raises ``LeaseHeld`` naming it (host, pid, since), and the command
    exits 2. Call ``renew`` after every round; ``LeaseLost`` means another daemon took the store
    over, and the daemon stops before its next round. An S3 lease lives ``LEASE_MARGIN_S`` beyond
    the longest a round and the wait after it can take without a renewal, so only a killed holder's
    lease expires; one killed on this machine is taken over at once. While the store cannot be
    reached the lease is retried every ``retry_s`` seconds and nothing starts: without it the
    daemon cannot know that no other daemon writes there.
    """
    from storage.base import PermanentStoreError, StoreError
    from storage.errors import LeaseError
    from storage.lease import open_lease
    from validator.app import store_for

    d = settings.daemon
    ttl_s = LEASE_MARGIN_S + d.interval_s + d.round_deadline_s + 2 * settings.lm.round_budget_s
    store = store_for(uri, settings, create_bucket=create_bucket)
    lease = open_lease(store, ttl_s=ttl_s)
    try:
        waiting = False
        while True:
            try:
                lease.acquire()
                break
            except LeaseError:
                raise
            except PermanentStoreError as exc:  # worded as the store check at start words it (validator.app)
                if exc.kind == "missing bucket":
                    exc.hint += "; or pass --create-bucket"
                raise PermanentStoreError(
                    f"store {uri} is unusable: {exc.kind}: {' '.join(str(exc).split())}", kind=exc.kind
                ) from None
            except StoreError as exc:
                if not waiting:
                    waiting = True
                    log.warning(
                        "store %s unreachable at start; retrying every %.0f s to take its lease (%s)",
                        uri,
                        retry_s,
                        " ".join(str(exc).split()),
                    )
                if (stop or threading.Event()).wait(retry_s):
                    raise DaemonError(f"stopped while waiting for store {uri} to take its lease") from exc
        try:
            yield lease.renew
        finally:
            lease.release()
    finally:
        getattr(store, "close", lambda: None)()
