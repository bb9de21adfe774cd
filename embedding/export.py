"""The one-time ONNX export of the model, cached by weights and runtime version.

``ensure_onnx`` returns the fused fp32 ONNX model for the weights with a
given sha256, exporting it on first use: torch exports the encoder (eager
attention, dynamic batch and sequence axes, opset 17), ONNX Runtime's
transformer optimizer fuses attention, and the result is placed atomically
at ``onnx_cache_path`` (keyed by the weights' sha256, the ONNX Runtime version
and ``EXPORT_RECIPE``) under the cache directory the caller passes in.
``validator prepare`` runs it ahead of the first round.
"""

from __future__ import annotations

import logging
import os
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from consensus.errors import EmbeddingError
from embedding.cache import default_cache_dir
from embedding.windowed import MODEL_NAME
from storage.files import write_atomic

log = logging.getLogger(__name__)

EXPORT_RECIPE = 1  # bump when the export or optimisation steps change


def _onnxruntime_version() -> str:
    """ONNX Runtime's version from its installed metadata (1-2 ms), without importing it (about 0.09 s).

    The OpenVINO runtime reads the export too and never imports ONNX Runtime otherwise.
    """

    try:
        return version("onnxruntime")
    except PackageNotFoundError:  # an installation without its metadata: ask the module itself
        import onnxruntime as ort  # lazy: start-up cost, ONNX Runtime takes 0.26 s to import

        return ort.__version__


def onnx_cache_path(checksum: str, cache_dir: Path | None = None) -> Path:
    """Where the export of the weights with sha256 ``checksum`` lives (default cache: ``default_cache_dir()``)."""
    root = cache_dir or default_cache_dir()
    return root / f"minilm-{checksum[:16]}-ort{_onnxruntime_version()}-r{EXPORT_RECIPE}" / "model.onnx"


def ensure_onnx(model_dir: Path, checksum: str, cache_dir: Path | None = None) -> Path:
    """Return the cached fused fp32 ONNX model, exporting it on first use."""
    path = onnx_cache_path(checksum, cache_dir)
    if path.is_file():
        return path
    log.info("exporting %s to ONNX (one time, cached at %s)", MODEL_NAME, path)
    try:
        export(model_dir, path)
    except EmbeddingError:
        raise
    except Exception as exc:
        raise EmbeddingError(f"ONNX export of {model_dir} failed: {exc}") from exc
    return path


def export(model_dir: Path, path: Path) -> None:
    """Export the model in ``model_dir`` to a fused fp32 ONNX file at ``path`` (replaced atomically)."""

    # lazy: start-up cost, torch takes 6.4 s to import
    import torch
    from onnxruntime.transformers import optimizer

    # lazy: start-up cost, transformers takes 3.2 s to import
    from transformers import AutoModel

    # Eager attention exports the plain MatMul/Softmax pattern that ONNX
    # Runtime's optimizer fuses into its Attention kernel.
    bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    config = bert.config

    class Encoder(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    # the exporter and the optimizer write files by name: scratch files beside the target, per process
    raw = path.with_name(f"raw.{os.getpid()}.onnx")
    fused = path.with_name(f"fused.{os.getpid()}.onnx")
    sample = torch.ones(2, 8, dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Encoder(bert),
                (sample, sample, torch.zeros_like(sample)),
                str(raw),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "last_hidden_state": axes,
                },
                opset_version=17,
                dynamo=False,
            )
            model = optimizer.optimize_model(
                str(raw),
                model_type="bert",
                num_heads=config.num_attention_heads,
                hidden_size=config.hidden_size,
                opt_level=1,
            )
        model.save_model_to_file(str(fused))
        write_atomic(path, fused.read_bytes())
    finally:
        raw.unlink(missing_ok=True)
        fused.unlink(missing_ok=True)
