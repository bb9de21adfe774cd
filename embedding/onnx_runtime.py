"""The default runtime: ONNX Runtime on the fused fp32 export of the model's own weights.

``OnnxEmbedder`` is a ``WindowedEmbedder`` whose windows run through an ONNX
Runtime CPU session on the cached export (``embedding.export.ensure_onnx``;
exported on first use). Tests hold it within 1e-4 of the fp32 torch model
(``embedding.torch_runtime``) in every pairwise cosine.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

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

    def _open(self):
        import onnxruntime as ort

        path = ensure_onnx(self.model_dir, self.checksum, self.cache_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # no spin-waiting between operators: replay embeds the next round while Python renders the last one
        # (validator/pipelining.py), and spinning workers take the core that Python needs; on a loaded
        # 2-core host 24 answers with a Python thread beside ran 1.2x faster without it (docs/performance.md)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
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
