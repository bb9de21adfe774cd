"""The default runtime: ONNX Runtime on the fused fp32 export of the model's own weights.

``OnnxEmbedder`` is a ``WindowedEmbedder`` whose windows run through an ONNX
Runtime CPU session on the cached export (``embedding.export.ensure_onnx``;
exported on first use). Tests hold it within 1e-4 of the fp32 torch model
(``embedding.torch_runtime``) in every pairwise cosine.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable

import numpy as np

from consensus.errors import EmbeddingError
from embedding.export import ensure_onnx
from embedding.windowed import WindowedEmbedder


class OnnxEmbedder(WindowedEmbedder):
    """The default runtime: ONNX Runtime, fp32, fused graph, cached export; ``threads`` None/0 = one per core."""

    runtime = "onnxruntime-fp32"

    def __init__(self, model_dir: Path | None = None, *, threads: int | None = None, **kwargs) -> None:
        super().__init__(model_dir, **kwargs)
        self.threads = threads or (os.cpu_count() or 1)
        self._session = None  # opened on the first window: a what-if over stored embeddings never needs it
        self._inputs: set[str] = set()
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _map_batches(self, fn, batches: list) -> Iterable[np.ndarray]:
        """Batches side by side, one per thread, each on a single core (the session runs one thread per call).

        Whole batches in parallel instead of every operator split across the threads: no hand-over
        between the cores inside a batch. On 2 cores, 1,080 windows of real answers ran 1.2x faster
        than one 2-thread session (docs/performance.md), with identical vectors (each window's numbers
        do not depend on the thread count). The pool is shared, so concurrent callers (the daemon's
        workers, replay's embed-ahead thread) never run more than ``threads`` batches at once.
        """
        if self.threads == 1 or len(batches) < 2:
            return map(fn, batches)
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="embed")
        return self._pool.map(fn, batches)

    def _open(self):
        import onnxruntime as ort

        path = ensure_onnx(self.model_dir, self.checksum, self.cache_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one core per batch; batches run side by side (_map_batches)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"cannot load the ONNX model {path}: {exc}") from exc
        self._inputs = {i.name for i in session.get_inputs()}
        return session

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session is open (it opens on the first text to embed)."""
        return self._session is not None

    def open(self) -> None:
        """Open the ONNX session now (exporting the model first if needed); later calls do nothing.

        Live rounds call it at start, so a model that cannot load stops the command there
        (``EmbeddingError``) instead of failing its first round.
        """
        if self._session is None:
            with self._lock:  # the daemon embeds from worker threads: one session
                if self._session is None:
                    self._session = self._open()

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.open()
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self._session.run(None, feed)[0]
