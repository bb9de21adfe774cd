"""Offline replay: evaluate every round of a JSONL file and store the results.

Per round it writes the input, the evaluation record and the heatmap; for
the run, ``summary.json`` with per-miner totals and every failed line. A bad
round is reported with its line and field and the others go on.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from consensus.embedder import Embedder
from storage import keys
from storage.base import Store
from storage.codec import dumps
from validator import record as rec
from validator.artefacts import get_record, put_embeddings, put_record, reusable_embeddings
from validator.round import build_record, run_round
from validator.rounds import read_rounds, round_to_json
from validator.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class ReplayTotals:
    rounds: int = 0
    in_consensus: int = 0
    composite_sum: float = 0.0
    emissions: int = 0

    def as_dict(self) -> dict:
        return {
            "rounds": self.rounds,
            "in_consensus": self.in_consensus,
            "in_consensus_rate": self.in_consensus / self.rounds if self.rounds else 0.0,
            "mean_composite": self.composite_sum / self.rounds if self.rounds else 0.0,
            "emissions": self.emissions,
        }


@dataclass
class ReplaySummary:
    source: str
    evaluated: list[str] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)
    miners: dict[str, ReplayTotals] = field(default_factory=dict)
    reached: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures

    def add(self, round_id: str, reached: bool, rows: Iterable[tuple[str, bool, float, int]]) -> None:
        """Count one evaluated round: ``rows`` is (miner, in consensus, composite, amount) per response."""
        self.evaluated.append(round_id)
        self.reached += int(reached)
        for miner, in_consensus, composite, amount in rows:
            totals = self.miners.setdefault(miner, ReplayTotals())
            totals.rounds += 1
            totals.in_consensus += int(in_consensus)
            totals.composite_sum += composite
            totals.emissions += amount

    def as_dict(self, settings: Settings, embedder: Embedder) -> dict:
        return {
            "schema": "consensus-validator/replay-summary/1",
            "source": self.source,
            "rounds": {"evaluated": len(self.evaluated), "failed": len(self.failures),
                       "consensus_reached": self.reached},
            "evaluated": self.evaluated,
            "failures": self.failures,
            "miners": {m: t.as_dict() for m, t in sorted(self.miners.items())},
            "embedding": {"model": embedder.name, "checksum_sha256": embedder.checksum},
            "config": settings.as_dict(),
        }


def outcome_rows(outcome) -> list[tuple[str, bool, float, int]]:
    """(miner, in consensus, composite, amount) of every response of an evaluated round."""
    return [(res.miner, bool(res.in_consensus), res.score.composite, int(outcome.allocation.amounts[res.index]))
            for res in outcome.evaluation.results]


def write_round(store: Store, round_, outcome, record: rec.RoundRecord, embedder: Embedder, *,
                with_input: bool = True) -> None:
    """A file round's artefacts at its own keys: input (unless already stored), heatmap, embeddings, record."""
    if with_input:
        store.put(keys.round_input(round_.round_id), dumps(round_to_json(round_)), "application/json")
    if outcome.heatmap_png is not None:
        store.put(keys.heatmap(round_.round_id), outcome.heatmap_png, "image/png")
    put_embeddings(store, keys.embeddings(round_.round_id), outcome.embeddings, embedder)
    put_record(store, keys.evaluation(round_.round_id), record)


def replay_file(path: str | Path, store: Store, settings: Settings, embedder: Embedder,
                on_line: Callable[[int], None] | None = None, lm=None) -> ReplaySummary:
    """Evaluate every round in ``path`` into ``store``; ``on_line`` is called per line (progress)."""
    from validator.pipelining import embed_ahead, round_texts

    summary = ReplaySummary(source=Path(path).name)
    # round k+1 is embedded on a background thread while round k is evaluated, rendered and written
    normalise = settings.consensus.normalise_text
    ahead = embed_ahead(read_rounds(path, settings.input),
                        lambda item: None if item.round is None else round_texts(item.round, normalise), embedder)
    for item, embedded in ahead:
        if on_line is not None:
            on_line(item.line)
        if item.error is not None:
            log.error("%s", item.error)
            summary.failures.append({"line": item.line, "error": str(item.error)})
            continue
        round_ = item.round
        assert round_ is not None
        try:
            outcome = run_round(round_, embedder, settings, lm=lm, embeddings=embedded())
            write_round(store, round_, outcome, build_record(outcome, settings, embedder), embedder)
        except Exception as exc:  # one round's failure must not lose the others
            log.exception("line %d (round %r): evaluation failed", item.line, round_.round_id)
            summary.failures.append({"line": item.line, "round_id": round_.round_id,
                                     "error": f"evaluation failed: {type(exc).__name__}: {exc}"})
            continue
        summary.add(round_.round_id, outcome.evaluation.consensus.reached, outcome_rows(outcome))
    store.put(keys.summary(), dumps(summary.as_dict(settings, embedder)), "application/json")
    return summary


# ---- replay from a store: re-evaluate stored rounds, write beside the originals, diff -------------------------

@dataclass(frozen=True)
class RoundSelection:
    round_ids: frozenset[str] | None = None
    since: str | None = None  # ISO 8601 UTC, inclusive (daemon rounds' started_at)
    until: str | None = None  # exclusive

    def keeps(self, round_id: str, started_at: str | None) -> bool:
        if self.round_ids is not None and round_id not in self.round_ids:
            return False
        if self.since is None and self.until is None:
            return True
        if started_at is None:
            return False  # rounds without a start time (replayed from files) are outside any time range
        moment = _parse_time(started_at)
        return (self.since is None or moment >= _parse_time(self.since)) and \
            (self.until is None or moment < _parse_time(self.until))


def _parse_time(text: str):
    from datetime import datetime, timezone

    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@dataclass
class RoundDiff:
    round_id: str
    joined: list[str] = field(default_factory=list)  # moved into consensus
    left: list[str] = field(default_factory=list)  # moved out of consensus
    emissions: dict[str, tuple[int, int]] = field(default_factory=dict)  # miner -> (before, after), changed only
    consensus: tuple[float | None, float | None] = (None, None)
    embeddings_reused: bool = False
    original: bool = True  # an original evaluation existed

    def as_dict(self) -> dict:
        return {"round_id": self.round_id, "joined": self.joined, "left": self.left,
                "emissions": {m: {"before": b, "after": a, "change": a - b} for m, (b, a) in self.emissions.items()},
                "consensus_before": self.consensus[0], "consensus_after": self.consensus[1],
                "embeddings_reused": self.embeddings_reused, "original": self.original}


def diff_records(before: rec.RoundRecord | None, after: rec.RoundRecord) -> RoundDiff:
    def by_miner(record: rec.RoundRecord | None) -> dict[str, tuple[bool, int]]:
        if record is None:
            return {}
        return {r.miner: (r.in_consensus, r.emissions.amount) for r in record.responses}

    old, new = by_miner(before), by_miner(after)
    diff = RoundDiff(after.round_id, original=before is not None,
                     consensus=(None if before is None else before.consensus.score, after.consensus.score))
    for miner in sorted(set(old) | set(new)):
        was_in, was_paid = old.get(miner, (False, 0))
        now_in, now_paid = new.get(miner, (False, 0))
        if now_in and not was_in:
            diff.joined.append(miner)
        if was_in and not now_in:
            diff.left.append(miner)
        if was_paid != now_paid:
            diff.emissions[miner] = (was_paid, now_paid)
    return diff


@dataclass
class StoreReplay:
    replay_id: str
    diffs: list[RoundDiff] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)
    skipped: int = 0

    def miner_changes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.diffs:
            for miner, (before, after) in d.emissions.items():
                out[miner] = out.get(miner, 0) + after - before
        return out

    def as_dict(self, settings: Settings, embedder: Embedder) -> dict:
        return {"schema": "consensus-validator/replay-diff/1", "replay_id": self.replay_id,
                "rounds": [d.as_dict() for d in self.diffs], "failures": self.failures,
                "emission_changes": self.miner_changes(),
                "embedding": {"model": embedder.name, "checksum_sha256": embedder.checksum},
                "config": settings.as_dict()}


def replay_id_for(settings: Settings, now: str) -> str:
    import hashlib
    import json as _json

    digest = hashlib.sha256(_json.dumps(settings.as_dict(), sort_keys=True).encode()).hexdigest()[:8]
    return f"replay-{now}-{digest}"


def replay_store(store: Store, settings: Settings, embedder: Embedder, *, replay_id: str,
                 selection: RoundSelection = RoundSelection(), lm=None,
                 on_round: Callable[[str], None] | None = None) -> StoreReplay:
    """Re-evaluate stored rounds without asking miners; new records go beside the originals.

    Stored embeddings are reused when their model checksum and long-text
    policy match the current embedder. An existing replay with the same id is
    never overwritten (the round is reported as failed).
    """
    import json as _json

    from validator.daemon import evaluate_record
    from validator.rounds import RoundError, parse_round

    result = StoreReplay(replay_id)
    for key in store.list("rounds/"):
        if not key.endswith("/input.json") or key.count("/") != 2:
            continue
        try:
            doc = _json.loads(store.get(key))
            round_ = parse_round(doc, key, settings.input)
        except (ValueError, RoundError) as exc:
            result.failures.append({"key": key, "error": f"unreadable input: {exc}"})
            continue
        marker = doc.get("daemon") if isinstance(doc.get("daemon"), dict) else {}
        if not selection.keeps(round_.round_id, marker.get("started_at")):
            result.skipped += 1
            continue
        if on_round is not None:
            on_round(round_.round_id)
        rid = round_.round_id
        target = keys.replay_evaluation(rid, replay_id)
        if store.exists(target):
            result.failures.append({"round_id": rid, "error": f"{target} exists; replays never overwrite"})
            continue
        embeddings = reusable_embeddings(store, rid, embedder, len(round_.responses))
        try:
            record, outcome = evaluate_record(round_, settings, embedder, dict(marker.get("failures", {})), lm=lm,
                                              embeddings=embeddings, canary=marker.get("canary") is True)
        except Exception as exc:  # one round's failure must not lose the others
            log.exception("round %r: re-evaluation failed", rid)
            result.failures.append({"round_id": rid, "error": f"evaluation failed: {type(exc).__name__}: {exc}"})
            continue
        record = dataclasses.replace(record, replay=rec.ReplayMarker(
            replay_id=replay_id, of=keys.evaluation(rid), embeddings_reused=embeddings is not None))
        if embeddings is None and outcome is not None:  # another model or policy: keep what this replay used
            put_embeddings(store, keys.replay_embeddings(rid, replay_id), outcome.embeddings, embedder)
        put_record(store, target, record)
        try:
            original = get_record(store, keys.evaluation(rid))
        except (OSError, ValueError):  # none (a crash before its commit) or unreadable: everything is new
            original = None
        diff = diff_records(original, record)
        diff.embeddings_reused = embeddings is not None
        result.diffs.append(diff)
    store.put(keys.replay_report(replay_id), dumps(result.as_dict(settings, embedder)), "application/json")
    return result
