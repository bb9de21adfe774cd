"""Secret committees: the pure draw, the prompt order, the tick fold of the ledger, and the daemon's ticks."""

from __future__ import annotations

import json

import pytest

from emissions.ledger import Ledger, MinerEntry
from emissions.ticks import LedgerError, TickPart
from storage import keys
from storage.memory import MemoryStore
from validator.daemon.committee_draw import committee_count, derive, draw_committees, plan_tick, prompt_index
from validator.daemon.daemon import Daemon
from validator.daemon.prometheus import Metrics
from validator.miners.fake import FakeMiners
from validator.review import load_store
from validator.review.miner_history import ledger_trajectory
from validator.round.prompt_source import PromptItem
from validator.settings import load_settings

SECRET = b"a validator's own secret, 32+ chars"


def test_committee_count():
    assert committee_count(10, 16) == 1 and committee_count(31, 16) == 1  # too few for two
    assert committee_count(32, 16) == 2 and committee_count(80, 16) == 5 and committee_count(256, 16) == 16
    assert committee_count(256, 0) == 1  # committees off


def test_every_miner_once_sizes_within_one_and_seeded():
    miners = [f"m{i:03d}" for i in range(83)]
    drawn = draw_committees(miners, {}, 16, seed=7)
    assert len(drawn) == 5 and sorted(m for c in drawn for m in c) == miners
    assert max(map(len, drawn)) - min(map(len, drawn)) <= 1
    assert all(list(c) == sorted(c) for c in drawn)  # each keeps the miners' order
    assert draw_committees(miners, {}, 16, seed=7) == drawn
    assert draw_committees(miners, {}, 16, seed=8) != drawn


def test_one_entity_goes_to_different_committees():
    miners = [f"m{i:03d}" for i in range(80)]
    entities = {m: "farm" for m in miners[:5]} | {m: "big" for m in miners[10:17]}
    for seed in range(50):
        drawn = draw_committees(miners, entities, 16, seed)
        assert all(sum(m in c for m in miners[:5]) <= 1 for c in drawn)
        # 7 identities, more than 80 // 16 = 5 committees: 7 committees (of 11-12), one of them in each
        assert len(drawn) == 7 and all(sum(m in c for m in miners[10:17]) == 1 for c in drawn)


def test_committees_mix_from_tick_to_tick():
    miners = [f"m{i:03d}" for i in range(64)]
    together = [
        any({"m000", "m001"} <= set(c) for c in plan_tick(SECRET, t, 1, miners, {}, 16).committees)
        for t in range(1, 401)
    ]
    assert 0.1 < sum(together) / len(together) < 0.45  # about 15/63 of the ticks


def test_prompt_order_is_a_secret_permutation_per_pass():
    first_pass = [prompt_index(SECRET, 10, s) for s in range(1, 11)]
    second_pass = [prompt_index(SECRET, 10, s) for s in range(11, 21)]
    assert sorted(first_pass) == sorted(second_pass) == list(range(10))  # no prompt twice within a pass
    assert first_pass != list(range(10)) and first_pass != second_pass
    assert [prompt_index(b"another secret, quite different", 10, s) for s in range(1, 11)] != first_pass


def test_the_seed_is_an_hmac_of_the_secret():
    assert derive(SECRET, "committees", 3) == derive(SECRET, "committees", 3)
    assert derive(SECRET, "committees", 3) != derive(SECRET, "committees", 4) != derive(b"x" * 32, "committees", 4)


def _entries(shares):
    return [MinerEntry(m, s, int(s * 1000), s > 0, False) for m, s in shares.items()]


def test_a_miner_weight_does_not_depend_on_its_committee_size():
    ledger = Ledger(alpha=0.5)
    small = {"a": 0.5, "b": 0.5}  # two honest miners split a committee's pool
    large = {f"c{i}": 1 / 6 for i in range(6)}  # six honest miners split another's
    ledger = ledger.apply(1, "r1", _entries(small), no_quorum=False, tick=TickPart(1, 0, 2))
    assert ledger.open_tick is not None and ledger.miners["a"].ema == 0  # waits for the tick's last committee
    ledger = ledger.apply(2, "r2", _entries(large), no_quorum=False, tick=TickPart(1, 1, 2))
    assert ledger.open_tick is None and ledger.ticks == 1 and ledger.last_tick_committees == 2
    emas = {m.ema for m in ledger.miners.values()}
    assert max(emas) == pytest.approx(min(emas)) == pytest.approx(0.5 / 8)
    doc = ledger.to_json()
    assert doc["ticks"] == 1 and doc["last_tick"] == 1 and "open_tick" not in doc


def test_a_tick_of_one_committee_is_the_old_round():
    old = Ledger(alpha=0.2).apply(1, "r1", _entries({"a": 0.7, "b": 0.3}), no_quorum=False)
    new = Ledger(alpha=0.2).apply(1, "r1", _entries({"a": 0.7, "b": 0.3}), no_quorum=False, tick=TickPart(1, 0, 1))
    assert old.to_json() == new.to_json() and old.miners["a"].ema == pytest.approx(0.14)


def test_a_committee_without_quorum_keeps_its_members_ema_and_a_miner_is_asked_once():
    ledger = Ledger(alpha=0.5).apply(1, "r1", _entries({"a": 1.0, "b": 0.0}), no_quorum=False)
    ledger = ledger.apply(2, "r2", _entries({"a": 1.0}), no_quorum=False, tick=TickPart(2, 0, 2))
    mid = ledger.apply(3, "r3", _entries({"b": 0.0}), no_quorum=True, tick=TickPart(2, 1, 2))
    assert mid.miners["b"].ema == ledger.miners["b"].ema and mid.miners["a"].ema == pytest.approx(0.75)
    with pytest.raises(LedgerError, match="second time"):
        ledger.apply(3, "r3", _entries({"a": 0.5}), no_quorum=False, tick=TickPart(2, 1, 2))
    again = Ledger.from_json(json.loads(json.dumps(ledger.to_json())))
    assert again.open_tick == ledger.open_tick  # a restart mid-tick resumes the fold


# ---- the daemon ----------------------------------------------------------------------------------------------
MINERS = {f"m{i:02d}": f"Yes. Python lists are mutable; miner {i} says elements change in place." for i in range(12)}
PROMPTS = tuple(PromptItem(f"Is Python's list type mutable? (variant {i})") for i in range(7))


def settings(size=4):
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_DAEMON__COMMITTEE_SIZE": str(size),
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE": "false",
    }
    return load_settings(None, env=env, dotenv_path=None)


def daemon(store, embedder, query=None, secret=SECRET, metrics=None):
    return Daemon(
        store=store,
        embedder=embedder,
        settings=settings(),
        prompts=PROMPTS,
        query=query or FakeMiners(MINERS, entities={"m00": "op", "m01": "op", "m02": "op"}),
        secret=secret,
        metrics=metrics,
    )


def test_the_daemon_asks_every_miner_once_per_tick_in_committees(embedder):
    store, metrics = MemoryStore(), Metrics()
    d = daemon(store, embedder, metrics=metrics)
    reports = d.run(ticks=2)
    assert len(reports) == 6 and [(r.tick, r.committee) for r in reports] == [(t, c) for t in (1, 2) for c in range(3)]
    inputs = [json.loads(store.get(keys.round_input(r.round_id))) for r in reports]
    for tick in (0, 1):
        members = [r["miner"] for doc in inputs[3 * tick : 3 * tick + 3] for r in doc["responses"]]
        assert sorted(members) == sorted(MINERS)  # every miner once per tick
    assert all(sum(r["miner"] in ("m00", "m01", "m02") for r in doc["responses"]) == 1 for doc in inputs)
    assert len({doc["prompt"] for doc in inputs}) == 6  # no prompt asked twice within a pass of seven
    ledger = json.loads(store.get(keys.ledger()))
    assert ledger["ticks"] == 2 and ledger["last_tick_committees"] == 3 and ledger["rounds"] == 6
    text = metrics.render().decode()
    assert "validator_ticks_total 2.0" in text and "validator_last_tick 2.0" in text
    assert "validator_tick_committees 3.0" in text
    record = json.loads(store.get(keys.evaluation(reports[4].round_id)))
    assert record["daemon"]["tick"] == 2 and record["daemon"]["committee"] == 1 and record["daemon"]["committees"] == 3
    # the review's ledger rebuilt from the records is the daemon's
    rebuilt = ledger_trajectory(load_store(store).rounds, alpha=d.ledger.alpha, canary_alpha=d.ledger.canary_alpha)
    assert rebuilt[-1].to_json() == d.ledger.to_json()


def test_the_secret_is_nowhere_in_the_store_and_the_next_tick_is_not_there(embedder):
    store = MemoryStore()
    daemon(store, embedder).run(ticks=2)
    blobs = [store.get(k) for k in store.list("")]
    assert not any(SECRET in b or SECRET.hex().encode() in b for b in blobs)
    plan = json.loads(store.get(keys.tick_plan()))
    assert plan["tick"] == 2  # the tick that ran: tick 3 is drawn only when it starts
    # another secret draws other committees for the same ticks: the stored ones do not give the next
    other = MemoryStore()
    daemon(other, embedder, secret=b"somebody else's secret, 32 chars").run(ticks=2)
    assert json.loads(other.get(keys.tick_plan()))["committees"] != plan["committees"]


def assert_replay_equals_records(store, embedder, rounds):
    """A replay of the daemon's store with its own settings gives every round's record again (but its markers)."""
    from validator.replaying.replay_run import replay_store

    result = replay_store(store, settings(), embedder, replay_id="same")
    assert len(result.diffs) == rounds and not result.failures
    for n in range(1, rounds + 1):
        rid = f"round-{n:06d}"
        new = json.loads(store.get(keys.replay_evaluation(rid, "same")))
        old = json.loads(store.get(keys.evaluation(rid)))
        new.pop("replay"), old.pop("daemon")
        assert new == old


def restarted_mid_tick(new_store, start):
    """Two stores: one whose daemon ran ticks 1-2 whole, one whose daemon stopped after tick 2's first committee
    and a new daemon finished that tick (``start(store)``: a daemon on the store)."""
    whole = new_store()
    start(whole).run(ticks=2)
    store = new_store()
    start(store).run(rounds=4)  # tick 2's first committee, then stop
    again = start(store)
    assert again.ledger.open_tick is not None and again.ledger.open_tick.done == 1
    again.run(ticks=1)
    return whole, store


def test_a_restart_mid_tick_asks_the_same_committees(embedder):
    whole, store = restarted_mid_tick(MemoryStore, lambda s: daemon(s, embedder))
    for sequence in range(1, 7):
        rid = f"round-{sequence:06d}"
        a, b = (json.loads(s.get(keys.round_input(rid))) for s in (whole, store))
        assert [r["miner"] for r in a["responses"]] == [r["miner"] for r in b["responses"]]
        assert a["prompt"] == b["prompt"]
    assert json.loads(whole.get(keys.ledger())) == json.loads(store.get(keys.ledger()))


def test_a_replay_of_a_committee_store_is_byte_identical(embedder):
    from validator.replaying.whatif_run import run_whatif

    store = MemoryStore()
    live = daemon(store, embedder)
    live.run(ticks=2)
    assert_replay_equals_records(store, embedder, rounds=6)
    whatif = run_whatif(store, settings(), embedder, whatif_id="noop", source="test")
    assert whatif.new.ledger is not None and whatif.new.ledger.to_json() == live.ledger.to_json()


def test_whatif_splits_stored_full_rounds_into_committees(embedder):
    from validator.records.reader import RoundReader
    from validator.replaying.committee_whatif import committee_whatif, split_round

    store = MemoryStore()
    full = Daemon(
        store=store,
        embedder=embedder,
        settings=settings(size=0),  # everyone in one round, as before committees
        prompts=PROMPTS,
        query=FakeMiners(MINERS, entities={"m00": "op", "m01": "op", "m02": "op"}),
        secret=SECRET,
    )
    full.run(ticks=3)
    stored = RoundReader(store).input("round-000001")
    parts = split_round(stored, 4, SECRET, 1)
    assert [p.daemon.committee for p in parts if p.daemon] == [0, 1, 2]
    assert sorted(r.miner for p in parts for r in p.responses) == sorted(MINERS)
    assert all(sum(r.miner in ("m00", "m01", "m02") for r in p.responses) == 1 for p in parts)
    result = committee_whatif(store, settings(), embedder, committee_size=4, secret=SECRET)
    assert result.rounds == 3 and result.committees == 9
    assert result.original.to_json()["weights"] == full.ledger.to_json()["weights"]
    assert result.split.ticks == 3 and all(m.rounds == 3 for m in result.split.miners.values())
    assert {row[0] for row in result.rows()} == set(MINERS)


def test_the_report_shows_ticks_and_committees(embedder, tmp_path):
    from validator.report import build_report

    store = MemoryStore()
    daemon(store, embedder).run(ticks=2)
    build_report(store, tmp_path)
    index = (tmp_path / "index.html").read_text()
    assert "6 round(s) in 2 tick(s) (the last of 3 committees)" in index and "2 / 2 of 3" in index


def test_a_tick_asks_its_committees_at_once(embedder):
    import threading

    fake = FakeMiners(MINERS)
    barrier = threading.Barrier(3, timeout=10)  # passes only when the three committees are asked together

    class Together:
        specs = fake.specs

        def __call__(self, prompt, on_done=None, members=None):
            barrier.wait()
            return fake(prompt, on_done, members)

    store = MemoryStore()
    reports = daemon(store, embedder, query=Together()).run(ticks=1)
    assert len(reports) == 3 and all(r.recovered is None for r in reports)  # asked, not resumed
    assert len(fake.calls) == 3


def test_without_a_secret_one_is_generated_once_in_the_state_dir_and_never_logged(tmp_path, caplog):
    import stat

    from consensus.errors import ConfigError
    from validator.daemon.committee_secret import PUBLIC, SecretError, committee_secret

    plain = load_settings(None, env={}, dotenv_path=None)
    first = committee_secret(plain, tmp_path)
    kept = tmp_path / "committee-secret"
    assert len(first) == 64 and kept.read_text().strip().encode() == first
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert committee_secret(plain, tmp_path) == first  # a restart goes on with the same sequence
    assert str(kept) in caplog.text and first.decode() not in caplog.text
    given = load_settings(None, env={"VALIDATOR_COMMITTEE_SECRET": "s" * 20}, dotenv_path=None)
    assert committee_secret(given, tmp_path) == b"s" * 20
    assert committee_secret(plain, None) == PUBLIC  # no state directory: the public key, with a warning
    with pytest.raises(ConfigError, match="at least 16"):
        load_settings(None, env={"VALIDATOR_COMMITTEE_SECRET": "short"}, dotenv_path=None)
    kept.write_text("tiny\n")
    with pytest.raises(SecretError, match="shorter"):
        committee_secret(plain, tmp_path)


def test_tick_three_follows_from_the_secret_and_not_from_ticks_one_and_two(embedder):
    from validator.daemon.committee_draw import pick
    from validator.daemon.committee_secret import PUBLIC

    store = MemoryStore()
    live = daemon(store, embedder)
    live.run(ticks=3)
    docs = [json.loads(store.get(keys.round_input(f"round-{n:06d}"))) for n in range(1, 10)]
    actual = [tuple(r["miner"] for r in d["responses"]) for d in docs[6:]]
    prompts = [d["prompt"] for d in docs[6:]]
    names, entities = list(MINERS), {"m00": "op", "m01": "op", "m02": "op"}
    assert list(plan_tick(SECRET, 3, 7, names, entities, 4).committees) == actual
    assert [pick(PROMPTS, (), n, SECRET, 0.0, 0)[0].prompt for n in (7, 8, 9)] == prompts
    # what the records of ticks 1 and 2 hold (ticks, committees, members, prompts, no secret) gives no key:
    # the public key and guesses draw other committees and other prompts
    for guess in (PUBLIC, b"round-000006", json.dumps(docs[5]).encode()[:32]):
        assert list(plan_tick(guess, 3, 7, names, entities, 4).committees) != actual
        assert [pick(PROMPTS, (), n, guess, 0.0, 0)[0].prompt for n in (7, 8, 9)] != prompts


def test_a_crash_mid_tick_loses_nothing_and_counts_each_round_once(embedder):
    class CrashAfter:
        """Dies (like kill -9) right after writing tick 2's second committee's record."""

        def __init__(self, inner):
            self.inner = inner

        def put(self, key, data, content_type="application/octet-stream"):
            self.inner.put(key, data, content_type)
            if key == keys.evaluation("round-000005"):
                raise SystemExit("crash")

        def __getattr__(self, name):
            return getattr(self.inner, name)

    whole = MemoryStore()
    daemon(whole, embedder).run(ticks=3)
    store = MemoryStore()
    with pytest.raises(SystemExit):
        daemon(CrashAfter(store), embedder).run(ticks=3)
    assert json.loads(store.get(keys.ledger()))["last_sequence"] == 3  # the ledger is stored once per tick
    fake = FakeMiners(MINERS, entities={"m00": "op", "m01": "op", "m02": "op"})
    again = daemon(store, embedder, query=fake)
    reports = again.run(ticks=2)  # the rest of tick 2 (from its stored inputs and records), then tick 3
    assert [r.recovered for r in reports[:2]] == ["evaluation", "evaluation"] and len(fake.calls) == 3
    assert json.loads(whole.get(keys.ledger())) == json.loads(store.get(keys.ledger()))


def test_the_whatif_command_splits_a_replayed_file_into_committees(tmp_path, capsys, monkeypatch):
    from validator.cli.main import main
    from validator.replaying.committees_report import CommitteesFile

    monkeypatch.delenv("VALIDATOR_COMMITTEE_SECRET", raising=False)
    rounds = tmp_path / "rounds.jsonl"
    lines = [
        {
            "round_id": f"r{i}",
            "prompt": "Is Python's list type mutable?",
            "responses": [{"miner": m, "text": t, "latency_s": 1.0 + j} for j, (m, t) in enumerate(MINERS.items())],
        }
        for i in range(3)
    ]
    rounds.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store, out, cfg = tmp_path / "replayed", tmp_path / "whatif", tmp_path / "same.toml"
    cfg.write_text("")
    assert main(["replay", str(rounds), "--out", str(store), "--no-progress"]) == 0
    base = ["whatif", str(store), "--config", str(cfg), "--out", str(out), "--no-progress"]
    assert main([*base, "--committee-size", "1", "--committee-seed", "1"]) == 2
    assert main([*base, "--committee-size", "4"]) == 2  # no seed and no committees.secret
    capsys.readouterr()
    assert main([*base, "--committee-size", "4", "--committee-seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert "3 rounds split into 9 committees of about 4" in printed
    # why the units move, and what changed: the pools and the settings said in words
    assert "9 pools instead of 3 (x3.00), each scaled by its own committee's consensus" in printed
    assert "compare the weights (shares of the ledger), not the units" in printed
    assert "committees of about 4, drawn with --committee-seed 1; the LM off" in printed
    assert "recorded settings that differ from the stored rounds'" in printed or "no recorded setting" in printed
    doc = CommitteesFile.read(out / "committees.json")  # read through its typed model
    assert doc.committees == 9 and sorted(m.miner for m in doc.miners) == sorted(MINERS)
    # validator replay STORE splits the same way: the same draw, the same committees.json, the store untouched
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    again = tmp_path / "replay-committees"
    replay = ["replay", str(store), "--config", str(cfg), "--out", str(again), "--no-progress"]
    assert main([*replay, "--committee-size", "4", "--committee-seed", "1"]) == 0
    assert "3 rounds split into 9 committees of about 4" in capsys.readouterr().out
    assert (again / "committees.json").read_bytes() == (out / "committees.json").read_bytes()
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before
    assert main(["replay", str(rounds), "--out", str(again), "--committee-size", "4", "--no-progress"]) == 2
    assert "replay the file with --out first" in capsys.readouterr().err


def test_validator_daemon_asks_real_loopback_miners_in_committees(tmp_path, monkeypatch, capsys):
    """The command end to end over HTTP: 34 loopback miners, committees of 16, a secret generated in the state."""
    from minerpool import MinerPool, SimMiner
    from storage.local import LocalStore
    from validator.cli.main import main

    monkeypatch.delenv("VALIDATOR_COMMITTEE_SECRET", raising=False)
    monkeypatch.setenv("VALIDATOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("VALIDATOR_DAEMON__COMMITTEE_SIZE", "16")
    monkeypatch.setenv("VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE", "false")
    text = "Yes. Python lists are mutable: elements can be changed, appended and removed in place (miner {})."
    miners = [SimMiner(f"m{i:02d}", "canned", text=text.format(i)) for i in range(34)]
    with MinerPool(miners).start() as pool:
        lines = []
        for m in miners:
            entity = 'entity = "op"\n' if m.name in ("m00", "m01") else ""
            lines.append(f'[[miner]]\nhotkey = "{m.name}"\nbase_url = "{pool.base_url(m.name)}"\nmodel = "m"\n{entity}')
        path = tmp_path / "miners.toml"
        path.write_text("\n".join(lines))
        store_dir = tmp_path / "rounds"
        argv = ["daemon", "--rounds", "2", "--store", str(store_dir), "--miners", str(path), "--no-lm"]
        assert main([*argv, "--interval", "0", "--metrics-port", "-1"]) == 0
    store = LocalStore(store_dir)
    docs = [json.loads(store.get(keys.round_input(f"round-{n:06d}"))) for n in (1, 2)]
    members = [[r["miner"] for r in d["responses"]] for d in docs]
    assert sorted(members[0] + members[1]) == [m.name for m in miners] and sorted(map(len, members)) == [17, 17]
    assert [d["daemon"]["committee"] for d in docs] == [0, 1] and all(d["daemon"]["tick"] == 1 for d in docs)
    assert not ({"m00", "m01"} <= set(members[0]) or {"m00", "m01"} <= set(members[1]))  # one entity, apart
    ledger = json.loads(store.get(keys.ledger()))
    assert ledger["ticks"] == 1 and ledger["last_tick_committees"] == 2
    assert list((tmp_path / "cache").rglob("committee-secret"))  # generated once, kept in the local state
    assert "tick 1 committee 1/2" in capsys.readouterr().out


def test_the_ledger_folds_what_a_round_paid_of_its_nominal_pool(embedder):
    from validator.records.ledger_entries import entries_from_record, nominal_pool, paid_share
    from validator.records.reader import RoundReader

    store = MemoryStore()
    d = daemon(store, embedder)
    reports = d.run(ticks=1)
    record = RoundReader(store).record(reports[0].round_id)
    nominal = nominal_pool(record)
    assert nominal is not None and record.emissions.pool <= nominal
    shares = {e.miner: e.share for e in entries_from_record(record)}
    assert all(shares[r.miner] == r.emissions.amount / nominal for r in record.responses)
    assert sum(shares.values()) == pytest.approx(record.emissions.pool / nominal)  # the pool scale, not 1
    # a round that paid half its nominal pool moves the EMAs half as much as one that paid it all
    assert paid_share(250, 500, 1000) == 0.25 and paid_share(250, 500, None) == 0.5 and paid_share(0, 0, 1000) == 0.0
    assert paid_share(250, 500, 400) == 0.5  # a nominal pool below the round's (a changed config): its own pool
