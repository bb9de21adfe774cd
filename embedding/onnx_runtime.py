"""ONNX Runtime on the fused fp32 export of the model's own weights.

``OnnxEmbedder`` is a ``SideBySideRuntime`` whose windows run through an ONNX
Runtime CPU session (one thread per call, batches side by side) on the cached
export (``embedding.export.ensure_onnx``; exported on first use). Tests hold it
within 1e-4 of the fp32 torch model (``embedding.torch_runtime``) in every
pairwise cosine. The default runtime is OpenVINO on the same export
(``embedding.openvino_runtime``); this one is ``embedding.runtime = "onnx"``.
"""

from __future__ import annotations

import numpy as np

from consensus.errors import EmbeddingError
from embedding.export import ensure_onnx
from embedding.side_by_side import SideBySideRuntime


class OnnxEmbedder(SideBySideRuntime):
    """ONNX Runtime, fp32, fused graph, cached export; ``threads`` None/0 = one per core."""

    runtime = "onnxruntime-fp32"
    _inputs: set[str] = set()  # the session's input names (set by _load)

    def _load(self):
        # lazy: start-up cost, ONNX Runtime takes 0.26 s to import
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

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.open()
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self._model.run(None, feed)[0]
