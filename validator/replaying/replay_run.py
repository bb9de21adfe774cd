"""Replay: a rounds file evaluated for the first time, or stored rounds evaluated again, by any engine.

Both are drivers of the engine (``validator.replaying``): they pick the
input keys, hand them to an executor (in this process by default, or Ray)
and fold the results, in round order, into their report.

- ``replay_file``: every good line's round is stored as its input, then
  evaluated at its own keys (input, heatmap, embeddings, record); the run's
  ``summary.json`` holds per-miner totals and every failed line. A bad line
  is reported with its line and field and the others go on.
- ``replay_store``: the selected stored rounds are re-evaluated without
  asking miners; new records go beside the originals
  (``rounds/<round>/replays/<replay-id>/``, never overwriting) and
  ``replays/<replay-id>.json`` holds the diff against the originals.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from consensus.embedder import Embedder
from storage import keys
from storage.base import Store
from storage.codec import dumps
from validator.records.failed_round import Failure
from validator.records.replay_summary import (
    EmbeddingModel,
    MinerTotals,
    ReplaySummaryFile,
    RoundDiffRow,
    RunSetup,
    StoreReplayFile,
)
from validator.records.round_input import read_rounds
from validator.records.writer import RoundWriter
from validator.replaying.diff import diff_records
from validator.replaying.engine import Executor, executor_for, run
from validator.replaying.selection import RoundSelection, round_keys, select
from validator.replaying.spec import Job
from validator.settings import Settings

if TYPE_CHECKING:
    from validator.round.stages import LMHandle

__all__ = [
    "ReplaySummary",
    "RoundSelection",
    "StoreReplay",
    "diff_records",
    "replay_file",
    "replay_id_for",
    "replay_store",
]

log = logging.getLogger(__name__)


@dataclass
class ReplaySummary:
    source: str
    evaluated: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    answers: dict[str, list[tuple[bool, float, int]]] = field(default_factory=dict)  # per miner, by round
    reached: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures

    def add(self, round_id: str, reached: bool, rows: Iterable[tuple[str, bool, float, int]]) -> None:
        """Count one evaluated round: ``rows`` is (miner, in consensus, composite, amount) per response."""
        self.evaluated.append(round_id)
        self.reached += int(reached)
        for miner, in_consensus, composite, amount in rows:
            self.answers.setdefault(miner, []).append((in_consensus, composite, amount))

    @property
    def miners(self) -> dict[str, MinerTotals]:
        """Per miner over the rounds counted so far (``MinerTotals.of``)."""
        return {miner: MinerTotals.of(answers) for miner, answers in self.answers.items()}

    def file(self, settings: Settings, model: tuple[str, str]) -> ReplaySummaryFile:
        """What ``summary.json`` holds (``validator.records.replay_summary``)."""
        return ReplaySummaryFile(
            source=self.source,
            evaluated=tuple(self.evaluated),
            failed=len(self.failures),
            consensus_reached=self.reached,
            failures=tuple(f.line_row() for f in self.failures),
            miners=self.miners,
            run=RunSetup(EmbeddingModel(*model), settings.as_dict()),
        )


def replay_file(
    path: str | Path,
    store: Store,
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    lm: LMHandle | None = None,
    executor: Executor | None = None,
    on_total: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
) -> ReplaySummary:
    """Evaluate every round of ``path`` into ``store`` (with ``embedder`` and ``lm`` here, or by ``executor``).

    ``on_total(n)`` is told the number of good lines once they are stored, ``on_done(k)`` as rounds finish.
    """
    engine = executor_for(store, embedder, lm, executor)
    summary = ReplaySummary(source=Path(path).name)
    failures: list[Failure] = []
    lines: dict[str, int] = {}
    writer = RoundWriter(store, None)
    for item in read_rounds(path, settings.input):
        if item.error is not None:
            log.debug("%s", item.error)  # the command prints each failure once, at the end
            failures.append(Failure(str(item.error), line=item.line))
            continue
        assert item.round is not None
        lines[item.round.round_id] = item.line
        writer.write_input(item.round)
    if on_total is not None:
        on_total(len(lines))
    for result in run(engine, Job.first(), settings, [keys.round_input(rid) for rid in lines], on_done):
        if result.status != "ok" or result.new is None:
            failures.append(Failure(result.error or "", result.round_id, line=lines.get(result.round_id or "", 0)))
            continue
        assert result.round_id is not None
        summary.add(result.round_id, result.new.reached, result.new.rows)
    summary.failures = sorted(failures, key=lambda f: f.line or 0)  # by line, as the file reads
    store.put(keys.summary(), dumps(summary.file(settings, engine.model(settings)).to_json()), "application/json")
    return summary


# ---- replay from a store: re-evaluate stored rounds, write beside the originals, diff -------------------------


@dataclass
class StoreReplay:
    replay_id: str
    diffs: list[RoundDiffRow] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    skipped: int = 0

    def miner_changes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.diffs:
            for miner, (before, after) in d.emissions.items():
                out[miner] = out.get(miner, 0) + after - before
        return out

    def file(self, settings: Settings, model: tuple[str, str]) -> StoreReplayFile:
        """What ``replays/<replay>.json`` holds (``validator.records.replay_summary``)."""
        return StoreReplayFile(
            replay_id=self.replay_id,
            rounds=tuple(self.diffs),
            failures=tuple(f.store_row() for f in self.failures),
            emission_changes=self.miner_changes(),
            run=RunSetup(EmbeddingModel(*model), settings.as_dict()),
        )


def replay_id_for(settings: Settings, now: str) -> str:
    digest = hashlib.sha256(json.dumps(settings.as_dict(), sort_keys=True).encode()).hexdigest()[:8]
    return f"replay-{now}-{digest}"


def replay_store(
    store: Store,
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    replay_id: str,
    selection: RoundSelection = RoundSelection(),
    lm: LMHandle | None = None,
    executor: Executor | None = None,
    on_total: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
) -> StoreReplay:
    """Re-evaluate stored rounds without asking miners; new records go beside the originals.

    Stored embeddings are reused when their model checksum and long-text
    policy match the current embedder. A replay never overwrites: a round
    whose new record is already stored with the same bytes (a re-run, a
    retried task) counts as re-evaluated, one with other bytes fails.
    Rounds outside the selection count as skipped.
    """
    engine = executor_for(store, embedder, lm, executor)
    found = round_keys(store)
    todo = select(found, selection)
    result = StoreReplay(replay_id, skipped=len(found) - len(todo))
    if on_total is not None:
        on_total(len(todo))
    for r in run(engine, Job.replay(replay_id, selection), settings, todo, on_done):
        if r.status == "skipped":
            result.skipped += 1
        elif r.status == "ok" and r.diff is not None:
            result.diffs.append(r.diff)
        else:
            result.failures.append(Failure(r.error or "", r.round_id, key=r.key))
    store.put(
        keys.replay_report(replay_id),
        dumps(result.file(settings, engine.model(settings)).to_json()),
        "application/json",
    )
    return result
