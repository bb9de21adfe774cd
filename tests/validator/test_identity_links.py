"""Identity links at the edge (issue 24 item 4): the daemon folds each round's close pairs and the miners it could
compare into its ledger, stores the links it applies with the round's input, and replay, what-if and the review use
exactly those. A link is shown and steers the committees' draw; it never makes a copy nor shares a payout
(issue 46): the linked follower is paid on its answer's merits. The hotkeys it forgets (chain mode's deregistered ones) are stored with the next round's input the
same way, so the ledger rebuilt from the records drops them too."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import pytest

from consensus.fake import FakeEmbedder
from consensus.identity import Link
from consensus.types import InputMarker
from storage import keys
from storage.memory import MemoryStore
from validator.daemon.daemon import Daemon
from validator.miners.fake import FakeMiners
from validator.records.ledger_entries import Ledger
from validator.records.stored_round import parse_stored, stored_to_json
from validator.replaying.replay_run import RoundSelection, replay_store
from validator.replaying.whatif_run import run_whatif
from validator.review import load_store
from validator.round.prompt_source import PromptItem
from validator.settings import load_settings

# bob says what alice says in other words, a little later, every round: far more alike than the round's answers
ANSWERS = {
    "alice": "Python lists are mutable: you can change, append and remove their elements in place at any time.",
    "bob": "Yes; a list object may be edited after creation, e.g. by item assignment, extend or del.",
    "carol": "A list in Python can be modified after it is created, unlike a tuple, which stays fixed.",
    "dave": "Yes, lists can change; methods such as append, insert and pop alter the same object.",
}
SHORT = {"alice": "Yes.", "bob": "Yes.", "carol": "Yes.", "dave": "Yes."}  # one word each: nothing to compare
LONG_PROMPT, SHORT_PROMPT = "Is Python's list type mutable?", "Is Python's list type mutable? One word."
# two rounds to compare, then one that compares no one: rounds 3, 6, 9, ... count for no pair
PROMPTS = (PromptItem(LONG_PROMPT), PromptItem(LONG_PROMPT), PromptItem(SHORT_PROMPT))
# the prompt order is drawn from the committees' secret (validator.daemon.committee_draw): this one asks the short prompt
# third in every pass of the three, as these rounds were written for (found by trying secrets in turn)
SECRET = b"identity-links-52"
ROUNDS = 16  # the 11 long rounds are 1, 2, 4, 5, 7, 8, 10, 11, 13, 14, 16


def settings(**consensus):
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE": "false",
    }
    env.update({f"VALIDATOR_CONSENSUS__{k.upper()}": str(v) for k, v in consensus.items()})
    return load_settings(None, env=env, dotenv_path=None)


def answers():
    return {miner: (lambda prompt, m=miner: SHORT[m] if prompt == SHORT_PROMPT else ANSWERS[m]) for miner in ANSWERS}


def fake():
    # alice and bob as one voice (cosine about 0.99), carol and dave on the same topic (cosine about 0.5)
    return FakeEmbedder(
        groups={
            ANSWERS["alice"]: "lists/a",
            ANSWERS["bob"]: "lists/a",
            ANSWERS["carol"]: "lists/c",
            ANSWERS["dave"]: "lists/d",
        }
    )


@pytest.fixture(scope="module")
def run() -> tuple[MemoryStore, Ledger]:
    """The store of a daemon's ROUNDS rounds and its ledger in memory at the end."""
    store = MemoryStore()
    clock = (1_700_000_000.0 + 100 * i for i in itertools.count())
    daemon = Daemon(
        store=store,
        embedder=fake(),
        settings=settings(),
        prompts=PROMPTS,
        query=FakeMiners(answers()),
        clock=lambda: next(clock),
        secret=SECRET,
    )
    daemon.run(rounds=ROUNDS)
    return store, daemon.ledger


@pytest.fixture(scope="module")
def store(run) -> MemoryStore:
    return run[0]


def record(store, rid):
    return json.loads(store.get(keys.evaluation(rid)))


def test_close_pairs_and_the_comparable_miners_are_recorded_and_folded_into_the_ledger(store):
    first = record(store, "round-000001")
    assert first["close_pairs"] == [{"first": "alice", "second": "bob", "later": "bob"}]
    assert first["comparable"] == ["alice", "bob", "carol", "dave"] and first["schema"].endswith("/1.7")
    short = record(store, "round-000003")
    assert short["comparable"] == [] and "close_pairs" not in short
    ledger = json.loads(store.get(keys.ledger()))
    pair = ledger["pairs"]["alice\tbob"]
    assert pair == {"together": 11, "close": 11, "first_later": 0, "second_later": 11}  # the short rounds not counted


def test_the_links_are_stored_with_the_input_from_the_round_they_apply(store):
    inputs = [json.loads(store.get(keys.round_input(f"round-{i:06d}"))) for i in range(1, ROUNDS + 1)]
    # ten rounds together make a link; counting the short rounds, round 11 would have had one
    assert all("links" not in doc["daemon"] for doc in inputs[:14])
    assert inputs[14]["daemon"]["links"] == [
        {"first": "alice", "second": "bob", "follower": "bob", "close": 10, "together": 10}
    ]
    stored = parse_stored(inputs[15], "round-000016")
    assert stored.daemon.links == (Link("alice", "bob", "bob", 10, 10),)
    # the link is shown, and nothing more: bob's rewording is no copy and is paid as before the link
    for rid in ("round-000014", "round-000016"):
        bob = record(store, rid)["responses"][1]
        assert bob["reason"] == "in_consensus" and bob["emissions"]["amount"] > 0, rid


def test_replay_uses_the_stored_links_and_writes_the_same_records(store):
    result = replay_store(store, settings(), fake(), replay_id="same")
    assert len(result.diffs) == ROUNDS and not result.failures
    assert all(not d.joined and not d.left and not d.emissions for d in result.diffs)
    new = json.loads(store.get(keys.replay_evaluation("round-000016", "same")))
    old = record(store, "round-000016")
    new.pop("replay"), old.pop("daemon")
    assert new == old


def test_a_whatif_without_the_identity_rule_changes_no_payment(store):
    report = run_whatif(
        store,
        settings(identity__identity_persistence="false"),
        fake(),
        whatif_id="no-identity",
        source="test",
        selection=RoundSelection(),
    ).to_json()
    assert {"setting": "consensus.identity_persistence", "old": True, "new": False} in report["config_changes"]
    assert all(m["emissions_change"] == 0 for m in report["miners"].values())


def test_the_ledger_rebuilt_from_the_records_is_the_live_one_pairs_included(run):
    store, live = run
    rebuilt = load_store(store).ledger_trajectory()[-1]
    assert rebuilt.to_json() == live.to_json() == Ledger.from_json(json.loads(store.get(keys.ledger()))).to_json()
    assert rebuilt.pairs["alice\tbob"].together == 11


def test_a_noop_whatif_folds_the_live_ledger_on_both_sides(run):
    store, live = run
    whatif = run_whatif(store, settings(), fake(), whatif_id="noop", source="test", selection=RoundSelection())
    assert whatif.old.ledger.to_json() == whatif.new.ledger.to_json() == live.to_json()


def test_a_forgotten_hotkey_leaves_the_rebuilt_ledger_as_it_left_the_live_one():
    store = MemoryStore()
    clock = (1_700_000_000.0 + 100 * i for i in itertools.count())

    def daemon(miners):
        return Daemon(
            store=store,
            embedder=fake(),
            settings=settings(),
            prompts=PROMPTS,
            query=FakeMiners({m: a for m, a in answers().items() if m in miners}),
            clock=lambda: next(clock),
        )

    first = daemon(ANSWERS)
    first.run(rounds=4)
    first.forget(["bob", "nobody"])  # bob deregisters after round 4 (chain mode's after_round)
    assert "bob" not in first.ledger.miners and not first.ledger.pairs and first.ledger.forgotten == ("bob",)
    assert json.loads(store.get(keys.ledger()))["forgotten"] == ["bob"]  # kept over a restart until round 5
    assert "bob" in load_store(store).ledger_trajectory()[-1].miners  # the records say so from round 5 on
    second = daemon(["alice", "carol", "dave"])  # a restart: the forgotten hotkey comes from the stored ledger
    second.run(rounds=2)
    inputs = [json.loads(store.get(keys.round_input(f"round-{i:06d}")))["daemon"] for i in range(1, 7)]
    assert [d.get("forgotten") for d in inputs] == [None, None, None, None, ["bob"], None]
    assert record(store, "round-000005")["daemon"]["forgotten"] == ["bob"]
    assert "forgotten" not in record(store, "round-000006")["daemon"]
    live = second.ledger
    assert "bob" not in live.miners and not live.forgotten
    rebuilt = load_store(store).ledger_trajectory()[-1]
    assert rebuilt.to_json() == live.to_json() == Ledger.from_json(json.loads(store.get(keys.ledger()))).to_json()
    whatif = run_whatif(store, settings(), fake(), whatif_id="noop", source="test", selection=RoundSelection())
    assert whatif.old.ledger.to_json() == whatif.new.ledger.to_json() == live.to_json()
    result = replay_store(store, settings(), fake(), replay_id="same")
    assert not result.failures and all(not d.joined and not d.left and not d.emissions for d in result.diffs)


def test_a_record_without_comparable_counts_every_miner_that_answered(store):
    from validator.records.evaluation_record import load_record
    from validator.records.ledger_entries import comparable

    doc = record(store, "round-000003")
    assert comparable(load_record(json.dumps(doc).encode())) == ()
    doc.pop("comparable")  # as written before 1.4 held it, or with identity_persistence off
    assert comparable(load_record(json.dumps(doc).encode())) is None


def test_links_without_a_marker_or_malformed():
    from consensus.errors import RoundError
    from consensus.types import Response, Round

    round_ = Round("r", "p?", (Response("a", "x", 1.0), Response("b", "y", 1.2)))
    assert parse_stored(stored_to_json(round_), "r").daemon is None
    assert stored_to_json(replace(round_, daemon=InputMarker(1)))["daemon"].get("links") is None
    doc = stored_to_json(replace(round_, daemon=InputMarker(1, links=(Link("a", "b", None, 5, 6),))))
    assert parse_stored(doc, "r").daemon.links == (Link("a", "b", None, 5, 6),)
    doc["daemon"]["links"] = [{"first": "a", "second": "b", "follower": "c", "close": 5, "together": 6}]
    with pytest.raises(RoundError, match=r"daemon.links\[0\]"):
        parse_stored(doc, "r")
    doc = stored_to_json(replace(round_, daemon=InputMarker(1, forgotten=("c",))))
    assert doc["daemon"]["forgotten"] == ["c"] and parse_stored(doc, "r").daemon.forgotten == ("c",)
    assert "forgotten" not in stored_to_json(replace(round_, daemon=InputMarker(1)))["daemon"]
    doc["daemon"]["forgotten"] = "c"
    with pytest.raises(RoundError, match=r"daemon.forgotten"):
        parse_stored(doc, "r")


def test_the_report_shows_the_pair_evidence(store, tmp_path):
    from validator.report import build_report

    table = load_store(store).pairs_table()
    assert table.records()[0] == {
        "first": "alice",
        "second": "bob",
        "together": 11,
        "close": 11,
        "close_share": 1.0,
        "later": "bob",
        "linked": True,
        "follower": "bob",
    }
    build_report(store, tmp_path / "site", source="test")
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'id="pair-table"' in index and "bob follows" in index and "1 linked" in index
