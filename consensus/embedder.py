"""What the core needs from an embedding model: the ``Embedder`` protocol and its data.

A round's texts go through an ``Embedder`` (injected by the edge) and come back
as ``Embeddings``: unit rows the pure pipeline compares. The real model lives
in the ``embedding`` package (ONNX Runtime or torch, export and cache); the
deterministic stand-in for fast tests is ``consensus.fake.FakeEmbedder``.
``LongTextPolicy`` is plain data saying how a text longer than one model window
is represented; the windowing itself is ``embedding.windows``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from consensus.errors import EmbeddingError


@dataclass(frozen=True)
class Embeddings:
    """Unit row vectors for a list of texts.

    vectors: (n, d) float32; rows are unit length, or zero for empty texts.
    windows: (n,) int32, number of model windows embedded for each text.
    tokens: (n,) int32, word pieces in each text (without special tokens).
    embedded: (n,) int32, word pieces that went through the model.
    """

    vectors: np.ndarray
    windows: np.ndarray
    tokens: np.ndarray
    embedded: np.ndarray


@dataclass(frozen=True)
class RoundEmbeddings(Embeddings):
    """A round's response embeddings and its ``edges``: the prompt's vector, then the reference's.

    Stored together (``validator.records.writer``), so a replay or what-if over stored embeddings needs no model.
    """

    edges: np.ndarray | None = None  # (k, d) float32; None: not known (embed the prompt again)


@dataclass(frozen=True)
class LongTextPolicy:
    """How a text longer than one model window is represented (docs/embeddings.md)."""

    mode: str = "sample"  # "sample" or "full"
    token_budget: int = 256  # word pieces per text in sample mode
    sample_window: int = 62  # word pieces per sampled window
    seed: int = 0  # mixes into the per-text offsets; set a private value to make them unpredictable

    def __post_init__(self) -> None:
        if self.mode not in ("sample", "full"):
            raise EmbeddingError(f"long-text mode must be 'sample' or 'full', got {self.mode!r}")
        if self.sample_window < 1 or self.token_budget < self.sample_window:
            raise EmbeddingError("need 1 <= sample_window <= token_budget")

    def describe(self) -> str:
        """One line for records and reports."""
        if self.mode == "full":
            return "full: balanced windows covering every word piece, piece-weighted mean"
        return (
            f"sample: {self.token_budget // self.sample_window} windows of {self.sample_window} pieces, "
            f"one per equal stratum of the text at a seeded offset (seed {self.seed}), piece-weighted mean"
        )


class Embedder(Protocol):
    """What the pipeline needs from an embedding model.

    ``name`` and ``checksum`` identify the model in records (a replay checks
    them before reusing stored vectors); ``embed`` maps n texts to
    ``Embeddings`` with (n, d) unit rows, zero rows for empty texts.
    """

    name: str
    checksum: str

    def embed(self, texts: Sequence[str]) -> Embeddings: ...
