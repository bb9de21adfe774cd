"""Sybil groups: responses that are one voice and share one payout.

Running more identities must not buy more votes or more pay. Responses whose ``Response.entity`` (or
``Signals.entities``) is the same operator, coldkey or network address are one entity; tied copies are
one voice too (``consensus.stages.groups``). Groups are the connected components of these pairs. Pure:
indices in, groups out. (The similarity rule, one round's likeness as evidence of one author, was
measured and not shipped: ``benchmarks/lab/sybil.py``.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T", int, str)


def entity_pairs(entities: Mapping[int, str], candidates: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of candidates run by the same entity (chained: enough to build the groups)."""
    first: dict[str, int] = {}
    pairs = []
    for i in (int(c) for c in candidates):
        entity = entities.get(i)
        if entity is None:
            continue
        if entity in first:
            pairs.append((first[entity], i))
        else:
            first[entity] = i
    return pairs


def components(pairs: Sequence[tuple[T, T]]) -> tuple[tuple[T, ...], ...]:
    """Connected components (size >= 2) of ``pairs`` (of indices, or of miner names), each sorted, ordered by
    their first member."""
    parent: dict[T, T] = {}

    def find(i: T) -> T:
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[T, list[T]] = {}
    for i in list(parent):
        groups.setdefault(find(i), []).append(i)
    return tuple(sorted(tuple(sorted(g)) for g in groups.values() if len(g) >= 2))


def weighted_voices(members: np.ndarray, groups: Sequence[Sequence[int]], weights: Mapping[int, float]) -> float:
    """``voices`` with each voice weighted: an answer alone by its weight, a group by its members' mean weight
    (of those among ``members``); an answer ``weights`` does not name weighs 1."""
    where = {i: k for k, g in enumerate(groups) for i in g}
    by_voice: dict[object, list[float]] = {}
    for i in (int(m) for m in members):
        k = where.get(i)
        by_voice.setdefault(("g", k) if k is not None else ("a", i), []).append(weights.get(i, 1.0))
    return float(sum(sum(ws) / len(ws) for ws in by_voice.values()))


def voices(members: np.ndarray, groups: Sequence[Sequence[int]]) -> int:
    """Distinct voices among ``members``: each group counts once, everyone else once."""
    seen: set[int] = set()
    count = 0
    where = {i: k for k, g in enumerate(groups) for i in g}
    for i in (int(m) for m in members):
        k = where.get(i)
        if k is None:
            count += 1
        elif k not in seen:
            seen.add(k)
            count += 1
    return count
