"""Windowing, batching and pooling for the embedding model: pure functions over ids and arrays.

A text's word pieces are cut into model windows (``plan_windows`` covers every
piece; ``sample_windows`` takes seeded windows from equal strata of a long
text, per ``consensus.embedder.LongTextPolicy``), each wrapped in [CLS] ... [SEP]
(``text_windows``). Windows are packed into padded batches (``pack_batches``,
``pad_batch``), the runtime turns a batch into hidden states, ``mean_pool``
turns those into unit window vectors, and ``combine_windows`` makes one unit
vector per text (the piece-weighted mean of its windows). No model, files or
threads here: ``embedding.windowed`` drives these with a tokenizer and a runtime.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from consensus.embedder import LongTextPolicy


def plan_windows(n_tokens: int, max_content: int) -> list[tuple[int, int]]:
    """Split ``n_tokens`` word pieces into balanced windows of at most ``max_content``.

    Returns (start, stop) pairs covering every token exactly once. Balanced
    (300 tokens -> 150 + 150, not 254 + 46) so no window is a tiny tail whose
    vector would be noisy yet weigh like a full one.

    >>> plan_windows(300, 254)
    [(0, 150), (150, 300)]
    >>> plan_windows(0, 254)
    []
    """
    if n_tokens <= 0:
        return []
    count = -(-n_tokens // max_content)
    edges = [round(i * n_tokens / count) for i in range(count + 1)]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def sample_windows(n_tokens: int, policy: LongTextPolicy, key: bytes) -> list[tuple[int, int]]:
    """Windows of ``policy.sample_window`` pieces, one per equal stratum of ``n_tokens``.

    The offset inside each stratum comes from a generator seeded by the
    policy seed and ``key`` (the text's hash), so the same text always gets
    the same windows whatever round it is in.

    >>> sample_windows(1000, LongTextPolicy(), b"x")[0][1] - sample_windows(1000, LongTextPolicy(), b"x")[0][0]
    62
    """
    m = max(1, policy.token_budget // policy.sample_window)
    w = policy.sample_window
    seed = int.from_bytes(hashlib.sha256(policy.seed.to_bytes(8, "little", signed=True) + key).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    edges = [round(i * n_tokens / m) for i in range(m + 1)]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        if b - a <= w:
            out.append((a, b))
        else:
            start = int(rng.integers(a, b - w + 1))
            out.append((start, start + w))
    return out


def text_key(text: str) -> bytes:
    """The sha256 of a text (lone surrogates kept): what seeds its sampled windows."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def text_windows(
    text: str, ids: Sequence[int], policy: LongTextPolicy, max_content: int, cls_id: int, sep_id: int
) -> list[list[int]]:
    """Token ids of every window of one text (its word-piece ``ids``), [CLS] and [SEP] included.

    A text that fits one window (``max_content`` pieces), or any text under
    the ``full`` policy, is covered by balanced windows; a longer one under
    ``sample`` gets the seeded strata windows.
    """
    if len(ids) <= max_content or policy.mode == "full":
        spans = plan_windows(len(ids), max_content)
    else:
        spans = sample_windows(len(ids), policy, text_key(text))
    return [[cls_id, *ids[a:b], sep_id] for a, b in spans]


def pack_batches(lengths: Sequence[int], max_batch_tokens: int) -> list[list[int]]:
    """Indices of windows grouped into batches of at most ``max_batch_tokens`` padded tokens.

    Windows are sorted by (length, index), so padding is small and the
    batches do not depend on the order texts arrive in; a window longer than
    the budget gets a batch of its own.

    >>> pack_batches([5, 3, 5, 2], 10)
    [[3, 1], [0, 2]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches = []
    start = 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and lengths[order[stop]] * (stop - start + 1) <= max_batch_tokens:
            stop += 1
        batches.append(order[start:stop])
        start = stop
    return batches


def pad_batch(windows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, mask), both (b, longest) int64: windows left-aligned, zero-padded; mask 1 on real tokens."""
    longest = max(len(w) for w in windows)
    ids = np.zeros((len(windows), longest), dtype=np.int64)
    mask = np.zeros((len(windows), longest), dtype=np.int64)
    for row, w in enumerate(windows):
        ids[row, : len(w)] = w
        mask[row, : len(w)] = 1
    return ids, mask


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Unit (b, d) float32 vectors: ``hidden`` (b, s, d) averaged over the tokens where ``mask`` (b, s) is 1."""
    m = mask[:, :, None].astype(np.float32)
    pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
    pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return pooled


def combine_windows(vectors: np.ndarray, windows: Sequence[Sequence[int]]) -> tuple[np.ndarray, int]:
    """One text's unit (d,) float32 vector from its window vectors (k, d), and the pieces embedded.

    Each window weighs by its word pieces (its length minus [CLS] and [SEP]),
    so a short last window counts for what it holds.
    """
    counts = np.array([len(w) - 2 for w in windows], dtype=np.float32)
    v = (vectors * counts[:, None]).sum(axis=0)
    v /= max(float(np.linalg.norm(v)), 1e-12)
    return v.astype(np.float32), int(counts.sum())
