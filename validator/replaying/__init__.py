"""Re-evaluating stored rounds at any scale: the per-round work and the engines that run it.

    work.py        one batch of stored rounds -> new records beside the originals (idempotent writes) and
                   compact results (``RoundResult``) for the fold; ``WorkSpec``, what a worker is handed
    engine.py      ``run``: the results in round order, in-process or on Ray, in the same batches
    ray_engine.py  the Ray tasks, a local runtime or a cluster, bounded in-flight work

``validator.whatif`` folds the results into the what-if report; ``validator.replaying.store_replay``
into ``validator replay STORE``'s diff.
"""

from __future__ import annotations

from validator.replaying.engine import ENGINES, RayOptions, run
from validator.replaying.work import Resources, RoundResult, WorkSpec, put_once, without_secrets

__all__ = ["ENGINES", "RayOptions", "Resources", "RoundResult", "WorkSpec", "put_once", "run", "without_secrets"]
