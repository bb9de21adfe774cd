"""Engines: the stored rounds cut into batches, run by an executor, results handed back in round order.

An executor runs a ``Job`` over batches of input keys and yields every
round's ``JobResult`` in the order of the keys, so the fold at the end
(what-if's ledgers, the replay's diff, the file replay's summary) sees the
rounds in the same order whatever ran them. Two executors share the same
per-round code (``validator.replaying.jobs``):

- ``LocalExecutor``: in this process, with the command's own store, embedder
  and LM, the next round embedded on a background thread while the current
  one is evaluated and written (``validator.round.embed_ahead``);
- ``validator.replaying.ray_engine.RayExecutor``: each batch a Ray task on a
  local runtime or a cluster.

Both cut the keys into the same batches and evaluate each round with the
same calls: the results, and every byte written, are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from consensus.embedder import Embedder
from storage.base import Store
from validator.replaying.jobs import JobResult, Prepared, finish, prepare
from validator.replaying.spec import Job, Resources
from validator.round.embed_ahead import embed_ahead, round_texts
from validator.settings import Settings

if TYPE_CHECKING:
    from judge.nli import Judge
    from validator.round.stages import LMHandle

BATCH = 8  # rounds per task: enough to amortise a task's overhead, few enough to spread 2 workers


class Executor(Protocol):
    """Runs a job over batches of input keys (see the module docstring)."""

    def run(
        self, job: Job, settings: Settings, batches: Sequence[list[str]], on_done: Callable[[int], None] | None = None
    ) -> Iterator[JobResult]:
        """Every round's result, in batch order; ``on_done(n)`` after each ``n`` rounds finished."""
        ...

    def model(self, settings: Settings) -> tuple[str, str]:
        """The embedding model the rounds are evaluated with: (name, checksum)."""
        ...


def batches(keys: Sequence[str], size: int = BATCH) -> list[list[str]]:
    """``keys`` cut into consecutive batches of ``size`` (the last one shorter)."""
    return [list(keys[i : i + size]) for i in range(0, len(keys), size)]


def run(
    executor: Executor, job: Job, settings: Settings, keys: Sequence[str], on_done: Callable[[int], None] | None = None
) -> Iterator[JobResult]:
    """Every round's result, in the order of ``keys``."""
    yield from executor.run(job, settings, batches(keys), on_done)


@dataclass(frozen=True)
class LocalExecutor:
    """The engine in this process: the command's own store, embedder and (optionally) LM."""

    store: Store
    embedder: Embedder
    lm: LMHandle | None = None
    nli: Judge | None = None  # the NLI judge (judge.nli): asked in a first evaluation or with the LM (jobs.finish)

    def model(self, settings: Settings) -> tuple[str, str]:
        return self.embedder.name, self.embedder.checksum

    def run(
        self, job: Job, settings: Settings, batches: Sequence[list[str]], on_done: Callable[[int], None] | None = None
    ) -> Iterator[JobResult]:

        res = Resources(self.store, self.embedder, settings, self.lm, self.nli)
        prepared = (prepare(job, res, key) for batch in batches for key in batch)

        def texts(item: Prepared | JobResult) -> list[str] | None:
            if isinstance(item, Prepared) and item.reused is None:
                return round_texts(item.stored, settings.consensus.text.normalise_text)
            return None  # nothing to embed: a failed or skipped round, or stored embeddings that fit

        for item, embedded in embed_ahead(prepared, texts, self.embedder):
            yield item if isinstance(item, JobResult) else finish(job, res, item, embedded)
            if on_done is not None:
                on_done(1)


def executor_for(
    store: Store, embedder: Embedder | None = None, lm: LMHandle | None = None, executor: Executor | None = None
) -> Executor:
    """``executor`` when given, else the in-process engine over ``store`` with ``embedder`` (and ``lm``)."""
    if executor is not None:
        return executor
    if embedder is None:
        raise TypeError("give an embedder (to run in this process) or an executor")
    return LocalExecutor(store, embedder, lm)
