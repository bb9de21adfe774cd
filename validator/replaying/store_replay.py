"""``validator replay STORE --engine ray``: the store replay's diff, from results computed by any engine.

The rounds are re-evaluated by ``work.run_batch`` (the same records as
``validator.replay.replay_store`` writes, plus the new heatmap) and folded
here, in round order, into the same ``StoreReplay`` and the same
``replays/<replay-id>.json``. A round whose new record already holds the
same bytes (a retried task, a re-run) counts as re-evaluated; other bytes
fail that round (replays never overwrite).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Callable

from storage import keys
from storage.base import Store
from storage.codec import dumps
from validator.replay import StoreReplay
from validator.replaying.engine import RayOptions, run
from validator.replaying.work import Resources, WorkSpec
from validator.whatif import selected_keys


def replay_store_with(store: Store, spec: WorkSpec, *, engine: str = "inprocess",
                      resources: Resources | None = None, ray: RayOptions = RayOptions(),
                      on_total: Callable[[int], None] | None = None,
                      on_done: Callable[[int], None] | None = None) -> StoreReplay:
    """Re-evaluate the selected rounds with ``engine`` and store the replay's diff report."""
    todo = selected_keys(store, spec.selection)
    if on_total is not None:
        on_total(len(todo))
    result = StoreReplay(spec.replay_id)
    model = ("unknown", "unknown")
    for r in run(spec, todo, engine=engine, resources=resources, ray=ray, on_done=on_done):
        if r.status == "skipped":
            result.skipped += 1
        elif r.status == "ok" and r.diff is not None:
            result.diffs.append(r.diff)
            model = r.model or model
        elif r.round_id is None:
            result.failures.append({"key": r.key, "error": r.error})
        else:
            result.failures.append({"round_id": r.round_id, "error": r.error})
    embedder = SimpleNamespace(name=model[0], checksum=model[1])
    store.put(keys.replay_report(spec.replay_id), dumps(result.as_dict(spec.settings, embedder)), "application/json")
    return result
