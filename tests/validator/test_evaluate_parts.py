"""validator.round.evaluate.part_of: a record part from a value of the pure core, stored as the part declares it."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from storage.codec import to_plain
from validator.records import evaluation_record as rec
from validator.round.evaluate import part_of


@dataclass(frozen=True)
class Check:
    index: np.int64
    anchors: list[int]
    agreement: np.float32 | None
    score: int | None
    skipped: str | None


def test_numpy_scalars_become_the_plain_types_the_part_declares():
    part = part_of(rec.FactualCheckRecord, Check(np.int64(3), [1, 2], np.float32(0.5), None, "skipped: budget"))
    assert part == rec.FactualCheckRecord(index=3, anchors=(1, 2), agreement=0.5, score=None, skipped="skipped: budget")
    assert type(part.index) is int and type(part.agreement) is float and type(part.anchors) is tuple
    json.dumps(to_plain(part))  # serialises: no numpy value left


def test_given_fields_win_and_a_missing_one_is_an_error():
    pair = part_of(rec.ClosePairRecord, Check(1, [], None, None, None), first="a", second="b", later=None)
    assert pair == rec.ClosePairRecord(first="a", second="b", later=None)
    with pytest.raises(AttributeError, match="first"):
        part_of(rec.ClosePairRecord, Check(1, [], None, None, None))
