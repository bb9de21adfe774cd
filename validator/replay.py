"""Offline replay: evaluate every round of a JSONL file and store the results.

Per round it writes the input, the evaluation record and the heatmap; for
the run, ``summary.json`` with per-miner totals and every failed line. A bad
round is reported with its line and field and the others go on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from consensus.embed import Embedder
from storage import keys
from storage.base import Store
from storage.codec import dumps
from validator.round import build_record
from validator.round import run_round
from validator.rounds import read_rounds, round_to_json
from validator.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class MinerTotals:
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
    miners: dict[str, MinerTotals] = field(default_factory=dict)
    reached: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures

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


def replay_file(path: str | Path, store: Store, settings: Settings, embedder: Embedder,
                on_line: Callable[[int], None] | None = None, lm=None) -> ReplaySummary:
    """Evaluate every round in ``path`` into ``store``; ``on_line`` is called per line (progress)."""
    summary = ReplaySummary(source=Path(path).name)
    for item in read_rounds(path, settings.input):
        if on_line is not None:
            on_line(item.line)
        if item.error is not None:
            log.error("%s", item.error)
            summary.failures.append({"line": item.line, "error": str(item.error)})
            continue
        round_ = item.round
        assert round_ is not None
        try:
            outcome = run_round(round_, embedder, settings, lm=lm)
            record = build_record(outcome, settings, embedder)
            store.put(keys.round_input(round_.round_id), dumps(round_to_json(round_)), "application/json")
            if outcome.heatmap_png is not None:
                store.put(keys.heatmap(round_.round_id), outcome.heatmap_png, "image/png")
            store.put(keys.evaluation(round_.round_id), dumps(record), "application/json")
        except Exception as exc:  # one round's failure must not lose the others
            log.exception("line %d (round %r): evaluation failed", item.line, round_.round_id)
            summary.failures.append({"line": item.line, "round_id": round_.round_id,
                                     "error": f"evaluation failed: {type(exc).__name__}: {exc}"})
            continue
        summary.evaluated.append(round_.round_id)
        summary.reached += int(outcome.evaluation.consensus.reached)
        for res in outcome.evaluation.results:
            totals = summary.miners.setdefault(res.miner, MinerTotals())
            totals.rounds += 1
            totals.in_consensus += int(res.in_consensus)
            totals.composite_sum += res.score.composite
            totals.emissions += outcome.allocation.amounts[res.index]
    store.put(keys.summary(), dumps(summary.as_dict(settings, embedder)), "application/json")
    return summary
