"""The default runtime: OpenVINO on the fp32 ONNX export, the model's windows with fused element-wise kernels.

``OpenVinoEmbedder`` is a ``SideBySideRuntime`` whose windows run through
OpenVINO's CPU plugin on the cached ONNX export (``embedding.export.ensure_onnx``),
in fp32 (``INFERENCE_PRECISION_HINT`` f32: never bf16, whatever the CPU
offers: bf16 moved cosines by up to 1.8e-3). Each batch runs on one core and
``threads`` batches run side by side: one compiled model with one stream (of
one core) and one infer request per side-by-side batch. Tests hold it within 1e-4 of the fp32 torch model in every
pairwise cosine.

Why it is the default: ONNX Runtime's MatMul runs at the GEMM rate but its
layer norms and exact-erf GELU do not (on the Intel host in its fast state
the model reached about 68% of the GEMM rate); OpenVINO fuses those into the
matrix products. On the AMD EPYC host the benchmark replay's embedding stage
ran at 90% of the GEMM rate against ONNX Runtime's 81% (docs/performance.md).

Threads and the Python bindings: two threads calling ``InferRequest.infer``
at once deadlocked inside OpenVINO 2026.4.1's Python input dispatcher
(both threads in ``Type.to_dtype``, whose C++ function-local static map of
numpy dtypes is built while holding the static's guard and may hand the GIL
to the other thread, which then waits on the guard holding the GIL). So no
call here goes through that dispatcher, every call into the bindings happens
under one process-wide lock (they take microseconds; the inference itself
runs outside it, in ``wait``, with the GIL released), and ``open`` runs one
warm-up batch through every request on a single thread, so every such static
is built before two threads can meet.
"""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path

import numpy as np

from consensus.errors import EmbeddingError
from embedding.cache import default_cache_dir
from embedding.export import ensure_onnx
from embedding.side_by_side import SideBySideRuntime

_BINDINGS = threading.Lock()  # every call into OpenVINO's Python bindings, process-wide (module docstring)


def _blob_dir(cache_dir: Path | None, version: str) -> Path | None:
    """Where OpenVINO keeps compiled models (its ``CACHE_DIR``), per OpenVINO version; None if not writable."""
    path = (cache_dir or default_cache_dir()) / f"openvino-{version.split('-')[0]}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # compiled on every open instead
    return path if os.access(path, os.W_OK) else None


class OpenVinoEmbedder(SideBySideRuntime):
    """OpenVINO, fp32, on the cached ONNX export; ``threads`` None/0 = one per core."""

    runtime = "openvino-fp32"
    compiled = None  # the compiled model, once open (its properties: tests/embedding/test_openvino.py)
    _inputs: set[str] = set()  # the model's input names (set by _load)

    def _load(self) -> queue.SimpleQueue:
        """The compiled model's infer requests, one per side-by-side batch, each warmed once on this thread."""
        # lazy: start-up cost, OpenVINO takes 0.7 s to import
        import openvino as ov

        path = ensure_onnx(self.model_dir, self.checksum, self.cache_dir)
        requests: queue.SimpleQueue = queue.SimpleQueue()
        # one compiled model, one stream of one core per side-by-side batch (as many requests)
        config = {
            "INFERENCE_PRECISION_HINT": "f32",  # fp32 only: the 1e-4 tolerance holds for fp32
            "NUM_STREAMS": self.threads,
            "INFERENCE_NUM_THREADS": self.threads,
            # no pinning: OpenVINO pins a process's streams from core 0 up, so two one-thread processes
            # (Ray workers, the local LM beside the daemon) shared one core: 26 s each instead of 13 s
            "ENABLE_CPU_PINNING": False,
        }
        blobs = _blob_dir(self.cache_dir, ov.get_version())
        if blobs is not None:  # the compiled model, kept: 0.4-0.5 s to open instead of 1.3 s
            config["CACHE_DIR"] = str(blobs)
        with _BINDINGS:
            try:
                core = ov.Core()
                compiled = core.compile_model(str(path), "CPU", config)
            except Exception as exc:  # openvino raises its own untyped errors
                raise EmbeddingError(f"cannot compile the model {path} with OpenVINO: {exc}") from exc
            self._inputs = {name for port in compiled.inputs for name in port.get_names()}
            for _ in range(self.threads):
                requests.put(compiled.create_infer_request())
        self.compiled = compiled
        # warm-up, one request after the other on this thread: the bindings' statics are built here
        ids = np.array([[self.cls_id, self.sep_id]], dtype=np.int64)
        for _ in range(self.threads):
            request = requests.get()
            self._infer(request, ids, np.ones_like(ids))
            requests.put(request)
        return requests

    def _infer(self, request, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        # lazy: start-up cost, OpenVINO takes 0.7 s to import
        import openvino as ov

        feed = {
            "input_ids": np.ascontiguousarray(ids, dtype=np.int64),
            "attention_mask": np.ascontiguousarray(mask, dtype=np.int64),
        }
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
        with _BINDINGS:  # the arrays become the request's inputs (no copy); they outlive the inference
            for name, value in feed.items():
                request.set_tensor(name, ov.Tensor(value, shared_memory=True))
            request.start_async()
        request.wait()  # the inference, GIL released, outside the lock
        with _BINDINGS:
            return np.array(request.get_output_tensor(0).data, copy=True)

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.open()
        request = self._model.get()  # one request per thread: a request is never shared while it runs
        try:
            return self._infer(request, ids, mask)
        finally:
            self._model.put(request)
