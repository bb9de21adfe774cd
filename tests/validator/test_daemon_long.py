"""The default daemon left running (issue 46): the embedded defaults, the simulated miner pool, 100 rounds.

The README's first command runs the daemon on the embedded pool: four honest miners of one model (personas of
one LM) and six misbehaving ones, a copycat among them. Alike round after round, the honest miners are linked
(``consensus.identity``); a link only steers the draw and is shown, so none of them is ever removed as a copy,
consensus is reached in nearly every round and the copycat earns less than every honest miner.

CI runs it on the pool's canned honest answers (no LM: the pool's own LM makes a round take 10-20 s on two
cores); the run with the LM on is recorded in docs/validity.md, "Same-model miners". Real parts: the MiniLM
embedder, the pool's HTTP server on loopback, the product's miner client and daemon, a store in memory.
"""

from __future__ import annotations

import dataclasses
import json
import time

import pytest

from minerpool import PERSONAS, default_pool
from storage import keys
from storage.memory import MemoryStore
from validator.daemon.daemon import Daemon
from validator.miners import MinerSpec
from validator.miners.query import miners_query
from validator.round.prompt_source import load_prompts
from validator.settings import load_settings

ROUNDS = 100
HONEST = tuple(p.name for p in PERSONAS)


@pytest.mark.slow
def test_the_default_daemon_keeps_paying_its_honest_miners_for_100_rounds(real_embedder):
    settings = load_settings(
        None,
        env={
            "VALIDATOR_DAEMON__INTERVAL_S": "0",
            "VALIDATOR_LM__ENABLED": "false",
            "VALIDATOR_OUTPUT__HEATMAP": "false",
        },
        dotenv_path=None,
    )
    store = MemoryStore()
    pool, addresses = default_pool(None, slow_delay_s=30.0)
    began = time.perf_counter()
    with pool:
        # the embedded network's timeouts, shorter: the slow miner gives up after 1 s instead of 10
        specs = [MinerSpec.of(a) for a in addresses]
        specs = [dataclasses.replace(s, timeout_s=1.0 if s.hotkey == "slow" else 20.0) for s in specs]
        assert {s.hotkey for s in specs} >= set(HONEST) | {"copycat"}
        daemon = Daemon(
            store=store,
            embedder=real_embedder,
            settings=settings,
            prompts=load_prompts(None),
            query=miners_query(specs, settings),
            secret=b"issue-46-default-daemon",
        )
        reports = daemon.run(rounds=ROUNDS)
    seconds = time.perf_counter() - began
    assert len(reports) == ROUNDS
    records = [json.loads(store.get(keys.evaluation(r.round_id))) for r in reports]
    reached = sum(r.reached for r in reports)
    honest_copies = [
        (rec["round_id"], x["miner"], x["detail"])
        for rec in records
        for x in rec["responses"]
        if x["miner"] in HONEST and x["reason"] == "copy"
    ]
    assert not honest_copies, honest_copies[:3]
    assert reached >= 0.95 * ROUNDS, f"consensus in {reached} of {ROUNDS} rounds"
    assert all(r.paid > 0 for r in reports if r.reached), "a round reached consensus and paid nobody"
    weights = daemon.ledger.weights()
    assert all(weights[h] > weights.get("copycat", 0.0) for h in HONEST), weights
    units = {m: t.emissions for m, t in daemon.ledger.miners.items()}
    assert all(units[h] > units.get("copycat", 0) for h in HONEST), units
    # the wall time CI pays for this test (the budget: a few minutes on two cores)
    print(f"{ROUNDS} rounds in {seconds:.0f} s; consensus in {reached}; weights {weights}")
