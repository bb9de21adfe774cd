"""``validator replay ROUNDS.jsonl --engine ray``: a rounds file's first evaluation, spread over an engine.

The driver streams the file once: every good line's round goes into the
output store as its ``input.json`` (a bad line is a failure with its line
number, as in-process); then the engine evaluates the stored inputs in
batches (``evaluate_first`` on the workers: embedding, evaluation, heatmap,
and the round's artefacts at its own keys, as ``validator.replay.replay_file``
writes them), and the driver folds the compact results into ``summary.json``
in file order. Records, heatmaps, embeddings and the summary are the bytes
of the in-process run (``tests/validator/test_ray_engine.py``).

A retried task writes the same bytes again under the same keys, so a worker
that died mid-batch leaves nothing behind that the retry does not replace.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from storage import keys
from storage.base import KeyNotFound, Store
from storage.codec import dumps
from validator.replay import ReplaySummary, outcome_rows, write_round
from validator.replaying.engine import RayOptions, run
from validator.replaying.work import Resources, WorkSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FirstResult:
    """One round's first evaluation, as the summary needs it (never the texts)."""

    key: str
    round_id: str | None
    error: str | None = None
    reached: bool = False
    rows: tuple[tuple[str, bool, float, int], ...] = ()  # (miner, in consensus, composite, amount) per response


def evaluate_first(res: Resources, key: str) -> FirstResult:
    """Evaluate the stored input under ``key`` and write its artefacts at the round's own keys."""
    from validator.round import build_record, run_round
    from validator.rounds import RoundError, parse_round

    try:
        round_ = parse_round(json.loads(res.store.get(key)), key, res.settings.input)
    except (ValueError, RoundError, KeyNotFound) as exc:
        return FirstResult(key, None, error=f"unreadable input: {exc}")
    try:
        outcome = run_round(round_, res.embedder, res.settings)
        write_round(res.store, round_, outcome, build_record(outcome, res.settings, res.embedder), res.embedder,
                    with_input=False)  # the driver stored it
    except Exception as exc:  # one round's failure must not lose the others
        log.exception("round %r: evaluation failed", round_.round_id)
        return FirstResult(key, round_.round_id, error=f"evaluation failed: {type(exc).__name__}: {exc}")
    return FirstResult(key, round_.round_id, reached=bool(outcome.evaluation.consensus.reached),
                       rows=tuple(outcome_rows(outcome)))


def replay_file_on(path: str | Path, store: Store, spec: WorkSpec, *, engine: str = "ray",
                   ray: RayOptions = RayOptions(), resources: Resources | None = None,
                   on_total: Callable[[int], None] | None = None,
                   on_done: Callable[[int], None] | None = None) -> ReplaySummary:
    """The rounds of ``path`` evaluated by ``engine`` into ``store`` (``spec.first`` must be set)."""
    from validator.rounds import read_rounds, round_to_json

    if not spec.first:
        raise ValueError("replay_file_on needs a WorkSpec with first=True")
    summary = ReplaySummary(source=Path(path).name)
    failures: list[dict] = []
    lines: dict[str, int] = {}
    for item in read_rounds(path, spec.settings.input):
        if item.error is not None:
            log.error("%s", item.error)
            failures.append({"line": item.line, "error": str(item.error)})
            continue
        assert item.round is not None
        lines[item.round.round_id] = item.line
        store.put(keys.round_input(item.round.round_id), dumps(round_to_json(item.round)), "application/json")
    if on_total is not None:
        on_total(len(lines))
    for result in run(spec, [keys.round_input(rid) for rid in lines], engine=engine, resources=resources, ray=ray,
                      on_done=on_done):
        assert isinstance(result, FirstResult)
        if result.error is not None:
            line = lines.get(result.round_id or "", 0)
            failures.append({"line": line, "round_id": result.round_id, "error": result.error})
            continue
        assert result.round_id is not None
        summary.add(result.round_id, result.reached, result.rows)
    summary.failures = sorted(failures, key=lambda f: f["line"])  # the in-process order: by line
    if resources is not None:
        embedder = resources.embedder
    else:  # the workers' model, for its name and checksum: it does not open (embedding/side_by_side.py)
        from validator.app import load_configured_embedder

        embedder = (spec.embedder_factory or load_configured_embedder)(spec.settings)
    store.put(keys.summary(), dumps(summary.as_dict(spec.settings, embedder)), "application/json")
    return summary

