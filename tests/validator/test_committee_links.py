"""Identities the ledger has linked are drawn apart (validator.daemon.committee_draw.linked_entities, DaemonState.draw_entities)."""

from __future__ import annotations

import json

import numpy as np

from emissions.ledger import Ledger, PairTotals, pair_key
from storage import keys
from storage.codec import dumps
from storage.memory import MemoryStore
from tests.validator.test_committees import assert_replay_equals_records, restarted_mid_tick
from validator.daemon.committee_draw import LINKED, committee_count, draw_committees, linked_entities, plan_tick
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
    assert most_apart == 2  # 20 over 10 committees of 6-7 (more than 64 // 8: the group outnumbers them): 2 each
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


def test_committee_count_grows_for_an_entity_larger_than_the_committees():
    assert committee_count(80, 16) == committee_count(80, 16, [1, 5, 3]) == 5  # they fit: as without entities
    assert committee_count(80, 16, [7]) == 7 and committee_count(80, 16, [10, 4]) == 10  # one of each per committee
    # more than committees of half the size allow (80 // 8 = 10): the fewest that hold the fewest of it each
    assert committee_count(80, 16, [11]) == 6 and committee_count(80, 16, [20]) == 10  # 2 each
    assert committee_count(80, 16, [21]) == 7 and committee_count(64, 8, [20]) == 10  # 3 each; 2 each of 6-7
    assert committee_count(120, 16, [16]) == 8  # 2 each (15 committees would not hold fewer)
    # every entity at its fewest: 16 sybils need 8 committees for 2 each, a farm of 10 needs 10 for 1 each
    assert committee_count(80, 16, [16, 10]) == 10
    assert committee_count(31, 16, [20]) == 1 and committee_count(80, 0, [20]) == 1  # one committee stays one
    assert committee_count(10, 2, [8]) == 5 and committee_count(12, 3, [6]) == 6  # never a committee of one


def _components(rng, miners, sizes):
    """``miners`` with linked components of ``sizes`` (the ledger's links, chained pair by pair) at random places."""
    order = [miners[i] for i in rng.permutation(len(miners))]
    groups, at = [], 0
    for k in sizes:
        groups.append(order[at : at + k])
        at += k
    links = [(a, b) for g in groups for a, b in zip(g, g[1:], strict=False)]
    return groups, linked_entities({m: None for m in miners}, links)


def test_linked_identities_never_share_a_committee_while_the_miners_allow_it():
    rng = np.random.default_rng(0)
    for trial in range(100):
        n, size = int(rng.integers(32, 200)), int(rng.choice([4, 8, 16]))
        miners = [f"m{i:03d}" for i in range(n)]
        cap = max(n // size, n // -(-size // 2))
        sizes = [int(k) for k in rng.integers(2, cap + 1, size=int(rng.integers(1, 5)))]
        if sum(sizes) > n:
            continue
        groups, merged = _components(rng, miners, sizes)
        drawn = draw_committees(miners, merged, size, seed=trial)
        assert sorted(m for c in drawn for m in c) == miners  # everyone once
        assert max(map(len, drawn)) - min(map(len, drawn)) <= 1
        if n >= 2 * size:
            assert min(map(len, drawn)) >= -(-size // 2)  # at least half the size
        assert all(len(set(g) & set(c)) <= 1 for g in groups for c in drawn), (trial, n, size, sizes)
        assert draw_committees(miners, merged, size, seed=trial) == drawn  # seeded: the same draw again


def test_a_component_beyond_half_size_committees_is_spread_as_thin_as_they_allow():
    miners = [f"m{i:03d}" for i in range(80)]
    for seed in range(30):
        rng = np.random.default_rng(seed)
        (big,), merged = _components(rng, miners, [25])
        drawn = draw_committees(miners, merged, 16, seed)
        assert len(drawn) == 9 and all(8 <= len(c) <= 9 for c in drawn)  # 10 would not hold fewer than 3 each
        assert max(len(set(big) & set(c)) for c in drawn) == 3  # 25 over 9: 2 or 3 each, not 5 over 5
        (sybils, farm), merged = _components(rng, miners, [16, 10])
        drawn = draw_committees(miners, merged, 16, seed)  # 10: the farm one each, the 16 two at most
        assert len(drawn) == 10 and all(len(set(farm) & set(c)) == 1 and len(set(sybils) & set(c)) <= 2 for c in drawn)


def test_an_entity_that_fits_keeps_the_count():
    # the count only grows for an entity larger than miners // size
    miners = [f"m{i:03d}" for i in range(80)]
    trio = {m: "op" for m in miners[:3]}
    for seed in range(10):
        drawn = draw_committees(miners, trio, 16, seed)
        assert len(drawn) == 5 and all(sum(m in c for m in miners[:3]) <= 1 for c in drawn)


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


def test_the_daemon_draws_more_committees_for_a_component_larger_than_their_count(embedder):
    quartet = ("m03", "m04", "m05", "m06")  # 12 miners in committees of 4 make 3: four linked need 4 of 3
    store = MemoryStore()
    chain = list(zip(quartet, quartet[1:], strict=False))
    pairs = {pair_key(a, b): PairTotals(together=10, close=10) for a, b in chain}
    store.put(keys.ledger(), dumps(Ledger(alpha=0.1, pairs=pairs).to_json()), "application/json")
    d = daemon(store, embedder)
    d.run(ticks=2)
    docs = [json.loads(store.get(keys.round_input(f"round-{n:06d}"))) for n in range(1, 9)]
    drawn = [tuple(r["miner"] for r in doc["responses"]) for doc in docs]
    assert [len(c) for c in drawn] == [3] * 8  # two ticks of 4 committees of 3
    assert all(sum(m in quartet for m in c) == 1 for c in drawn)
    assert all(sum(m in DECLARED for m in c) <= 1 for c in drawn)
    assert d.ledger.ticks == 2 and d.ledger.last_tick_committees == 4
    assert_replay_equals_records(store, embedder, rounds=8)
