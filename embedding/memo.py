"""Bounded memos of work already done: what a replay or the daemon does not embed twice.

``LruMemo`` is a thread-safe least-recently-used map with a fixed number of
entries. ``embedding.windowed`` keeps two: texts (their vector and counts,
keyed by the text) and model windows (their unit vector, keyed by
``window_key``, the sha256 of the window's token ids), so a window met again
in a later round, or in another text, is not run through the model again.
Counters say how much was reused (benchmarks and docs/performance.md
report them).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def window_key(window: Sequence[int]) -> bytes:
    """The sha256 of a window's token ids (int32, special tokens included): its identity in the memo."""
    return hashlib.sha256(np.asarray(window, dtype=np.int32).tobytes()).digest()


class LruMemo(Generic[K, V]):
    """At most ``size`` entries (0 = remember nothing); the least recently used goes first."""

    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"memo size must be >= 0, got {size}")
        self.size = size
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()  # the daemon embeds from worker threads, replay from a background one

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is remembered; unlike ``get``, neither reorders nor counts."""
        with self._lock:
            return key in self._items

    def get(self, key: K) -> V | None:
        """The value for ``key`` (now the most recent), or None; counts a hit or a miss."""
        with self._lock:
            value = self._items.get(key)
            if value is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: K, value: V) -> None:
        """Remember ``value``; forget the least recently used entry past ``size``."""
        if self.size == 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
