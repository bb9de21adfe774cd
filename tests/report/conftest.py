"""Report fixtures: small real stores (replayed hostile round, daemon rounds) and their built sites."""

from __future__ import annotations

import pytest

from tests.report import stores
from validator.report import build_report


@pytest.fixture(scope="session")
def hostile_store(tmp_path_factory, embedder):
    """Three example rounds and the hostile round, replayed for real."""
    out = tmp_path_factory.mktemp("hostile") / "store"
    return stores.replay(out, stores.example_rounds(3) + [stores.hostile_round()], embedder)


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory, hostile_store):
    out = tmp_path_factory.mktemp("hostile-site")
    build_report(str(hostile_store), out)
    return out


@pytest.fixture(scope="session")
def daemon_dir(tmp_path_factory, embedder):
    """Three daemon rounds: a clean one, one with a timeout, one below quorum; with ledger.json."""
    return stores.daemon_store(tmp_path_factory.mktemp("daemon") / "store", embedder)
