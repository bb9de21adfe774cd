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
"""

from __future__ import annotations

import io
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from consensus.embed import Embedder, Embeddings
from consensus.types import Response, Round
from storage import keys
from storage.base import KeyNotFound, Store, StoreError
from storage.codec import dumps
from validator.ledger import Ledger, LedgerError, entries_from_record
from validator.prompts import PromptItem, prompt_for
from validator.round import LMHandle, RoundOutcome, build_record, run_round
from validator.rounds import parse_round, round_to_json
from validator.settings import Settings
from validator.terminal import safe

log = logging.getLogger(__name__)


class DaemonError(RuntimeError):
    """The daemon cannot go on safely (a foreign round under its id, a corrupt ledger)."""


@dataclass(frozen=True)
class QueryResult:
    """What the miners answered: failures carry ``error`` = the reason and an empty text."""

    responses: tuple[Response, ...]
    details: dict[str, str] = field(default_factory=dict)  # miner -> human detail of its failure
    seconds: float = 0.0


Query = Callable[[str], QueryResult]


@dataclass(frozen=True)
class RoundReport:
    sequence: int
    round_id: str
    status: str  # "ok" or "no_quorum"
    recovered: str | None  # None, "evaluation" (step 2) or "input" (step 3)
    miners: int
    usable: int
    failures: dict[str, int]
    consensus_score: float | None
    reached: bool
    top_miner: str | None
    paid: int
    seconds: float
    stages: dict[str, float]
    latencies: tuple[float, ...] = ()

    def line(self) -> str:
        """The one log line of a round."""
        failed = sum(self.failures.values())
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.failures.items()))
        parts = [self.round_id, self.status, f"miners {self.miners}", f"answered {self.usable}"]
        if failed:
            parts.append(f"failed {failed} ({reasons})")
        if self.consensus_score is not None:
            parts.append(f"consensus {self.consensus_score:.3f} {'reached' if self.reached else 'not reached'}")
        if self.top_miner is not None:
            parts.append(f"top {safe(self.top_miner, 32)}")
        parts.append(f"paid {self.paid:,}")
        parts.append(f"{self.seconds:.1f}s")
        if self.recovered:
            parts.append(f"(resumed from stored {self.recovered})")
        return "  ".join(parts)


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def embeddings_to_bytes(emb: Embeddings, model_checksum: str, policy: str) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, vectors=emb.vectors, windows=emb.windows, tokens=emb.tokens, embedded=emb.embedded,
             meta=np.frombuffer(json.dumps({"checksum": model_checksum, "policy": policy}).encode(), dtype=np.uint8))
    return buf.getvalue()


def embeddings_from_bytes(data: bytes) -> tuple[Embeddings, dict[str, str]]:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        meta = json.loads(bytes(z["meta"]).decode())
        return Embeddings(z["vectors"], z["windows"], z["tokens"], z["embedded"]), meta


def embedder_policy(embedder: Embedder) -> str:
    policy = getattr(embedder, "long_texts", None)
    return policy.describe() if policy is not None and hasattr(policy, "describe") else "unknown"


def no_quorum_record(round_: Round, settings: Settings, details: dict[str, str], usable: int) -> dict[str, Any]:
    """A round below quorum: every answer listed, no evaluation, nobody paid."""
    from validator import __version__

    responses = []
    for i, r in enumerate(round_.responses):
        responses.append({
            "index": i, "miner": r.miner, "in_consensus": False, "reason": "no_quorum",
            "detail": details.get(r.miner), "error": r.error, "latency_s": float(r.latency_s),
            "confidence": r.confidence, "words": len(r.text.split()),
            "score": {"composite": 0.0}, "emissions": {"eligible": False, "amount": 0, "share": 0.0},
        })
    return {
        "schema": "consensus-validator/evaluation/1", "status": "no_quorum", "round_id": round_.round_id,
        "prompt": round_.prompt, "reference": round_.reference,
        "producer": {"package": "consensus-validator", "version": __version__},
        "config": settings.as_dict(),
        "consensus": {"score": None, "reached": False,
                      "note": f"no quorum: {usable} usable answer(s), the quorum is {settings.daemon.quorum}"},
        "members": [], "emissions": {"pool": 0, "total": 0}, "responses": responses,
        "heatmap": {"key": None}, "narrative": {"kind": "none", "text": ""}, "notes": [],
    }


def evaluate_record(round_: Round, settings: Settings, embedder: Embedder, details: dict[str, str], *,
                    lm: LMHandle | None = None, embeddings: Embeddings | None = None
                    ) -> tuple[dict[str, Any], RoundOutcome | None]:
    """The evaluation record of a queried round: below quorum a no-quorum record, else the full evaluation."""
    usable = sum(1 for r in round_.responses if r.error is None)
    if usable < settings.daemon.quorum:
        return no_quorum_record(round_, settings, details, usable), None
    outcome = run_round(round_, embedder, settings, lm=lm, embeddings=embeddings)
    record = build_record(outcome, settings, embedder)
    record["status"] = "ok"
    for item in record["responses"]:
        item["detail"] = details.get(item["miner"], item.get("detail"))
    return record, outcome


class Daemon:
    def __init__(self, *, store: Store, embedder: Embedder, settings: Settings, prompts: Sequence[PromptItem],
                 query: Query, lm: LMHandle | None = None, clock: Callable[[], float] = time.time,
                 presign: Callable[[str], str | None] | None = None, metrics=None,
                 state_dir: str | Path | None = None, stop: threading.Event | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.prompts = tuple(prompts)
        self.query = query
        self.lm = lm
        self.clock = clock
        self.presign = presign
        self.metrics = metrics
        self.stop = stop or threading.Event()
        self.mirror = Path(state_dir) / "ledger.json" if state_dir is not None else None
        self.ledger = self._load_ledger()

    # ---- state -----------------------------------------------------------------------------------
    def _load_ledger(self, retry_s: float = 5.0) -> Ledger:
        """The stored ledger; while the store is down, the local mirror; with neither, wait for the store."""
        while True:
            try:
                raw: bytes | None = self.store.get(keys.ledger())
            except KeyNotFound:
                raw = None
            except StoreError as exc:
                if self.mirror is not None and self.mirror.is_file():
                    log.warning("store unreachable (%s); resuming from the local ledger copy %s", exc, self.mirror)
                    return self._parse_ledger(self.mirror.read_bytes(), str(self.mirror))
                log.warning("store unreachable and no local ledger copy: waiting %.0f s before reading the ledger "
                            "again (%s)", retry_s, exc)
                if self.stop.wait(retry_s):
                    raise DaemonError("stopped while waiting for the store to read the ledger") from exc
                continue
            if raw is None:
                if self.mirror is not None and self.mirror.is_file():
                    # the store lost its ledger (or a new bucket) but this machine has one: never restart at 1
                    raise DaemonError(f"{keys.ledger()} is missing from the store but {self.mirror} exists; "
                                      f"restore the ledger or delete the local copy to start over")
                return Ledger(alpha=self.settings.daemon.moving_average_alpha)
            ledger = self._parse_ledger(raw, keys.ledger())
            if self.mirror is not None and self.mirror.is_file():
                local = self._parse_ledger(self.mirror.read_bytes(), str(self.mirror))
                if local.last_sequence > ledger.last_sequence:
                    ledger = local  # written after the store's copy (e.g. the store's was lost with a spool)
            if ledger.alpha != self.settings.daemon.moving_average_alpha:
                log.warning("ledger alpha %s differs from moving_average_alpha %s; the ledger's value is kept",
                            ledger.alpha, self.settings.daemon.moving_average_alpha)
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
            self.mirror.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.mirror.with_suffix(".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, self.mirror)
        self.store.put(keys.ledger(), data, "application/json")

    def round_id(self, sequence: int) -> str:
        return f"{self.settings.daemon.round_prefix}{sequence:06d}"

    def _stored_json(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.store.get(key))
        except KeyNotFound:
            return None
        except StoreError as exc:
            # Only a crash in the middle of this very round could have left something here; the
            # ledger never counted it, so asking again and overwriting it on upload is safe.
            log.warning("cannot check %s (%s); treating it as not stored", key, exc)
            return None

    def _check_ours(self, doc: dict[str, Any], key: str, sequence: int) -> None:
        marker = doc.get("daemon") if isinstance(doc, dict) else None
        if not isinstance(marker, dict) or marker.get("sequence") != sequence:
            raise DaemonError(f"{key} exists and was not written by this daemon for sequence {sequence}; "
                              f"it is left untouched. Use another daemon.round_prefix or another store.")

    # ---- one round -------------------------------------------------------------------------------
    def run_one(self) -> RoundReport:
        start = time.perf_counter()
        sequence = self.ledger.last_sequence + 1
        rid = self.round_id(sequence)
        record = self._stored_json(keys.evaluation(rid))
        stages: dict[str, float] = {}
        recovered = None
        latencies: tuple[float, ...] = ()
        if record is not None:
            self._check_ours(record, keys.evaluation(rid), sequence)
            recovered = "evaluation"
        else:
            doc = self._stored_json(keys.round_input(rid))
            if doc is not None:
                self._check_ours(doc, keys.round_input(rid), sequence)
                recovered = "input"
                round_ = parse_round(doc, keys.round_input(rid), self.settings.input)
                details = dict(doc["daemon"].get("failures", {}))
                started_at = doc["daemon"].get("started_at")
            else:
                started = self.clock()
                started_at = _utc(started)
                item = prompt_for(self.prompts, sequence)
                t = time.perf_counter()
                result = self.query(item.prompt)
                stages["query"] = time.perf_counter() - t
                round_ = Round(rid, item.prompt, result.responses, item.reference)
                details = dict(result.details)
                doc = round_to_json(round_)
                doc["daemon"] = {"sequence": sequence, "started_at": started_at, "failures": details}
                t = time.perf_counter()
                self.store.put(keys.round_input(rid), dumps(doc), "application/json")
                stages["persist"] = time.perf_counter() - t
            latencies = tuple(r.latency_s for r in round_.responses if r.error is None)
            record = self._evaluate(round_, sequence, started_at, details, stages)
        status = record.get("status", "ok")
        t = time.perf_counter()
        self.ledger = self.ledger.apply(sequence, rid, entries_from_record(record), no_quorum=status == "no_quorum")
        self._save_ledger()
        stages["ledger"] = time.perf_counter() - t
        report = self._report(sequence, rid, record, recovered, time.perf_counter() - start, stages, latencies)
        if self.metrics is not None:
            pending = getattr(self.store, "pending", None)
            if pending is not None:
                self.metrics.spool_pending.set(pending())
            failures = [r["error"] for r in record["responses"] if r.get("error")]
            self.metrics.observe_round(sequence=sequence, status=status, reached=report.reached,
                                       latencies=latencies, failures=failures, stages=stages)
        return report

    def _evaluate(self, round_: Round, sequence: int, started_at: str | None, details: dict[str, str],
                  stages: dict[str, float]) -> dict[str, Any]:
        rid = round_.round_id
        record, outcome = evaluate_record(round_, self.settings, self.embedder, details, lm=self.lm)
        t = time.perf_counter()
        if outcome is not None:
            stages.update(outcome.timings)
            t = time.perf_counter()
            if outcome.heatmap_png is not None:
                self.store.put(keys.heatmap(rid), outcome.heatmap_png, "image/png")
                record["heatmap"]["url"] = self.presign(keys.heatmap(rid)) if self.presign is not None else None
            self.store.put(keys.embeddings(rid), embeddings_to_bytes(
                outcome.embeddings, self.embedder.checksum, embedder_policy(self.embedder)),
                "application/octet-stream")
        record["daemon"] = {"sequence": sequence, "started_at": started_at}
        self.store.put(keys.evaluation(rid), dumps(record), "application/json")
        stages["persist"] = stages.get("persist", 0.0) + time.perf_counter() - t
        return record

    def _report(self, sequence: int, rid: str, record: dict[str, Any], recovered: str | None, seconds: float,
                stages: dict[str, float], latencies: tuple[float, ...]) -> RoundReport:
        responses = record["responses"]
        failures: dict[str, int] = {}
        for r in responses:
            if r.get("error"):
                failures[r["error"]] = failures.get(r["error"], 0) + 1
        consensus = record.get("consensus", {})
        top_index = record.get("emissions", {}).get("top_index")
        top = responses[top_index]["miner"] if isinstance(top_index, int) and 0 <= top_index < len(responses) else None
        return RoundReport(
            sequence=sequence, round_id=rid, status=record.get("status", "ok"), recovered=recovered,
            miners=len(responses), usable=len(responses) - sum(failures.values()), failures=failures,
            consensus_score=consensus.get("score"), reached=bool(consensus.get("reached")), top_miner=top,
            paid=int(record.get("emissions", {}).get("total", 0)), seconds=seconds, stages=stages,
            latencies=latencies)

    # ---- the loop --------------------------------------------------------------------------------
    def run(self, rounds: int = 0, stop: threading.Event | None = None,
            on_round: Callable[[RoundReport], None] | None = None) -> list[RoundReport]:
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


def miners_query(miners: Sequence[Any], settings: Settings) -> Query:
    """The daemon's query edge over real miners (``validator.miners``): concurrent, timed, every failure kept."""
    from validator.miners import query_miners, to_response

    d = settings.daemon

    def query(prompt: str) -> QueryResult:
        t = time.perf_counter()
        answers = query_miners(prompt, miners, request_timeout_s=d.request_timeout_s, deadline_s=d.round_deadline_s,
                               max_answer_chars=d.max_answer_chars, max_tokens=d.max_tokens)
        details = {a.hotkey: a.detail or a.failure.value for a in answers if a.failure is not None}
        return QueryResult(tuple(to_response(a) for a in answers), details, time.perf_counter() - t)

    return query
