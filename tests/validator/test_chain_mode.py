"""``ChainMode`` between the rounds, without miners: when the metagraph is read, when weights go, what is stored
when the chain is silent, refuses, or no longer knows the validator; and the stored attempt's round trip."""

from __future__ import annotations

import pytest

bt = pytest.importorskip("bittensor")

from chain.errors import TransientChainError  # noqa: E402
from chain.schedule import Backoff  # noqa: E402
from chain.sdk_wallet import keypair_from_uri  # noqa: E402
from chain.testing import InMemorySubstrate, chain_for  # noqa: E402
from emissions.ledger import Ledger, MinerEntry  # noqa: E402
from storage.memory import MemoryStore  # noqa: E402
from validator.daemon.chain import ChainMiners, ChainMode  # noqa: E402
from validator.daemon.chain.attempts import WeightsAttempt, load_attempts  # noqa: E402
from validator.settings import load_settings  # noqa: E402

URIS = ("Alice", "Bob", "Charlie", "Dave")


@pytest.fixture(scope="module")
def keys():
    return {u.lower(): keypair_from_uri(f"//{u}").ss58_address for u in URIS}


OPENED = []  # every edge a test opened, closed after it (each runs an event loop in a thread)


@pytest.fixture(autouse=True)
def close_edges():
    yield
    while OPENED:
        OPENED.pop().close()


def opened(sub):
    OPENED.append(chain_for(sub, 3, "//Alice"))
    return OPENED[-1]


@pytest.fixture
def sub(keys):
    chain = InMemorySubstrate(block=500)
    chain.add_subnet(3, owner_hotkey=keys["alice"], owner_coldkey=keys["alice"], tempo=10, weights_rate_limit=10)
    chain.register(3, keys["alice"], keys["alice"], stake=100.0, validator_permit=True)
    for name, port in (("bob", 9001), ("charlie", 9002), ("dave", 9003)):
        chain.register(3, keys[name], keys[name], axon=f"127.0.0.1:{port}")
    return chain


def ledger_of(shares: dict[str, float]) -> Ledger:
    entries = [
        MinerEntry(miner=m, share=s, emission=round(s * 100), in_consensus=True, failed=False)
        for m, s in shares.items()
    ]
    return Ledger(alpha=1.0).apply(1, "round-000001", entries, no_quorum=False)


class Clock:
    t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def mode(sub, ledger, *, set_weights=True, edge=None, **kw):
    edge = edge or opened(sub)
    s = load_settings(None, env={"VALIDATOR_CHAIN__NETUID": "3", "VALIDATOR_CHAIN__NETWORK": "local"}, dotenv_path=None)
    clock, fatal = Clock(), []
    m = ChainMode(
        edge,
        ChainMiners(s, None, genesis_hash=edge.genesis_hash()),
        edge.snapshot(),
        store=MemoryStore(),
        ledger=lambda: ledger,
        set_weights=set_weights,
        block_time_s=12.0,
        clock=clock,
        on_fatal=lambda: fatal.append(1),
        **kw,
    )
    return m, clock, fatal


def test_weights_go_once_per_interval_and_the_miners_follow_the_metagraph(sub, keys):
    m, clock, _ = mode(sub, ledger_of({keys["bob"]: 0.7, keys["charlie"]: 0.3}))
    assert [s.hotkey for s in m.query.specs] == [keys["bob"], keys["charlie"], keys["dave"]]
    m.tick()
    m.tick()  # not due again: nothing read, nothing sent
    assert [e["function"] for e in sub.extrinsics] == ["set_mechanism_weights"]
    sub.advance(11)
    clock.t += 11 * 12
    sub.register(3, "5NewMiner", "5NewCold", axon="127.0.0.1:9009")
    m.tick()
    assert len(sub.extrinsics) == 2 and "5NewMiner" in [s.hotkey for s in m.query.specs]
    assert [a.outcome for a in load_attempts(m.store, 3)] == ["set", "set"]


def test_no_answer_at_submit_is_stored_and_retried_with_backoff(sub, keys):
    class Silent:
        """The edge, except that its next submission does not get an answer."""

        def __init__(self, inner):
            self.inner, self.silent = inner, True

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def submit(self, vector):
            if self.silent:
                self.silent = False
                raise TransientChainError("submitting weights: the chain did not answer within 90 s")
            return self.inner.submit(vector)

    edge = Silent(opened(sub))
    m, clock, fatal = mode(sub, ledger_of({keys["bob"]: 1.0}), edge=edge, backoff=Backoff(initial_s=12.0))
    m.tick()
    first = load_attempts(m.store, 3)
    assert [a.outcome for a in first] == ["no answer"] and first[0].submission.error_kind == "transient"
    assert m.failures == 1 and not fatal
    clock.t += 5
    m.tick()  # within the backoff: nothing tried
    assert len(load_attempts(m.store, 3)) == 1
    clock.t += 10
    m.tick()
    assert [a.outcome for a in load_attempts(m.store, 3)] == ["no answer", "set"] and m.failures == 0


def test_a_validator_deregistered_while_running_waits_and_resumes_when_registered_again(sub, keys):
    lines = []
    m, clock, fatal = mode(sub, ledger_of({keys["bob"]: 1.0}), on_line=lines.append)
    sub.register(3, "5Replacement", "5Cold", uid=0)  # our uid is taken
    sub.advance(11)
    clock.t += 11 * 12
    m.tick()
    assert m.fatal is None and not fatal and m.standing == "not registered" and sub.extrinsics == []
    assert sum("is not registered on netuid 3" in line for line in lines) == 1
    sub.advance(100)
    clock.t += 100 * 12
    m.tick()  # still not registered: checked again, said once
    assert sum("is not registered" in line for line in lines) == 1 and sub.extrinsics == []
    sub.register(3, keys["alice"], keys["alice"], stake=100.0, validator_permit=True)  # registered again (uid 4)
    sub.advance(100)
    clock.t += 100 * 12
    m.tick()
    assert m.standing == "ok" and "weights resume" in lines[-2]
    assert sub.extrinsics[-1]["function"] == "set_mechanism_weights" and sub.extrinsics[-1]["success"]


def test_a_subnet_smaller_than_min_allowed_weights_gets_the_self_weight_said_once(sub, keys):
    sub.subnets[3].min_allowed_weights = 8  # 4 uids: subtensor asks min(4, 8); the SDK asks 8 whatever the size
    lines = []
    m, clock, _ = mode(sub, ledger_of({keys["bob"]: 1.0}), on_line=lines.append)
    m.tick()
    (attempt,) = load_attempts(m.store, 3)
    assert attempt.outcome == "set" and attempt.kind == "keep-alive" and "at least 4" in attempt.reason
    assert sub.extrinsics[-1]["params"]["dests"] == [0] and sub.extrinsics[-1]["success"]
    sub.advance(11)
    clock.t += 11 * 12
    m.tick()
    assert len(sub.extrinsics) == 2
    assert sum("keep-alive self-weight" in line for line in lines) == 1  # the reason is said once


def test_planning_without_a_permit_is_stored_not_fatal(sub, keys):
    sub.subnets[3].neurons[0].validator_permit = False
    m, _, fatal = mode(sub, ledger_of({keys["bob"]: 1.0}), set_weights=False)
    m.tick()
    (attempt,) = load_attempts(m.store, 3)
    assert attempt.mode == "plan" and not fatal and sub.extrinsics == []
    # the SDK's dry run does not preflight a Yuma subnet's permit (intents/weights.py): the plan stands, and
    # `validator weights show` says the validator has none
    assert attempt.outcome == "planned"
    assert WeightsAttempt.from_json(attempt.to_json()) == attempt


def test_an_empty_ledger_keeps_the_validator_alive_with_a_self_weight(sub, keys):
    m, _, _ = mode(sub, Ledger())
    m.tick()
    (attempt,) = load_attempts(m.store, 3)
    assert attempt.kind == "keep-alive" and attempt.uids == (0,) and attempt.outcome == "set"
    assert sub.extrinsics[-1]["params"]["dests"] == [0]


def test_a_restarted_daemon_does_not_submit_twice_in_one_interval(sub, keys):
    ledger = ledger_of({keys["bob"]: 1.0})
    sub.subnets[3].commit_reveal = True  # a commit does not move last_update: only our record says it landed
    m, _, _ = mode(sub, ledger)
    m.tick()
    assert [a.outcome for a in load_attempts(m.store, 3)] == ["commit"]
    edge = opened(sub)
    again = ChainMode(
        edge,
        m.query,
        edge.snapshot(),
        store=m.store,
        ledger=lambda: ledger,
        set_weights=True,
        block_time_s=12.0,
        clock=m.clock,
    )
    again.tick()
    assert len(sub.extrinsics) == 1 and again.last_weights == sub.extrinsics[0]["block"]


def test_too_little_stake_waits_until_the_stake_moves(sub, keys):
    sub.subnets[3].owner_hotkey = "5SomeoneElse"  # subtensor lets the owner set weights whatever its stake
    sub.subnets[3].stake_threshold = 500.0  # StakeThreshold: Alice has 100
    lines = []
    m, clock, fatal = mode(sub, ledger_of({keys["bob"]: 1.0}), on_line=lines.append)
    m.tick()
    assert m.standing == "not enough stake" and not fatal and m.fatal is None
    assert [a.submission.error_kind for a in load_attempts(m.store, 3)] == ["permanent"]
    sub.advance(100)
    clock.t += 100 * 12
    m.tick()  # the same stake: not tried again, not said again
    assert len(load_attempts(m.store, 3)) == 1 and sum("not enough stake" in x.lower() for x in lines) <= 1
    sub.subnets[3].neurons[0].stake = 1000.0
    sub.advance(100)
    clock.t += 100 * 12
    m.tick()
    assert m.standing == "ok" and load_attempts(m.store, 3)[-1].outcome == "set"


def test_the_subnet_owner_sets_weights_without_a_permit(sub, keys):
    sub.subnets[3].neurons[0].validator_permit = False  # Alice owns netuid 3 (check_validator_permit lets her)
    m, _, _ = mode(sub, ledger_of({keys["bob"]: 1.0}))
    m.tick()
    assert m.standing == "ok" and load_attempts(m.store, 3)[-1].outcome == "set" and sub.extrinsics[-1]["success"]
