"""The loopback test miners of the client tests (``tests.validator.miners.support.MINERS``), for the pool's own."""

from tests.validator.miners.conftest import pool  # noqa: F401  (the fixture, shared)
