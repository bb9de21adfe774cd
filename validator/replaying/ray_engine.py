"""The Ray engine: batches of stored rounds as Ray tasks, results streamed back in round order.

``RayExecutor`` is the engine's executor (``validator.replaying.engine``).
Without an address, ``ray_session`` starts a local Ray runtime for the run
(``num_cpus`` workers, no dashboard, quiet logs) and shuts it down after;
with one (``ray://...``, ``host:port`` or ``auto``) it joins that cluster
and leaves it running. The ``WorkSpec`` (store URI, settings without
secrets, the job, factories: a few kilobytes) travels by value in every
task's arguments, which Ray inlines: a reference from ``ray.put`` failed
every task with OwnerDiedError when the driver had run a local runtime
before joining a cluster (tests/validator/test_ray_engine.py, then
test_ray_cluster.py, in one process: 2026-11-29). Each worker opens the
store and loads the model once (``spec.resources_for``) and keeps them for
its later tasks.

A task whose worker dies is retried by Ray (``MAX_RETRIES``); a replay's
writes are idempotent (``validator.records.writer.put_once``) and a first
evaluation writes the same bytes again, so a retry leaves nothing behind
that differs. At most ``max_in_flight`` batches are submitted or waiting to
be folded at any time: the driver's memory does not grow with the store.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from embedding.side_by_side import usable_cores
from validator.app import load_configured_embedder
from validator.replaying.jobs import JobResult, run_batch
from validator.replaying.spec import EmbedderFactory, Job, StoreFactory, WorkSpec, resources_for, without_secrets
from validator.settings import Settings

MAX_RETRIES = 3  # a batch whose worker process died is run again, up to this many times
START_ATTEMPTS = 3  # ray.init tries, when the local runtime's raylet registers too slowly


@dataclass(frozen=True)
class RayOptions:
    """How the Ray engine reaches or starts its cluster."""

    address: str | None = None  # None: start a local Ray runtime for this run
    num_cpus: int | None = None  # the local runtime's CPUs (None: the cores this process may run on, usable_cores)
    max_in_flight: int | None = None  # tasks submitted and not yet collected (None: 2 per cluster CPU)


class RayEngineError(RuntimeError):
    """Ray could not be started or reached, or a batch failed on every retry."""


@contextlib.contextmanager
def ray_session(options: RayOptions) -> Iterator[None]:
    """Ray initialised for the block: the cluster at ``options.address``, else a local runtime of its own.

    An already initialised Ray (a test's, a notebook's) is used as it is and left running.
    """
    # lazy: start-up cost, Ray takes 3.9 s to import
    import ray

    if ray.is_initialized():
        yield
        return
    kwargs = dict(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False, configure_logging=True)
    for attempt in range(1, START_ATTEMPTS + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # a failed start's processes (_forget_failed_start)
            try:
                if options.address:
                    ray.init(address=options.address, **kwargs)
                else:
                    # workers inherit this process's environment: the store's credentials stay out of task arguments
                    # Ray's own count is the machine's cores, whatever the affinity (taskset, a cpuset): one worker
                    # per core this process may run on, so the workers never queue for a core
                    ray.init(num_cpus=options.num_cpus or usable_cores(), **kwargs)
                break
            except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...: one clear line
                ray.shutdown()
                _forget_failed_start(exc)
                # Ray waits a fixed 30 s for its raylet to register: a busy machine can miss it, and the next try
                # usually makes it; anything else is final
                if attempt >= START_ATTEMPTS or "timed out during startup" not in str(exc):
                    where = options.address or "a local runtime"
                    raise RayEngineError(f"cannot start Ray ({where}): {type(exc).__name__}: {exc}") from exc
    try:
        yield
    finally:
        ray.shutdown()


def _forget_failed_start(exc: BaseException) -> None:
    """Let go, now, of what a failed ``ray.init`` left in its frames: the ``Popen`` objects of the processes it
    started, whose ``__del__`` would warn "subprocess N is still running" wherever they were freed (a test's setup,
    under warnings as errors: seen at load average 22, when the raylet gave up waiting for its agent and the next
    try started). Called where ResourceWarning is ignored."""
    traceback.clear_frames(exc.__traceback__)
    gc.collect()


def _evaluate_batch(spec: WorkSpec, batch: list[str]) -> list[JobResult]:
    return run_batch(resources_for(spec), spec.job, batch)


@dataclass(frozen=True)
class RayExecutor:
    """The engine on Ray: workers open ``store_uri`` (``store_factory``) and the model (``embedder_factory``)."""

    store_uri: str
    options: RayOptions = RayOptions()
    embedder_factory: EmbedderFactory | None = None  # None: the configured model (validator.app)
    store_factory: StoreFactory | None = None  # None: validator.app.store_for

    def model(self, settings: Settings) -> tuple[str, str]:
        """The workers' model, for its name and checksum: it does not open (embedding/side_by_side.py)."""

        embedder = (self.embedder_factory or load_configured_embedder)(settings)
        return embedder.name, embedder.checksum

    def run(
        self, job: Job, settings: Settings, batches: Sequence[list[str]], on_done: Callable[[int], None] | None = None
    ) -> Iterator[JobResult]:
        """Every batch's results, in batch order, computed by Ray tasks (see the module docstring)."""
        # lazy: start-up cost, Ray takes 3.9 s to import
        import ray

        spec = WorkSpec(self.store_uri, without_secrets(settings), job, self.embedder_factory, self.store_factory)
        with ray_session(self.options):
            task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_evaluate_batch)
            limit = self.options.max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
            pending: dict[object, int] = {}
            done: dict[int, list[JobResult]] = {}
            submitted, folded = 0, 0
            while folded < len(batches):
                while submitted < len(batches) and len(pending) + len(done) < limit:
                    pending[task.remote(spec, batches[submitted])] = submitted
                    submitted += 1
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    index = pending.pop(ref)
                    try:
                        done[index] = ray.get(ref)
                    except Exception as exc:  # a batch lost on every retry: the run cannot be complete
                        raise RayEngineError(
                            f"batch of {batches[index][0]} ... failed after {MAX_RETRIES} "
                            f"retries: {type(exc).__name__}: {exc}"
                        ) from exc
                    if on_done is not None:
                        on_done(len(batches[index]))
                while folded in done:
                    yield from done.pop(folded)
                    folded += 1
