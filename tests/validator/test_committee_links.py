"""Identities the ledger has linked are drawn apart (validator.daemon.committee_draw.linked_entities, DaemonState.draw_entities)."""

from __future__ import annotations

import json

import numpy as np

from emissions.ledger import Ledger, PairTotals, pair_key
from storage import keys
from storage.codec import dumps
from storage.memory import MemoryStore
from tests.validator.test_committees import assert_replay_equals_records, restarted_mid_tick
from validator.daemon.committee_draw import LINKED, draw_committees, linked_entities, plan_tick
from validator.daemon.daemon import Daemon
from validator.miners.fake import FakeMiners
from validator.settings import load_settings

from .test_committees import MINERS, PROMPTS, SECRET

DECLARED = {"m00": "op", "m01": "op", "m02": "op"}


def test_no_links_leave_the_declared_entities_as_they_are():
    entities = {"a": None, "b": "op", "c": "op"}
    assert linked_entities(entities, []) == entities
    assert linked_entities(entities, [("a", "zz"), ("a", "a")]) == entities  # absent miners, self-links: ignored


def test_links_unite_into_components_with_one_key():
    entities = {m: None for m in "abcdefg"}
    merged = linked_entities(entities, [("c", "b"), ("d", "c"), ("f", "g")])
    assert merged["b"] == merged["c"] == merged["d"] == LINKED + "b"  # a chain is one component
    assert merged["f"] == merged["g"] == LINKED + "f"
    assert merged["a"] is None and merged["e"] is None  # in no link: as declared
    assert merged == linked_entities(entities, [("g", "f"), ("b", "c"), ("c", "d")])  # order-free


def test_a_component_that_touches_a_declared_entity_joins_it():
    entities = {"a": "op", "b": "op", "c": None, "d": None, "e": "other", "f": None}
    merged = linked_entities(entities, [("c", "b"), ("d", "c")])
    assert [merged[m] for m in "abcd"] == ["op"] * 4 and merged["e"] == "other" and merged["f"] is None
    # a link between two declared entities makes them one (the smallest name)
    both = linked_entities(entities, [("a", "e")])
    assert {both[m] for m in "abe"} == {"op"} and both["c"] is None
    # no declared entity is mistaken for a component key
    assert not any(v.startswith(LINKED) for v in merged.values() if v is not None)


def test_a_linked_sybil_group_is_spread_over_the_committees():
    miners = [f"m{i:03d}" for i in range(64)]
    sybils = miners[::3][:20]  # 20 of 64 (31%), committees of 8: 8 committees
    chain = list(zip(sybils, sybils[1:], strict=False))  # linked pair by pair, as the ledger finds them
    declared = {m: None for m in miners}
    merged = linked_entities(declared, chain)
    most_apart = most_random = 0
    for seed in range(300):
        for entities, count in ((merged, "apart"), (declared, "random")):
            worst = max(sum(m in sybils for m in c) for c in draw_committees(miners, entities, 8, seed))
            if count == "apart":
                most_apart = max(most_apart, worst)
            else:
                most_random = max(most_random, worst)
    assert most_apart == 3  # 20 over 8 committees: 2 or 3 each, never a majority (5 of 8)
    assert most_random >= 5  # the plain draw gives them majorities


def test_the_link_aware_draw_is_deterministic():
    miners = [f"m{i:02d}" for i in range(40)]
    entities: dict[str, str | None] = {m: ("op" if i < 3 else None) for i, m in enumerate(miners)}
    links = [("m05", "m06"), ("m06", "m07"), ("m10", "m00")]
    first = plan_tick(SECRET, 9, 1, miners, linked_entities(entities, links), 8)
    again = plan_tick(SECRET, 9, 1, miners, linked_entities(dict(entities), list(reversed(links))), 8)
    assert first == again
    apart = [{m for m in ("m05", "m06", "m07")} & set(c) for c in first.committees]
    assert all(len(s) <= 1 for s in apart)
    assert all(len({"m00", "m01", "m02", "m10"} & set(c)) <= 1 for c in first.committees)


# ---- the daemon ----------------------------------------------------------------------------------------------
LINKED_TRIO = ("m03", "m04", "m05")


def settings(links=True):
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_DAEMON__COMMITTEE_SIZE": "4",
        "VALIDATOR_DAEMON__COMMITTEE_LINKS": "true" if links else "false",
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE": "false",
    }
    return load_settings(None, env=env, dotenv_path=None)


def linked_store() -> MemoryStore:
    """A store whose ledger links m03-m04 and m04-m05 (close in 10 of the 10 rounds both answered)."""
    store = MemoryStore()
    pairs = {pair_key(a, b): PairTotals(together=10, close=10) for a, b in (("m03", "m04"), ("m04", "m05"))}
    store.put(keys.ledger(), dumps(Ledger(alpha=0.1, pairs=pairs).to_json()), "application/json")
    return store


def daemon(store, embedder, links=True):
    query = FakeMiners(MINERS, entities=DECLARED)
    return Daemon(store=store, embedder=embedder, settings=settings(links), prompts=PROMPTS, query=query, secret=SECRET)


def members(store, ticks):
    docs = [json.loads(store.get(keys.round_input(f"round-{n:06d}"))) for n in range(1, 3 * ticks + 1)]
    return [tuple(r["miner"] for r in d["responses"]) for d in docs]


def test_the_daemon_draws_the_ledgers_linked_miners_apart(embedder):
    store = linked_store()
    d = daemon(store, embedder)
    assert {d.draw_entities(list(d.roster()))[m] for m in LINKED_TRIO} == {LINKED + "m03"}
    d.run(ticks=4)
    assert all(sum(m in LINKED_TRIO for m in c) <= 1 for c in members(store, 4))
    assert all(sum(m in DECLARED for m in c) == 1 for c in members(store, 4))
    # the draw of each tick is plan_tick's over the merged map, from the secret
    merged = linked_entities({m: DECLARED.get(m) for m in MINERS}, [("m03", "m04"), ("m04", "m05")])
    assert list(plan_tick(SECRET, 1, 1, list(MINERS), merged, 4).committees) == members(store, 1)
    # off: the declared entities only (this secret puts two of the trio together in a tick)
    plain = linked_store()
    daemon(plain, embedder, links=False).run(ticks=4)
    assert any(sum(m in LINKED_TRIO for m in c) > 1 for c in members(plain, 4))


def test_a_restart_mid_tick_resumes_the_link_aware_committees(embedder):
    whole, store = restarted_mid_tick(linked_store, lambda s: daemon(s, embedder))
    assert members(whole, 2) == members(store, 2)
    assert json.loads(whole.get(keys.ledger())) == json.loads(store.get(keys.ledger()))


def test_a_replay_of_a_link_aware_store_is_byte_identical(embedder):

    store = linked_store()
    daemon(store, embedder).run(ticks=2)
    assert_replay_equals_records(store, embedder, rounds=6)


def test_without_the_secret_the_link_aware_draw_is_not_derivable():
    from validator.daemon.committee_secret import PUBLIC

    merged = linked_entities({m: DECLARED.get(m) for m in MINERS}, [("m03", "m04"), ("m04", "m05")])
    actual = plan_tick(SECRET, 3, 7, list(MINERS), merged, 4).committees
    for guess in (PUBLIC, b"round-000006", b"m03\tm04"):
        assert plan_tick(guess, 3, 7, list(MINERS), merged, 4).committees != actual
    assert np.all([len(c) == 4 for c in actual])
