"""One embedder per process and configuration: what the CLI, the daemon and the tests ask for.

``load_embedder`` builds the runtime named by the ``embedding.runtime``
setting (``openvino``, the default, ``onnx`` or ``torch``) once and hands the same object
to every later caller with the same arguments, so the model is loaded and
its memo of embedded texts shared once per process.
"""

from __future__ import annotations

from pathlib import Path

from consensus.embedder import Embedder, LongTextPolicy
from consensus.errors import EmbeddingError
from embedding.onnx_runtime import OnnxEmbedder
from embedding.openvino_runtime import OpenVinoEmbedder
from embedding.torch_runtime import TorchEmbedder

_LOADED: dict[str, Embedder] = {}


def load_embedder(
    runtime: str = "openvino",
    model_dir: Path | None = None,
    threads: int = 0,
    long_texts: LongTextPolicy | None = None,
    cache_dir: Path | None = None,
) -> Embedder:
    """The process-wide embedder for ``runtime`` ("openvino", "onnx" or "torch"); threads 0 = one per core.

    ``cache_dir`` holds the ONNX export and the weights' checksum memo
    (default ``embedding.cache.default_cache_dir()``).
    """
    long_texts = long_texts or LongTextPolicy()
    key = f"{runtime}:{model_dir}:{threads}:{long_texts}:{cache_dir}"
    if key not in _LOADED:
        if runtime == "onnx":
            _LOADED[key] = OnnxEmbedder(model_dir, threads=threads or None, long_texts=long_texts, cache_dir=cache_dir)
        elif runtime == "openvino":
            _LOADED[key] = OpenVinoEmbedder(
                model_dir, threads=threads or None, long_texts=long_texts, cache_dir=cache_dir
            )
        elif runtime == "torch":
            _LOADED[key] = TorchEmbedder(model_dir, threads=threads, long_texts=long_texts, cache_dir=cache_dir)
        else:
            raise EmbeddingError(f"unknown embedding runtime {runtime!r} (onnx, openvino or torch)")
    return _LOADED[key]
