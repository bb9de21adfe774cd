"""consensus.errors: the core's errors are raised where the docstring says, and are stdlib subclasses."""

from __future__ import annotations

import numpy as np
import pytest

from consensus import decide
from consensus.errors import RoundError
from tests.helpers import block_vectors, make_round


def test_vectors_that_do_not_match_the_responses_raise_round_error_naming_the_round():
    rnd = make_round(["a b c", "d e f"], round_id="r-7")
    with pytest.raises(RoundError, match=r"round r-7, field 'vectors': 3 vectors for 2 responses") as info:
        decide(rnd, block_vectors([3]))
    assert isinstance(info.value, ValueError) and info.value.field == "vectors"
    with pytest.raises(ValueError):  # callers that catch ValueError still do
        decide(rnd, np.zeros((1, 32), dtype=np.float32))
