"""The loopback pool of test miners (every behaviour), shared by a module's tests."""

from __future__ import annotations

import pytest

from minerpool import MinerPool
from tests.validator.miners.support import MINERS


@pytest.fixture(scope="module")
def pool():
    with MinerPool(MINERS) as p:
        yield p
