"""What a round stores beside its input: the evaluation record and the response embeddings.

One place for the daemon, ``validator replay`` (file and store) and
``validator round``: records go through ``validator.record`` and
``storage.codec``, embeddings through ``storage.embeddings``, keys through
``storage.keys``. Stored embeddings are reused only when the model checksum,
the long-text policy and the number of responses all match.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from consensus.embedder import Embedder, Embeddings
from storage import keys
from storage.base import KeyNotFound, Store
from storage.codec import dumps
from storage.embeddings import decode_embeddings, encode_embeddings
from validator.record import RoundRecord, load_record


@dataclass(frozen=True)
class RoundEmbeddings(Embeddings):
    """A round's response embeddings and its ``edges``: the prompt's vector, then the reference's.

    Stored together, so a replay or what-if over stored embeddings needs no model at all.
    """

    edges: np.ndarray | None = None  # (k, d) float32; None: not known (embed the prompt again)


def embedder_policy(embedder: Embedder) -> str:
    """The long-text policy of ``embedder`` as stored with its embeddings ("unknown" when it has none)."""
    policy = getattr(embedder, "long_texts", None)
    return policy.describe() if policy is not None and hasattr(policy, "describe") else "unknown"


def put_record(store: Store, key: str, record: RoundRecord) -> None:
    store.put(key, dumps(record.to_json()), "application/json")


def get_record(store: Store, key: str) -> RoundRecord:
    """The record stored under ``key``; ``KeyNotFound``/``StoreError`` from the store, ``RecordError`` if unreadable."""
    return load_record(store.get(key), key)


def put_embeddings(store: Store, key: str, emb: Embeddings, embedder: Embedder) -> None:
    """Store ``emb`` under ``key`` (``keys.embeddings`` or ``keys.replay_embeddings``) with its model and policy."""
    store.put(key, encode_embeddings(emb, model_checksum=embedder.checksum, policy=embedder_policy(embedder),
                                     edges=getattr(emb, "edges", None)), "application/octet-stream")


def reusable_embeddings(store: Store, round_id: str, embedder: Embedder, responses: int) -> RoundEmbeddings | None:
    """The round's stored embeddings when ``embedder`` would give the same ones, else None (none stored,
    unreadable, another model or policy, another number of responses)."""
    try:
        stored = decode_embeddings(store.get(keys.embeddings(round_id)), keys.embeddings(round_id))
    except (KeyNotFound, OSError, ValueError):
        return None
    if not stored.matches(embedder.checksum, embedder_policy(embedder), responses):
        return None
    return RoundEmbeddings(stored.vectors, stored.windows, stored.tokens, stored.embedded, stored.edges)
