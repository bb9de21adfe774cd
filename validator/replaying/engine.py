"""Engines: run ``work.run_batch`` over the stored rounds and hand back the results in round order.

``in-process`` runs the batches one after the other with the command's own
store and embedder. ``ray`` submits each batch as a Ray task (``ray_engine``)
that opens the store and the model in its worker process once, keeps a
bounded number of tasks in flight (the driver never holds the store, only
the compact results of the batches under way), and yields the results in
the order of the keys, so the ledger fold at the end sees the rounds in the
same order as the in-process run. Both engines cut the keys into the same
batches, so each round is evaluated by the same calls whatever the engine:
the results, and every byte written, are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from validator.replaying.work import Resources, RoundResult, WorkSpec, run_batch

ENGINES = ("inprocess", "ray")
BATCH = 8  # rounds per task: enough to amortise a task's overhead, few enough to spread 2 workers


@dataclass(frozen=True)
class RayOptions:
    """How the Ray engine reaches or starts its cluster."""

    address: str | None = None  # None: start a local Ray runtime for this run
    num_cpus: int | None = None  # the local runtime's CPUs (None: Ray's count of this machine's)
    max_in_flight: int | None = None  # tasks submitted and not yet collected (None: 2 per cluster CPU)


def batches(keys: Sequence[str], size: int = BATCH) -> list[list[str]]:
    """``keys`` cut into consecutive batches of ``size`` (the last one shorter)."""
    return [list(keys[i:i + size]) for i in range(0, len(keys), size)]


def run(spec: WorkSpec, keys: Sequence[str], *, engine: str = "inprocess", resources: Resources | None = None,
        ray: RayOptions = RayOptions(), on_done: Callable[[int], None] | None = None) -> Iterator[RoundResult]:
    """Every round's result, in the order of ``keys``; ``on_done(n)`` after each batch of ``n`` rounds.

    ``resources``: the in-process engine's opened store and embedder (built from ``spec`` when None).
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if engine == "ray":
        from validator.replaying.ray_engine import run_ray

        yield from run_ray(spec, batches(keys), ray, on_done)
        return
    if resources is None:
        from validator.replaying.work import resources_for

        resources = resources_for(spec)
    for batch in batches(keys):
        results = run_batch(resources, spec.replay_id, spec.selection, batch, spec.first)
        if on_done is not None:
            on_done(len(batch))
        yield from results
