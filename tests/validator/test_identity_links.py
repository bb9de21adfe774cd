"""Identity links at the edge (issue 24 item 4): the daemon folds each round's close pairs into its ledger, stores
the links it applies with the round's input, and replay, what-if and the review use exactly those."""

from __future__ import annotations

import json

import pytest

from consensus.fake import FakeEmbedder
from consensus.identity import Link
from storage import keys
from storage.memory import MemoryStore
from validator.daemon import Daemon
from validator.ledger import Ledger
from validator.miners.fake import FakeMiners
from validator.prompts import PromptItem
from validator.replay import RoundSelection, replay_store
from validator.review import load_store
from validator.settings import load_settings
from validator.stored import InputMarker, StoredRound, parse_stored
from validator.whatif import run_whatif

# bob says what alice says in other words, a little later, every round: far more alike than the round's answers
ANSWERS = {
    "alice": "Python lists are mutable: you can change, append and remove their elements in place at any time.",
    "bob": "Yes; a list object may be edited after creation, e.g. by item assignment, extend or del.",
    "carol": "A list in Python can be modified after it is created, unlike a tuple, which stays fixed.",
    "dave": "Yes, lists can change; methods such as append, insert and pop alter the same object.",
}
PROMPTS = (PromptItem("Is Python's list type mutable?"),)
ROUNDS = 11  # a link needs identity_min_rounds (5) close rounds and twice as many together


def settings(**consensus):
    env = {"VALIDATOR_DAEMON__INTERVAL_S": "0", "VALIDATOR_CONSENSUS__HEATMAP": "false",
           "VALIDATOR_CONSENSUS__RELEVANCE_GATE": "false"}
    env.update({f"VALIDATOR_CONSENSUS__{k.upper()}": str(v) for k, v in consensus.items()})
    return load_settings(None, env=env, dotenv_path=None)


def fake():
    # alice and bob as one voice (cosine about 0.99), carol and dave on the same topic (cosine about 0.5)
    return FakeEmbedder(groups={ANSWERS["alice"]: "lists/a", ANSWERS["bob"]: "lists/a", ANSWERS["carol"]: "lists/c",
                                ANSWERS["dave"]: "lists/d"})


@pytest.fixture(scope="module")
def store():
    store = MemoryStore()
    clock = iter(1_700_000_000.0 + 100 * i for i in range(20))
    Daemon(store=store, embedder=fake(), settings=settings(), prompts=PROMPTS, query=FakeMiners(ANSWERS),
           clock=lambda: next(clock)).run(rounds=ROUNDS)
    return store


def record(store, rid):
    return json.loads(store.get(keys.evaluation(rid)))


def test_close_pairs_are_recorded_and_folded_into_the_ledger(store):
    assert record(store, "round-000001")["close_pairs"] == [{"first": "alice", "second": "bob", "later": "bob"}]
    assert record(store, "round-000001")["schema"].endswith("/1.4")
    ledger = json.loads(store.get(keys.ledger()))
    pair = ledger["pairs"]["alice\tbob"]
    assert pair == {"together": 11, "close": 11, "first_later": 0, "second_later": 11}


def test_the_links_are_stored_with_the_input_from_the_round_they_apply(store):
    inputs = [json.loads(store.get(keys.round_input(f"round-{i:06d}"))) for i in range(1, ROUNDS + 1)]
    assert all("links" not in doc["daemon"] for doc in inputs[:10])  # ten rounds together, all close, make a link
    assert inputs[10]["daemon"]["links"] == [{"first": "alice", "second": "bob", "follower": "bob", "close": 10,
                                              "together": 10}]
    stored = parse_stored(inputs[10], "round-000011")
    assert stored.daemon.links == (Link("alice", "bob", "bob", 10, 10),)
    assert stored.known().followers == {1: 0}
    bob = record(store, "round-000011")["responses"][1]
    assert bob["reason"] == "copy" and "follows miner 'alice'" in bob["detail"] and bob["emissions"]["amount"] == 0
    assert record(store, "round-000010")["responses"][1]["reason"] != "copy"


def test_replay_uses_the_stored_links_and_writes_the_same_records(store):
    result = replay_store(store, settings(), fake(), replay_id="same")
    assert len(result.diffs) == ROUNDS and not result.failures
    assert all(not d.joined and not d.left and not d.emissions for d in result.diffs)
    new = json.loads(store.get(keys.replay_evaluation("round-000011", "same")))
    old = record(store, "round-000011")
    new.pop("replay"), old.pop("daemon")
    assert new == old


def test_a_whatif_without_the_identity_rule_pays_the_follower(store):
    report = run_whatif(store, settings(identity_persistence="false"), fake(), whatif_id="no-identity",
                        source="test", selection=RoundSelection()).to_json()
    assert {"setting": "consensus.identity_persistence", "old": True, "new": False} in report["config_changes"]
    assert report["miners"]["bob"]["emissions_change"] > 0


def test_the_ledger_rebuilt_from_the_records_is_the_stored_one_pairs_included(store):
    review = load_store(store)
    assert review.ledger_trajectory()[-1].to_json() == Ledger.from_json(json.loads(store.get(keys.ledger()))).to_json()


def test_links_without_a_marker_or_malformed():
    from consensus.errors import RoundError
    from consensus.types import Response, Round

    round_ = Round("r", "p?", (Response("a", "x", 1.0), Response("b", "y", 1.2)))
    assert StoredRound(round_).known() is None
    assert StoredRound(round_, daemon=InputMarker(1)).known() is None
    doc = StoredRound(round_, daemon=InputMarker(1, links=(Link("a", "b", None, 5, 6),))).to_json()
    assert parse_stored(doc, "r").known().entities == {0: "linked:a", 1: "linked:a"}
    doc["daemon"]["links"] = [{"first": "a", "second": "b", "follower": "c", "close": 5, "together": 6}]
    with pytest.raises(RoundError, match=r"daemon.links\[0\]"):
        parse_stored(doc, "r")


def test_the_report_shows_the_pair_evidence(store, tmp_path):
    from validator.report import build_report

    table = load_store(store).pairs_table()
    assert table.records()[0] == {"first": "alice", "second": "bob", "together": 11, "close": 11, "close_share": 1.0,
                                  "later": "bob", "linked": True, "follower": "bob"}
    build_report(store, tmp_path / "site", source="test")
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'id="pair-table"' in index and "bob follows" in index and "1 linked" in index
