"""The reference runtime: the same windows through the fp32 torch model.

``TorchEmbedder`` is what the ONNX runtime is checked against (tests hold
every pairwise cosine within 1e-4); select it with the ``embedding.runtime``
setting ``torch``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from embedding.windowed import WindowedEmbedder


class TorchEmbedder(WindowedEmbedder):
    """The same windows through the fp32 torch model (the reference runtime); ``threads`` 0 = torch's default."""

    runtime = "torch-fp32"

    def __init__(self, model_dir: Path | None = None, *, threads: int = 0, **kwargs) -> None:
        super().__init__(model_dir, **kwargs)
        # lazy: start-up cost, torch takes 6.4 s to import
        import torch
        from transformers import AutoModel

        if threads:
            torch.set_num_threads(threads)
        self._torch = torch
        self._model = AutoModel.from_pretrained(str(self.model_dir)).eval()

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.inference_mode():
            out = self._model(
                input_ids=torch.from_numpy(ids),
                attention_mask=torch.from_numpy(mask),
                token_type_ids=torch.zeros_like(torch.from_numpy(ids)),
            )
        return out.last_hidden_state.numpy()
