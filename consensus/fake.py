"""A deterministic stand-in for the embedding model, for fast tests and examples.

``FakeEmbedder`` satisfies ``consensus.embedder.Embedder`` without a model,
files or threads: every vector is drawn from a generator seeded by a sha256
of (seed, what is hashed), so the same text always gets the same vector, in
any process, round or order. Two ways to get similarity:

- ``mode="words"`` (default): a text is the normalised sum of one hashed unit
  vector per lower-cased word, so texts sharing words are close (cosine about
  shared / sqrt(n1 * n2)) and unrelated texts are near-orthogonal;
  ``mode="text"``: one hashed vector per whole text (distinct texts
  near-orthogonal).
- ``groups`` (text -> label), the controlled way to build clusters: a text in
  a group is its label's hashed centre plus ``spread`` times its own hashed
  noise, so members of a group have cosine about 1 / (1 + spread**2)
  (0.99 at the default 0.1; 0.86 at 0.4, like paraphrases under the real
  model) and different groups are near-orthogonal. A label is a path:
  ``"australia/sydney"`` and ``"australia/canberra"`` share the hashed part
  of ``"australia"``, so their centres have cosine 1/2 (two answers on one
  topic taking opposite stances).

Empty or whitespace-only texts get the zero vector and zero counts, as the
real model does. Counts are in words (one "window" per non-empty text). It
is a test double: its vectors carry no meaning beyond the rules above, and
its ``checksum`` (a hash of its parameters) keeps its stored vectors from
ever being reused for the real model's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from consensus.embedder import Embeddings
from consensus.errors import EmbeddingError

_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """Hash-seeded unit vectors: identical texts -> identical vectors; similarity by shared words or groups."""

    name = "fake-embedder"
    runtime = "fake"

    def __init__(
        self,
        dim: int = 384,
        *,
        seed: int = 0,
        mode: str = "words",
        groups: Mapping[str, str] | None = None,
        spread: float = 0.1,
    ) -> None:
        if dim < 2:
            raise EmbeddingError(f"fake embedder: dim must be >= 2, got {dim}")
        if mode not in ("words", "text"):
            raise EmbeddingError(f"fake embedder: mode must be 'words' or 'text', got {mode!r}")
        if not spread >= 0:
            raise EmbeddingError(f"fake embedder: spread must be >= 0, got {spread!r}")
        self.dim = dim
        self.seed = seed
        self.mode = mode
        self.groups = dict(groups or {})
        self.spread = float(spread)
        described = repr((dim, seed, mode, sorted(self.groups.items()), self.spread))
        self.checksum = hashlib.sha256(f"fake-embedder|{described}".encode("utf-8", "surrogatepass")).hexdigest()

    def _unit(self, kind: str, payload: str) -> np.ndarray:
        """A unit (dim,) float64 vector drawn from a generator seeded by (seed, kind, payload)."""
        key = f"{self.seed}|{kind}|{payload}".encode("utf-8", "surrogatepass")
        rng = np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))
        v = rng.standard_normal(self.dim)
        return v / np.linalg.norm(v)

    def _centre(self, label: str) -> np.ndarray:
        """The unit centre of a group: one hashed unit per prefix of its path (``a``, ``a/b``, ...), normalised."""
        parts = label.split("/")
        v: npt.NDArray[np.float64] = np.sum(
            [self._unit("group", "/".join(parts[: k + 1])) for k in range(len(parts))], axis=0
        )
        return v / np.linalg.norm(v)

    def vector(self, text: str) -> np.ndarray:
        """The (dim,) float32 vector of one text (zero for an empty text)."""
        if not text.strip():
            return np.zeros(self.dim, dtype=np.float32)
        if text in self.groups:
            v = self._centre(self.groups[text]) + self.spread * self._unit("text", text)
        elif self.mode == "words":
            words = _WORD.findall(text.lower()) or [text]
            v = np.sum([self._unit("word", w) for w in words], axis=0)
        else:
            v = self._unit("text", text)
        norm = float(np.linalg.norm(v))
        if norm == 0.0:  # only a text whose words cancel exactly; fall back to the whole-text vector
            v, norm = self._unit("text", text), 1.0
        return (v / norm).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Embeddings:
        """(n, dim) unit rows; windows 1 per non-empty text; tokens and embedded in words."""
        n = len(texts)
        vectors = np.zeros((n, self.dim), dtype=np.float32)
        counts = np.zeros(n, dtype=np.int32)
        for i, text in enumerate(texts):
            vectors[i] = self.vector(text)
            counts[i] = len(_WORD.findall(text)) if text.strip() else 0
        windows = np.array([1 if t.strip() else 0 for t in texts], dtype=np.int32)
        return Embeddings(vectors=vectors, windows=windows, tokens=counts, embedded=counts.copy())
