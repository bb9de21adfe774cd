"""Replay from a store: filters, embeddings reused, new records beside the originals, the diff."""

import json

import pytest

from storage import keys
from storage.codec import dumps
from storage.memory import MemoryStore
from tests.validator.records import make_record
from tests.validator.test_daemon import ANSWERS, ScriptedQuery, make, settings
from validator.records.reader import RoundReader
from validator.replaying.replay_run import RoundSelection, diff_records, replay_store


@pytest.fixture(scope="module")
def embedder():
    """The fake embedder with the four paraphrases as one cluster, as the real model sees them (slow suite)."""
    from consensus.fake import FakeEmbedder

    return FakeEmbedder(groups={text: "mutable" for text in ANSWERS.values()})


@pytest.fixture(scope="module")
def daemon_store(embedder):
    store = MemoryStore()
    clock = iter([1_700_000_000.0, 1_700_000_100.0, 1_700_000_200.0])
    daemon = make(store, embedder, ScriptedQuery({"dave": "timeout"}))
    daemon.clock = lambda: next(clock)
    daemon.run(rounds=3)
    return store


def snapshot(store):
    return {k: store.get(k) for k in store.list()}


def test_same_config_replay_changes_nothing_and_reuses_embeddings(daemon_store, embedder):
    before = snapshot(daemon_store)
    result = replay_store(daemon_store, settings(), embedder, replay_id="same")
    assert len(result.diffs) == 3 and not result.failures
    assert all(d.embeddings_reused and not d.joined and not d.left and not d.emissions for d in result.diffs)
    # originals untouched; new records beside them
    for key, data in before.items():
        assert daemon_store.get(key) == data
    new = json.loads(daemon_store.get(keys.replay_evaluation("round-000001", "same")))
    old = json.loads(daemon_store.get(keys.evaluation("round-000001")))
    assert new["consensus"] == old["consensus"] and new["replay"]["replay_id"] == "same"
    assert json.loads(daemon_store.get(keys.replay_report("same")))["emission_changes"] == {}
    report = RoundReader(daemon_store).replay_report("same")  # the typed replays/<id>.json reads back as written
    assert report.emission_changes == {} and [r.round_id for r in report.rounds] == [d.round_id for d in result.diffs]
    assert dumps(report.to_json()) == daemon_store.get(keys.replay_report("same"))


def test_a_stricter_config_moves_miners_and_reports_emission_changes(daemon_store, embedder):
    strict = settings(quorum=4)  # dave times out every round: 3 usable answers are now below quorum
    result = replay_store(
        daemon_store,
        strict,
        embedder,
        replay_id="strict",
        selection=RoundSelection(round_ids=frozenset({"round-000002"})),
    )
    assert [d.round_id for d in result.diffs] == ["round-000002"] and result.skipped == 2
    diff = result.diffs[0]
    assert set(diff.left) == {"alice", "bob", "carol"} and diff.joined == ()
    assert all(after == 0 and before > 0 for before, after in diff.emissions.values())
    assert sum(result.miner_changes().values()) < 0


def test_time_range_filter(daemon_store, embedder):
    sel = RoundSelection(since="2023-11-14T22:14:00Z", until="2023-11-14T22:16:00Z")  # only the second round
    result = replay_store(daemon_store, settings(), embedder, replay_id="window", selection=sel)
    assert [d.round_id for d in result.diffs] == ["round-000002"]


def test_replays_never_overwrite_and_a_rerun_rewrites_nothing(daemon_store, embedder):
    sel = RoundSelection(round_ids=frozenset({"round-000003"}))
    replay_store(daemon_store, settings(), embedder, replay_id="twice", selection=sel)
    written = snapshot(daemon_store)
    same = replay_store(daemon_store, settings(), embedder, replay_id="twice", selection=sel)
    assert len(same.diffs) == 1 and not same.failures  # the same bytes: a re-run (or a retried task) is a no-op
    other = replay_store(daemon_store, settings(quorum=4), embedder, replay_id="twice", selection=sel)
    assert not other.diffs and "never overwrite" in other.failures[0].error
    assert {k: v for k, v in snapshot(daemon_store).items() if "/replays/twice/" in k} == {
        k: v for k, v in written.items() if "/replays/twice/" in k
    }


def test_unreadable_stored_input_is_reported_and_others_go_on(embedder):
    store = MemoryStore()
    make(store, embedder).run(rounds=1)
    store.put("rounds/broken/input.json", b"{not json")
    result = replay_store(store, settings(), embedder, replay_id="r")
    assert len(result.diffs) == 1 and result.failures[0].key == "rounds/broken/input.json"


def test_diff_records_hand_made():
    d = diff_records(
        make_record("r", [("a", True, 10), ("b", False, 0)], 0.8),
        make_record("r", [("a", False, 0), ("b", True, 7)], 0.7),
    )
    assert d.joined == ("b",) and d.left == ("a",) and d.emissions == {"a": (10, 0), "b": (0, 7)}
    assert (d.consensus_before, d.consensus_after) == (0.8, 0.7)


def test_a_damaged_original_record_fails_its_round_only_naming_it(embedder):
    """An unreadable evaluation.json is not "no original": its old pay is unknown, so the round fails with the key
    and why (a what-if would otherwise count its old pay as 0); a missing one is a round never committed."""
    store = MemoryStore()
    make(store, embedder).run(rounds=2)
    first, second = sorted(k for k in store.list() if k.endswith("/evaluation.json"))
    store.put(first, b"{not json")
    result = replay_store(store, settings(), embedder, replay_id="r")
    assert len(result.diffs) == 1 and len(result.failures) == 1
    assert "unreadable original record" in result.failures[0].error and first in result.failures[0].error
    store.delete(first)
    again = replay_store(store, settings(), embedder, replay_id="r2")
    assert len(again.diffs) == 2 and not again.failures
