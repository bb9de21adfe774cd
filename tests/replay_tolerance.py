"""What a replay promises, and the one comparison the tests make of it (docs/round-format.md, "Replay").

Bytes: the same inputs, settings and code, run on one host with the same thread settings (the embedding's
``embedding.threads``, the numeric libraries' threads), give byte-identical files: records, heatmaps,
embeddings, summaries. The fake-embedder tests compare bytes (``tests/validator/test_one_round.py``, the engine
tests with the fake embedder).

Numbers: on another CPU, or in another process whose runtime threads differ (a Ray worker runs the model and
numpy on the one CPU its task holds), the real model's floats differ in their last bits: records written on one
EPYC generation replay on another with cosines about 1e-8 apart (an alignment of 0.004667886 became
0.004667872), and a pool of 952M units then splits 2-7 units differently. There a replay promises the same
record within ``REL`` / ``ABS``: booleans, nulls, small integers and words exactly; floats within ``REL``
relatively or ``ABS`` absolutely (the model's floats are cosines and scores of order 1, so an absolute 1e-6 is
about 70 times the largest difference seen, and a near-zero number keeps the absolute error, not the relative
one); large integers (emission units) within ``REL`` of their value; numbers inside strings as numbers; the
stored vectors within ``ABS``. A change of behaviour moves these numbers by far more.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from storage.embeddings import decode_embeddings

REL, ABS = 1e-6, 1e-6
# a difference of two near values loses the relative precision of both: it is compared absolutely
DIFFERENCES, DIFFERENCE_ABS = {"top_diff"}, 1e-5
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def differences(old: Any, new: Any, path: str, extra_ok: frozenset[str] | set[str] = frozenset()) -> Iterator[str]:
    """Every place where ``new`` does not carry ``old``'s value (keys of ``extra_ok`` may be added)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                yield f"{path}.{key}: missing"
            else:
                yield from differences(old[key], new[key], f"{path}.{key}", extra_ok)
        for key in set(new) - set(old) - extra_ok:
            yield f"{path}.{key}: new field (not declared)"
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            yield f"{path}: {len(old)} items, now {len(new)}"
        for i, (a, b) in enumerate(zip(old, new)):
            yield from differences(a, b, f"{path}[{i}]", extra_ok)
    elif isinstance(old, float) and isinstance(new, float):
        near = DIFFERENCE_ABS if path.rsplit(".", 1)[-1] in DIFFERENCES else ABS
        if not math.isclose(old, new, rel_tol=REL, abs_tol=near):
            yield f"{path}: {old!r} -> {new!r}"
    elif type(old) is int and type(new) is int:
        if abs(old - new) > REL * abs(old):  # below 1e6 this is exact
            yield f"{path}: {old!r} -> {new!r}"
    elif isinstance(old, str) and isinstance(new, str):
        if not same_text(old, new):
            yield f"{path}: {old!r} -> {new!r}"
    elif type(old) is not type(new) or old != new:
        yield f"{path}: {old!r} -> {new!r}"


def same_text(old: str, new: str) -> bool:
    """The same words, and the same numbers within ``REL`` ("952,170,945" and "952,170,952" are one pool)."""
    if NUMBER.split(old) != NUMBER.split(new):
        return False
    pairs = zip(NUMBER.findall(old), NUMBER.findall(new))
    return all(math.isclose(float(a.replace(",", "")), float(b.replace(",", "")), rel_tol=REL) for a, b in pairs)


def file_differences(key: str, old: bytes, new: bytes) -> list[str]:
    """How two stored files differ beyond the promise: JSON by ``differences``, embeddings within ``ABS``.

    Other files (heatmaps, inputs) must be the same bytes: a heatmap's colours are its cosines on the
    colour map's 256 levels and its numbers are printed with 2-3 digits, so a 1e-8 difference moves a
    pixel only where a cosine sits on a level's edge.
    """
    if old == new:
        return []
    if key.endswith(".json"):
        return list(differences(json.loads(old), json.loads(new), key))
    if key.endswith(".npz"):
        a, b = decode_embeddings(old, key), decode_embeddings(new, key)
        found = [] if a.vectors.shape == b.vectors.shape else [f"{key}: vectors {a.vectors.shape} -> {b.vectors.shape}"]
        if not found and not np.allclose(a.vectors, b.vectors, rtol=0.0, atol=ABS):
            found.append(f"{key}: vectors differ by {float(np.abs(a.vectors - b.vectors).max()):.3g}")
        if a.model_checksum != b.model_checksum or not np.array_equal(a.tokens, b.tokens):
            found.append(f"{key}: another model or other tokens")
        return found
    return [f"{key}: other bytes"]


def tree_differences(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> list[str]:
    """Every file of ``old`` that ``new`` lacks or holds beyond the promise, and every file only ``new`` has."""
    found = [f"{key}: missing" for key in sorted(set(old) - set(new))]
    found += [f"{key}: new file" for key in sorted(set(new) - set(old))]
    for key in sorted(set(old) & set(new)):
        found += file_differences(key, old[key], new[key])
    return found
