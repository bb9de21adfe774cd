"""The embedding model edge: all-MiniLM-L6-v2 from its files to unit vectors.

The pure core (``consensus``) only knows the ``consensus.embedder.Embedder``
protocol; this package is the real implementation, injected by the CLI, the
daemon and replay:

- ``windows``: pure windowing, batching and pooling (long texts are windowed,
  never cut; see docs/embeddings.md);
- ``windowed``: the tokenising, dedup and memo shared by the runtimes;
- ``onnx_runtime`` (default, ONNX Runtime fp32) and ``torch_runtime`` (the
  fp32 torch reference);
- ``export``: the one-time ONNX export, cached; ``cache``: the model's files,
  the weights' checksum and the cache directory (the only modules that touch
  model files and the cache);
- ``loader``: one embedder per process; ``warmup``: background imports.

Heavy runtimes (onnxruntime, torch, tokenizers) are imported only when an
embedder is built.
"""

from __future__ import annotations

from embedding.cache import default_cache_dir, default_model_dir
from embedding.loader import load_embedder
from embedding.windowed import MODEL_NAME

__all__ = ["MODEL_NAME", "default_cache_dir", "default_model_dir", "load_embedder"]
