"""The daemon loop with its edges injected: memory/local stores, a scripted query, the fake embedder."""

from __future__ import annotations

import json

import pytest

from storage import keys
from storage.embeddings import decode_embeddings
from storage.local import LocalStore
from storage.memory import MemoryStore
from validator.daemon.daemon import Daemon, DaemonError
from validator.daemon.prometheus import Metrics
from validator.miners.fake import FakeMiners
from validator.round.prompt_source import PromptItem
from validator.settings import load_settings

ANSWERS = {
    "alice": "Yes. Python lists are mutable: you can change, append and remove elements in place.",
    "bob": "Yes, lists in Python are mutable, so their elements can be modified after creation.",
    "carol": "Yes - a Python list is a mutable sequence; items can be reassigned, added or deleted.",
    "dave": "Yes. Lists are mutable objects in Python, unlike tuples, so you can modify them in place.",
}
PROMPTS = (PromptItem("Is Python's list type mutable?"), PromptItem("Second prompt?"))


def settings(heatmap=False, **daemon):
    """Daemon settings for tests. Heatmaps are off unless asked for: the ledger, crash recovery and metrics
    do not read them, and rendering them was 18 of the fast suite's 107 heatmaps. Tests that count or
    compare stored heatmaps (here, test_daemon_s3.py, test_ray_*.py) pass ``heatmap=True``."""
    env = {f"VALIDATOR_DAEMON__{k.upper()}": str(v) for k, v in daemon.items()}
    env.setdefault("VALIDATOR_DAEMON__INTERVAL_S", "0")
    env["VALIDATOR_OUTPUT__HEATMAP"] = "true" if heatmap else "false"
    # the scripted answers are not about the placeholder prompts ("Second prompt?"): under the fake
    # embedder every cluster would be off topic (tests/consensus/test_relevance.py tests the gate)
    env["VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE"] = "false"
    return load_settings(None, env=env, dotenv_path=None)


def ScriptedQuery(failures=None) -> FakeMiners:
    """The four miners of ``ANSWERS`` (the package's fake transport); ``failures``: miner -> reason."""
    return FakeMiners(ANSWERS, failures)


class CrashAfter:
    """A store that dies (like kill -9) right after writing a given key."""

    def __init__(self, inner, key):
        self.inner, self.key = inner, key

    def put(self, key, data, content_type="application/octet-stream"):
        self.inner.put(key, data, content_type)
        if key == self.key:
            raise SystemExit("crash")

    def __getattr__(self, name):
        return getattr(self.inner, name)


def make(store, embedder, query=None, heatmap=False, **daemon):
    return Daemon(
        store=store,
        embedder=embedder,
        settings=settings(heatmap, **daemon),
        prompts=PROMPTS,
        query=query or ScriptedQuery(),
    )


def test_rounds_are_stored_and_the_ledger_adds_up(embedder):
    store = MemoryStore()
    daemon = make(store, embedder, heatmap=True)
    reports = daemon.run(rounds=2)
    assert all(store.get(keys.heatmap(r.round_id)).startswith(b"\x89PNG") for r in reports)
    assert [r.round_id for r in reports] == ["round-000001", "round-000002"]
    assert all(r.status == "ok" and r.usable == 4 for r in reports)
    ledger = json.loads(store.get(keys.ledger()))
    assert ledger["last_sequence"] == 2 and ledger["rounds"] == 2
    paid = sum(json.loads(store.get(keys.evaluation(r.round_id)))["emissions"]["total"] for r in reports)
    assert ledger["emitted"] == paid == sum(m["emissions"] for m in ledger["miners"].values())
    assert sum(ledger["weights"].values()) == pytest.approx(1.0)
    record = json.loads(store.get(keys.evaluation("round-000002")))
    assert record["daemon"]["sequence"] == 2 and record["prompt"] == "Second prompt?"
    emb = decode_embeddings(store.get(keys.embeddings("round-000001")))
    assert emb.vectors.shape[0] == 4 and emb.model_checksum == embedder.checksum
    assert "round-000001" in reports[0].line() and "paid" in reports[0].line()


def test_failures_are_recorded_with_reasons_and_excluded(embedder):
    store = MemoryStore()
    report = make(store, embedder, ScriptedQuery({"dave": "timeout"})).run_one()
    assert report.failures == {"timeout": 1} and report.usable == 3
    record = json.loads(store.get(keys.evaluation(report.round_id)))
    dave = next(r for r in record["responses"] if r["miner"] == "dave")
    assert dave["error"] == "timeout" and dave["detail"] == "timeout (scripted)" and not dave["in_consensus"]
    assert dave["emissions"]["amount"] == 0
    stored_input = json.loads(store.get(keys.round_input(report.round_id)))
    assert stored_input["daemon"]["failures"]["dave"] == "timeout (scripted)"


def test_below_quorum_pays_nobody_and_keeps_emas(embedder):
    store = MemoryStore()
    daemon = make(store, embedder, quorum=3)
    daemon.run_one()
    emas = {k: v.ema for k, v in daemon.ledger.miners.items()}
    daemon.query = ScriptedQuery({"alice": "http_error", "bob": "timeout", "carol": "empty"})
    report = daemon.run_one()
    assert report.status == "no_quorum" and report.paid == 0
    record = json.loads(store.get(keys.evaluation(report.round_id)))
    assert record["status"] == "no_quorum" and "no quorum" in record["consensus"]["note"]
    assert {k: v.ema for k, v in daemon.ledger.miners.items()} == emas
    assert daemon.ledger.no_quorum == 1 and daemon.ledger.rounds == 2


@pytest.fixture(scope="module")
def uncrashed_ledger(embedder):
    """The ledger of three rounds run without a crash (the same for every crash point)."""
    reference = MemoryStore()
    make(reference, embedder).run(rounds=3)
    return json.loads(reference.get(keys.ledger()))


@pytest.mark.parametrize("crash_key", ["input", "evaluation", "ledger"])
def test_crash_at_any_point_then_restart_loses_nothing_and_counts_once(embedder, tmp_path, crash_key, uncrashed_ledger):
    expected = uncrashed_ledger
    store = LocalStore(tmp_path / "rounds")
    make(store, embedder).run(rounds=1)
    key = {"input": keys.round_input, "evaluation": keys.evaluation}.get(crash_key, lambda _r: keys.ledger())
    query = ScriptedQuery()
    crashing = make(CrashAfter(store, key("round-000002")), embedder, query)
    with pytest.raises(SystemExit):
        crashing.run(rounds=2)
    restart_query = ScriptedQuery()
    restarted = make(store, embedder, restart_query)
    reports = restarted.run(rounds=3 - restarted.ledger.last_sequence)
    ledger = json.loads(store.get(keys.ledger()))
    assert ledger == expected  # the same numbers as a run without a crash
    # the miners were asked once per round in total
    assert len(query.calls) + len(restart_query.calls) == 2
    if crash_key != "ledger":
        assert reports[0].recovered == crash_key


def test_a_foreign_round_under_our_id_is_never_overwritten(embedder):
    store = MemoryStore()
    foreign = {"round_id": "round-000001", "prompt": "p", "responses": []}
    store.put(keys.round_input("round-000001"), json.dumps(foreign).encode())
    with pytest.raises(DaemonError, match="not written by this daemon"):
        make(store, embedder).run_one()
    assert json.loads(store.get(keys.round_input("round-000001"))) == foreign


def test_corrupt_ledger_is_a_clear_error(embedder):
    store = MemoryStore()
    store.put(keys.ledger(), b"{not json")
    with pytest.raises(DaemonError, match="ledger.json"):
        make(store, embedder)


def test_metrics_after_rounds(embedder):
    metrics = Metrics()
    daemon = make(MemoryStore(), embedder, ScriptedQuery({"bob": "http_error"}))
    daemon.metrics = metrics
    daemon.run(rounds=2)
    text = metrics.render().decode()
    assert 'validator_rounds_total{status="ok"} 2.0' in text
    assert 'validator_miner_failures_total{reason="http_error"} 2.0' in text
    assert "validator_miner_latency_seconds_count 6.0" in text
    assert "validator_consensus_rate" in text and 'validator_round_stage_seconds_count{stage="embed"} 2.0' in text
