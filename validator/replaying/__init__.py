"""Re-evaluating stored rounds at any scale: the per-round job and the engines that run it.

    selection.py   ``RoundSelection`` and the input keys it selects, in the store's order
    spec.py        ``Job`` (a first evaluation or a replay), ``Resources``, ``WorkSpec`` (what a worker gets)
    jobs.py        one stored round: prepare -> ``validator.round.evaluate`` -> ``RoundWriter`` -> ``JobResult``
    diff.py        a re-evaluated round against its original: ``validator.records.replay_summary.RoundDiffRow``
    engine.py      ``run``: batches, the ``Executor`` protocol and ``LocalExecutor`` (in this process)
    ray_engine.py  ``RayExecutor``: batches as Ray tasks, a local runtime or a cluster, bounded in-flight work
    original_settings.py  which settings a re-evaluation without the miners takes from the original record

The drivers, one module each: ``replay_run.py`` (a rounds file, or a store's rounds again), ``whatif_run.py``
(stored rounds under changed settings), ``committee_whatif.py`` (stored rounds split into committees; its
``committees.json`` is ``committees_report.py``).

The drivers fold the results: ``validator.replaying.replay_run`` into a file replay's
summary and a store replay's diff, ``validator.replaying.whatif_run`` into the what-if
report. Imports point one way: the drivers -> engine and ray_engine -> jobs -> spec ->
selection (only the drivers import the engines).
"""

from __future__ import annotations

from validator.replaying.engine import BATCH, Executor, LocalExecutor, batches, run
from validator.replaying.jobs import JobResult, Side, run_batch
from validator.replaying.selection import RoundSelection, round_keys, selected_keys
from validator.replaying.spec import Job, Resources, WorkSpec, without_secrets

__all__ = [
    "BATCH",
    "Executor",
    "Job",
    "LocalExecutor",
    "Resources",
    "JobResult",
    "RoundSelection",
    "Side",
    "WorkSpec",
    "batches",
    "round_keys",
    "run",
    "run_batch",
    "selected_keys",
    "without_secrets",
]
