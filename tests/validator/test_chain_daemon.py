"""The daemon in chain mode against the in-memory chain, with the pool's miners served as axons on loopback.

Real parts: the SDK's own metagraph decoding and ``SetWeights`` intent (plain and commit-reveal) over
``chain.testing.InMemorySubstrate``, sr25519 dev keys, Epistula signing by the daemon's client and verification
by the pool's server. Fake parts: the embedder (consensus.fake), no LM, a clock the test moves with the chain's
blocks. The chain side ticks after each round on the daemon's thread (``background=False``) so every step is
deterministic; ``test_chain_mode_runs_in_its_own_thread`` runs the thread.
"""

from __future__ import annotations

import json
import time

import pytest

bt = pytest.importorskip("bittensor")

from chain.epistula import KnownSigners  # noqa: E402
from chain.errors import PermanentChainError  # noqa: E402
from chain.sdk_wallet import keypair_from_uri  # noqa: E402
from chain.testing import InMemorySubstrate, chain_for  # noqa: E402
from chain.weights import weight_vector  # noqa: E402
from minerpool import MinerPool, SimMiner  # noqa: E402
from storage import keys as store_keys  # noqa: E402
from storage.memory import MemoryStore  # noqa: E402
from tests.minerpool.test_pool_signed import post  # noqa: E402
from validator.daemon import chain as chain_mode  # noqa: E402
from validator.daemon.chain import edge as chain_edge  # noqa: E402
from validator.daemon.chain.attempts import load_attempts  # noqa: E402
from validator.daemon.daemon import Daemon  # noqa: E402
from validator.miners.client import _request_bodies  # noqa: E402
from validator.miners.limits import QueryLimits  # noqa: E402
from validator.review import load_store  # noqa: E402
from validator.round.prompt_source import PromptItem  # noqa: E402
from validator.settings import load_settings  # noqa: E402

PROMPTS = (PromptItem("Is Python's list type mutable?"),)
HONEST = {
    "bob": "Yes. Python lists are mutable: elements can be changed, appended and removed in place.",
    "charlie": "Yes, Python lists are mutable, so you can modify their elements after creating them.",
    "dave": "Yes - a list in Python is a mutable sequence; items may be reassigned, added or deleted.",
    "eve": "Yes. Lists are mutable in Python (unlike tuples), so they can be modified in place.",
}
SYBILS = {  # three hotkeys of one coldkey ("owner"): one voice, one payout
    "sybil1": "Yes, Python lists can be changed in place: they are mutable sequences of elements.",
    "sybil2": "Yes. A Python list is mutable; you may append, remove or reassign its items in place.",
    "sybil3": "Yes: lists in Python are mutable, unlike tuples, and their elements can be modified.",
}
TEMPO = 20  # blocks; weights_rate_limit is the same, so one submission per 20 blocks
BLOCK_S = 12.0


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def keys():
    names = ["Alice", "Mallory", "Owner", "Impostor", "Ferdie", *[n.capitalize() for n in [*HONEST, *SYBILS]]]
    return {name.lower(): keypair_from_uri(f"//{name}").ss58_address for name in names}


@pytest.fixture
def pool(keys):
    miners = [SimMiner(name, "canned", text=text, logprob=-0.2) for name, text in {**HONEST, **SYBILS}.items()]
    with MinerPool(
        miners,
        hotkeys={m.name: keys[m.name] for m in miners},
        signers=KnownSigners({keys["alice"]: 1000.0}),
        axons=True,
    ) as p:
        yield p


def subnet(keys, pool, **settings) -> InMemorySubstrate:
    """netuid 1: //Alice validates (uid 0); four miners of their own; three hotkeys of one coldkey; //Impostor
    registered at Dave's axon (Dave's pool miner refuses what is signed for another hotkey); //Ferdie serves
    nothing."""
    sub = InMemorySubstrate(block=1000)
    sub.add_subnet(
        1,
        owner_hotkey=keys["alice"],
        owner_coldkey=keys["alice"],
        tempo=TEMPO,
        weights_rate_limit=TEMPO,
        weights_version=2,
        **settings,
    )
    sub.register(1, keys["alice"], keys["alice"], stake=1000.0, validator_permit=True)
    for name in HONEST:
        sub.register(1, keys[name], keys[name], axon=pool.axon(name))
    for name in SYBILS:
        sub.register(1, keys[name], keys["owner"], axon=pool.axon(name))
    sub.register(1, keys["impostor"], keys["impostor"], axon=pool.axon("dave"))
    sub.register(1, keys["ferdie"], keys["ferdie"])
    return sub


def settings(**chain):
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE": "false",
        "VALIDATOR_DAEMON__REQUEST_TIMEOUT_S": "10",
        "VALIDATOR_CHAIN__NETUID": "1",
        "VALIDATOR_CHAIN__NETWORK": "local",
        "VALIDATOR_CHAIN__HOTKEY_URI": "//Alice",
    }
    env.update({f"VALIDATOR_CHAIN__{k.upper()}": str(v) for k, v in chain.items()})
    return load_settings(None, env=env, dotenv_path=None)


@pytest.fixture
def on_chain(monkeypatch):
    """Point the chain edge of the settings at an in-memory chain: ``on_chain(sub)``."""

    def use(sub: InMemorySubstrate) -> None:
        monkeypatch.setattr(
            chain_edge, "open_edge", lambda c: chain_for(sub, c.netuid, c.hotkey_uri or "//Alice", mechid=c.mechid)
        )

    return use


def one_round(daemon, session):
    return daemon.run(rounds=1, on_round=lambda r: session.after_round(daemon))[0]


def advance(sub, clock, blocks):
    sub.advance(blocks)
    clock.t += blocks * BLOCK_S


def test_a_subnet_validated_end_to_end(keys, pool, on_chain, embedder):
    sub = subnet(keys, pool, commit_reveal=True)
    on_chain(sub)
    store, clock, s = MemoryStore(), Clock(), settings(set_weights="true")
    with chain_mode.session(s) as session:
        # miners from the metagraph: every served axon but the validator's, hotkey = miner id, coldkey = entity
        by_hotkey = {m.hotkey: m for m in session.miners.specs}
        assert set(by_hotkey) == {keys[n] for n in [*HONEST, *SYBILS, "impostor"]}  # not Alice, not Ferdie
        assert by_hotkey[keys["sybil1"]].entity == keys["owner"]
        assert by_hotkey[keys["bob"]].base_url == f"http://{pool.axon('bob')}/v1"
        daemon = Daemon(store=store, embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners, clock=clock)
        session.start(daemon, store, background=False)

        # round 1: every request signed by //Alice and verified; the impostor's is refused and recorded so
        report = one_round(daemon, session)
        assert report.usable == 7 and report.failures == {"refused": 1}
        record = json.loads(store.get(store_keys.evaluation(report.round_id)))
        responses = {r["miner"]: r for r in record["responses"]}
        assert responses[keys["impostor"]]["error"] == "refused"
        stored_input = json.loads(store.get(store_keys.round_input(report.round_id)))
        assert stored_input["daemon"]["failures"][keys["impostor"]] == "HTTP 401: signed for another receiver"
        seen = list(pool.requests)
        assert len(seen) == 8 and all(r["epistula"]["Epistula-Signed-By"] == keys["alice"] for r in seen)
        assert [r["refused"] for r in seen].count(None) == 7
        # one coldkey, three hotkeys: one voice, one payout (the group earns what one of its members would)
        paid = {m: r["emissions"]["amount"] for m, r in responses.items()}
        sybils = [paid[keys[n]] for n in SYBILS]
        assert max(sybils) - min(sybils) <= 1 and sum(sybils) <= 1.05 * max(paid[keys[n]] for n in HONEST)

        # a request of the daemon's replayed byte for byte is refused
        bob = by_hotkey[keys["bob"]]
        headers = next(r["epistula"] for r in reversed(seen) if r["miner"] == "bob")
        body = _request_bodies(PROMPTS[0].prompt, [bob], QueryLimits.from_settings(s.daemon), None)[bob.model]
        assert post(bob.chat_url, body, headers) == (401, "replayed request")

        # weights were due: committed (commit-reveal on), through the SDK's own intent
        first = load_attempts(store, 1)
        assert [a.outcome for a in first] == ["commit"] and sub.subnets[1].commits[-1]["uid"] == 0
        assert sub.extrinsics[-1]["function"] == "commit_timelocked_mechanism_weights"
        assert first[0].submission.reveal_round > 0 and first[0].after_round == report.round_id

        # commit-reveal off: the next tempo's weights are set in clear, with the u16 vector the SDK computes
        sub.subnets[1].commit_reveal = False
        advance(sub, clock, TEMPO + 1)
        one_round(daemon, session)
        done = load_attempts(store, 1)[-1]
        sent = sub.extrinsics[-1]
        assert done.outcome == "set" and sent["function"] == "set_mechanism_weights"
        expected = weight_vector(daemon.ledger.weights(), session.mode.snapshot, keys["alice"])
        assert sent["params"]["weights"] == list(done.submission.weights_u16) == list(expected.chain_u16)
        assert (
            sent["params"]["dests"] == list(expected.chain_uids)
            and sent["params"]["version_key"] == s.chain.version_key
        )  # ours, not the chain's 2
        assert sub.subnets[1].weights[0]  # stored on chain under our uid

        # Bob deregisters: Mallory takes his uid; Bob leaves the ledger and the next submission, Mallory starts
        # from nothing
        bob_uid = sub.subnets[1].uid_of(keys["bob"])
        sub.register(1, keys["mallory"], keys["mallory"], uid=bob_uid)
        advance(sub, clock, TEMPO + 1)
        one_round(daemon, session)
        after = load_attempts(store, 1)[-1]
        assert after.outcome == "set" and after.deregistered == (keys["bob"],)
        assert bob_uid not in sub.extrinsics[-1]["params"]["dests"]
        assert keys["bob"] not in daemon.ledger.miners and keys["mallory"] not in daemon.ledger.miners
        assert keys["bob"] not in json.loads(store.get(store_keys.ledger()))["miners"]
        asked = len([r for r in pool.requests if r["miner"] == "bob"])
        one_round(daemon, session)
        assert len([r for r in pool.requests if r["miner"] == "bob"]) == asked  # not asked any more

        # the chain goes silent: rounds go on and are stored; the weights wait with backoff, then land
        sub.outage = True
        advance(sub, clock, TEMPO + 1)
        for _ in range(2):
            one_round(daemon, session)
            clock.t += 13
        assert session.mode.failures == 2 and load_attempts(store, 1)[-1] == after
        sub.outage = False
        clock.t += 60
        last = one_round(daemon, session)
        assert last.sequence == 7 and daemon.ledger.last_sequence == 7
        assert all(store.exists(store_keys.evaluation(daemon.round_id(n))) for n in range(1, 8))
        assert session.mode.failures == 0 and load_attempts(store, 1)[-1].outcome == "set"
        assert [a.outcome for a in load_attempts(store, 1)] == ["commit", "set", "set", "set"]

        # the next round's input (and record) says Bob was forgotten: the ledger rebuilt from the records is the
        # daemon's, without him
        inputs = [json.loads(store.get(store_keys.round_input(daemon.round_id(n))))["daemon"] for n in range(1, 8)]
        assert [d.get("forgotten") for d in inputs] == [None, None, None, [keys["bob"]], None, None, None]
        rebuilt = load_store(store).ledger_trajectory()[-1]
        assert keys["bob"] not in rebuilt.miners and rebuilt.to_json() == daemon.ledger.to_json()


def test_without_set_weights_the_weights_are_only_planned(keys, pool, on_chain, embedder):
    sub = subnet(keys, pool)
    on_chain(sub)
    store, clock, s = MemoryStore(), Clock(), settings()
    with chain_mode.session(s) as session:
        daemon = Daemon(store=store, embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners, clock=clock)
        session.start(daemon, store, background=False)
        one_round(daemon, session)
        one_round(daemon, session)  # not due again within the interval
        advance(sub, clock, TEMPO + 1)
        one_round(daemon, session)
    attempts = load_attempts(store, 1)
    assert [(a.mode, a.outcome) for a in attempts] == [("plan", "planned"), ("plan", "planned")]
    assert attempts[0].plan.method == "set" and attempts[0].plan.uids == tuple(
        u for u, v in zip(attempts[0].uids, attempts[0].u16) if v
    )
    assert sub.extrinsics == []  # nothing signed or sent


@pytest.mark.parametrize(
    "change, kind",
    [
        (dict(hotkey_uri="//Mallory"), "not registered"),
        (dict(netuid=9), "unknown subnet"),
    ],
)
def test_the_start_checks_stop_at_once(keys, pool, on_chain, change, kind):
    on_chain(subnet(keys, pool))
    with pytest.raises(PermanentChainError) as info:
        with chain_mode.session(settings(**change)):
            pass
    assert info.value.kind == kind and "\n" not in str(info.value)


@pytest.mark.parametrize("set_weights", ["false", "true"])
def test_no_permit_at_start_is_a_state_not_an_exit(keys, pool, on_chain, set_weights):
    on_chain(subnet(keys, pool))
    with chain_mode.session(settings(hotkey_uri="//Ferdie", set_weights=set_weights)) as session:
        assert session.edge.hotkey == keys["ferdie"] and len(session.miners.specs) == 8
        assert ("no validator permit yet" in session.describe()) == (set_weights == "true")


def test_chain_mode_runs_in_its_own_thread(keys, pool, on_chain, embedder):
    """The CLI's way: ChainMode ticks in a background thread while the rounds run."""
    sub = subnet(keys, pool)
    on_chain(sub)
    store, s = MemoryStore(), settings(set_weights="true", block_time_s="0.05")
    with chain_mode.session(s) as session:
        daemon = Daemon(store=store, embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners)
        session.start(daemon, store)
        daemon.run(rounds=1, on_round=lambda r: session.after_round(daemon))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(a.landed and a.kind == "ledger" for a in load_attempts(store, 1)):
            sub.advance(TEMPO + 1)
            time.sleep(0.1)
    assert any(a.landed and a.kind == "ledger" for a in load_attempts(store, 1))
    assert session.mode._thread is None  # stopped with the session
