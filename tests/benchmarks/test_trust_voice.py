"""benchmarks.lab.trust_voice: a miner's earned trust as its voice weight (the lab rule of issue 44, item 5)."""

from __future__ import annotations

from types import SimpleNamespace

from benchmarks.lab.trust_voice import trust_weights
from emissions.ledger import Ledger, MinerTotals
from tests.helpers import make_round


def test_the_weight_is_the_trust_posterior_mean_to_the_power():
    ledger = Ledger(miners={"a": MinerTotals(tasks=8, tasks_right=8), "b": MinerTotals(tasks=8, tasks_right=0)})
    ctx = SimpleNamespace(round=make_round(["x", "y", "z"], miners=["a", "b", "new"]))
    w = trust_weights(lambda: ledger)(ctx)
    assert w == {0: 0.9, 1: 0.1, 2: 0.5}
    w2 = trust_weights(lambda: ledger, power=2.0)(ctx)
    assert abs(w2[0] - 0.81) < 1e-12 and abs(w2[2] - 0.25) < 1e-12
