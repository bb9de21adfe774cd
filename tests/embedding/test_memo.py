"""The bounded memos of embedded texts and windows: least recently used first out, keys by content."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from embedding.memo import LruMemo, window_key


def test_lru_keeps_the_most_recent_and_counts():
    memo: LruMemo[str, int] = LruMemo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.get("a") == 1  # "a" is now the most recent
    memo.put("c", 3)  # "b" goes
    assert memo.get("b") is None and memo.get("a") == 1 and memo.get("c") == 3
    assert len(memo) == 2 and (memo.hits, memo.misses) == (3, 1)


def test_size_zero_remembers_nothing_and_negative_is_refused():
    memo: LruMemo[str, int] = LruMemo(0)
    memo.put("a", 1)
    assert memo.get("a") is None and len(memo) == 0
    with pytest.raises(ValueError, match="memo size"):
        LruMemo(-1)


def test_window_key_is_the_content_not_the_container():
    assert window_key([101, 7, 102]) == window_key(np.array([101, 7, 102], dtype=np.int64))
    assert window_key([101, 7, 102]) == window_key((101, 7, 102))
    assert window_key([101, 7, 102]) != window_key([101, 7, 8, 102])
    assert window_key([101, 7]) != window_key([7, 101])
    assert len(window_key([])) == 32


def test_memo_stays_bounded_under_threads():
    memo: LruMemo[int, int] = LruMemo(50)

    def fill(offset: int) -> None:
        for i in range(1000):
            memo.put(offset + i, i)
            memo.get(offset + i // 2)

    threads = [threading.Thread(target=fill, args=(k * 10_000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(memo) == 50 and memo.hits + memo.misses == 4000
