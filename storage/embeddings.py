"""A round's response embeddings as stored bytes (``rounds/<round>/embeddings.npz``, ``keys.embeddings``).

The daemon and ``validator replay`` store them next to the evaluation record;
a replay (or a what-if) with the same model and long-text policy reuses them
instead of embedding again. The layout is a NumPy ``.npz`` (no pickles):

- ``vectors``  (n, d) float32, the unit embedding of each response (zeros for failed ones)
- ``windows``, ``tokens``, ``embedded``  (n,) integers: windows embedded, word pieces in the text, word
  pieces embedded
- ``meta``  UTF-8 JSON bytes: ``{"checksum": <model sha256>, "policy": <long-text policy description>}``
- ``edges``  (k, d) float32, optional: the embedded prompt, then the reference when the round has one
  (what the prompt- and reference-similarity signals need; files without it still load)

Encoding the same arrays and meta always gives the same bytes.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from typing import Protocol

import numpy as np

ARRAYS = ("vectors", "windows", "tokens", "embedded")
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry


class EmbeddingArrays(Protocol):
    """What is stored of an embedding result (``consensus`` ``Embeddings`` has these attributes)."""

    vectors: np.ndarray
    windows: np.ndarray
    tokens: np.ndarray
    embedded: np.ndarray


@dataclass(frozen=True)
class StoredEmbeddings:
    """Embeddings read back from a store, with the model and policy that produced them."""

    vectors: np.ndarray  # (n, d) float32
    windows: np.ndarray  # (n,)
    tokens: np.ndarray  # (n,)
    embedded: np.ndarray  # (n,)
    model_checksum: str
    policy: str
    edges: np.ndarray | None = None  # (k, d): the prompt's vector, then the reference's; None in older files

    def matches(self, model_checksum: str, policy: str, responses: int) -> bool:
        """Reusable for a round of ``responses`` answers embedded by this model with this policy."""
        return self.model_checksum == model_checksum and self.policy == policy and len(self.vectors) == responses


def encode_embeddings(
    emb: EmbeddingArrays, *, model_checksum: str, policy: str, edges: np.ndarray | None = None
) -> bytes:
    """The ``.npz`` bytes of ``emb`` and the model/policy that produced it (``edges``: see the module docstring).

    Written entry by entry with a fixed timestamp (``np.savez`` stamps the
    current time), so a replay stores byte-identical files.
    """
    meta = json.dumps({"checksum": model_checksum, "policy": policy}).encode()
    arrays = {name: np.asarray(getattr(emb, name)) for name in ARRAYS}
    arrays["meta"] = np.frombuffer(meta, dtype=np.uint8)
    if edges is not None:
        arrays["edges"] = np.asarray(edges, dtype=np.float32)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, array in arrays.items():
            entry = io.BytesIO()
            np.lib.format.write_array(entry, np.ascontiguousarray(array), allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=_EPOCH), entry.getvalue())
    return buf.getvalue()


def decode_embeddings(data: bytes, source: str = "embeddings") -> StoredEmbeddings:
    """Stored embeddings; ``ValueError`` naming ``source`` and what is wrong for anything else."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            files = list(z.files)
            arrays = {name: z[name] for name in (*ARRAYS, "meta", "edges") if name in files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:  # not an npz, or a pickled array
        raise ValueError(f"{source}: not stored embeddings ({type(exc).__name__}: {exc})") from exc
    missing = [name for name in (*ARRAYS, "meta") if name not in arrays]
    if missing:
        raise ValueError(f"{source}: no {missing[0]!r} array (holds {', '.join(files) or 'nothing'})")
    try:
        meta = json.loads(bytes(arrays.pop("meta")).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{source}: not stored embeddings (meta: {exc})") from exc
    if (
        not isinstance(meta, dict)
        or not isinstance(meta.get("checksum"), str)
        or not isinstance(meta.get("policy"), str)
    ):
        raise ValueError(f"{source}: meta must hold the model 'checksum' and the 'policy' as strings")
    n = arrays["vectors"].shape[0] if arrays["vectors"].ndim == 2 else -1
    if n < 0 or any(arrays[k].shape != (n,) for k in ARRAYS[1:]):
        shapes = ", ".join(f"{k} {arrays[k].shape}" for k in ARRAYS)
        raise ValueError(f"{source}: inconsistent shapes ({shapes}); expected vectors (n, d) and the rest (n,)")
    edges = arrays.pop("edges", None)
    if edges is not None and (edges.ndim != 2 or edges.shape[1] != arrays["vectors"].shape[1]):
        raise ValueError(f"{source}: edges {edges.shape} do not match the vectors' width {arrays['vectors'].shape}")
    return StoredEmbeddings(**arrays, model_checksum=meta["checksum"], policy=meta["policy"], edges=edges)
