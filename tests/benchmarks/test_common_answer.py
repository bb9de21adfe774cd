"""benchmarks.lab.common_answer: identical texts of several identities as a common answer (measured, not shipped)."""

from __future__ import annotations

import numpy as np
import pytest

import consensus.stages
from benchmarks.lab.common_answer import as_common, common_answer, common_groups
from consensus.restatements import find_derivations

LONG = (
    "mars looks red because iron minerals in its dust and rocks have oxidised like rust over billions of years".split()
)
OTHER = (
    "the planet owes its colour to ferric oxide in the regolith which scatters red light back toward observers".split()
)


def _found(n_copies: int) -> tuple[list[list[str]], np.ndarray, object]:
    seqs = [LONG] * (1 + n_copies) + [OTHER]
    lat = np.array([1.0 + k for k in range(len(seqs))])
    return seqs, lat, find_derivations(seqs, lat, np.arange(len(seqs)))


def test_groups_need_the_count_and_long_texts():
    seqs = [LONG, LONG, LONG, OTHER, ["au"], ["au"], ["au"]]
    assert common_groups(seqs, np.arange(7), 12, 3) == [[0, 1, 2]]
    assert common_groups(seqs, np.arange(7), 12, 4) == []
    assert common_groups(seqs, np.array([0, 1, 3]), 12, 2) == [[0, 1]]


@pytest.mark.parametrize("mode", ["share", "voices"])
def test_common_answer_has_no_source(mode):
    seqs, lat, found = _found(2)
    assert list(found.copy_of) == [-1, 0, 0, -1]  # the product: the first keeps it
    out = as_common(found, common_groups(seqs, np.arange(4), 12, 3), mode)
    assert list(out.copy_of) == [-1, -1, -1, -1]
    assert out.sources[1] == () and out.residual[2] is None
    assert out.tied == (((0, 1, 2),) if mode == "share" else ())
    assert list(found.copy_of) == [-1, 0, 0, -1]  # input not modified


def test_unknown_mode_is_refused():
    seqs, _, found = _found(2)
    with pytest.raises(ValueError, match="mode"):
        as_common(found, [[0, 1, 2]], "split")


def test_the_patch_is_undone():
    before = getattr(consensus.stages, "find_derivations")  # noqa: B009
    with common_answer("share", 3):
        assert getattr(consensus.stages, "find_derivations") is not before  # noqa: B009
    assert getattr(consensus.stages, "find_derivations") is before  # noqa: B009
