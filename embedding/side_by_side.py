"""What the two fast runtimes share: batches side by side, one core each, and a model opened once.

``SideBySideRuntime`` is a ``WindowedEmbedder`` whose model is opened on first
use (or by ``open()``, which live rounds call at start so a model that cannot
load stops the command there) and whose batches run ``threads`` at a time from
one shared thread pool, each batch on a single core. Whole batches in
parallel instead of every operator split across the threads: no hand-over
between the cores inside a batch. On 2 cores, 1,080 windows of real answers
ran 1.2x faster than one 2-thread ONNX Runtime session (docs/performance.md),
with identical vectors (a window's numbers do not depend on the thread count).
The pool is shared, so concurrent callers (the daemon's workers, replay's
embed-ahead thread) never run more than ``threads`` batches at once.

``threads`` None/0 means the cores this process may run on (its affinity: ``taskset``, a container's
cpuset), not the machine's: more threads than cores only queue (the embedded LM's ``lm.embedded.usable_cores``
reads the same).

A runtime subclass implements ``_load()`` (returns what ``_run`` needs: an ONNX
Runtime session, OpenVINO's infer requests) and ``_run(ids, mask)``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from embedding.windowed import WindowedEmbedder


def usable_cores() -> int:
    """The CPU cores this process may run on (``os.sched_getaffinity``), at least 1; elsewhere the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


class SideBySideRuntime(WindowedEmbedder):
    """Batches side by side on ``threads`` cores (None/0 = one per core); the model opened once, on first use."""

    def __init__(self, model_dir: Path | None = None, *, threads: int | None = None, **kwargs) -> None:
        super().__init__(model_dir, **kwargs)
        self.threads = threads or usable_cores()
        self._model: Any = None  # what _load returned; None until opened (a what-if over stored vectors never needs it)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _load(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def loaded(self) -> bool:
        """Whether the model is open (it opens on the first text to embed)."""
        return self._model is not None

    def open(self) -> None:
        """Open the model now (exporting it first if needed); later calls do nothing.

        Live rounds call it at start, so a model that cannot load stops the command there
        (``EmbeddingError``) instead of failing its first round.
        """
        if self._model is None:
            with self._lock:  # the daemon embeds from worker threads: one model
                if self._model is None:
                    self._model = self._load()

    def _map_batches(self, fn, batches: list) -> Iterable[np.ndarray]:
        """``fn`` over the batches, results in order: ``threads`` at a time, each on one core."""
        if self.threads == 1 or len(batches) < 2:
            return map(fn, batches)
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="embed")
        return self._pool.map(fn, batches)
