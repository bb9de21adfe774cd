"""The edge over the SDK's own code, offline: metagraph decoding and SetWeights (plain and commit-reveal) against
chain.testing.InMemorySubstrate, real sr25519 dev keys, and every way the chain edge can fail."""

from __future__ import annotations

import asyncio
import random

import pytest

bt = pytest.importorskip("bittensor")

from chain.errors import PermanentChainError, TransientChainError, WeightsError  # noqa: E402
from chain.sdk import BittensorChain, open_chain  # noqa: E402
from chain.sdk_wallet import keypair_from_uri  # noqa: E402
from chain.testing import InMemorySubstrate, chain_for  # noqa: E402
from chain.types import Submission  # noqa: E402
from chain.weights import problems, weight_vector  # noqa: E402

NAMES = ("Alice", "Bob", "Charlie", "Dave", "Eve", "Ferdie", "Mallory")


@pytest.fixture(scope="module")
def keys():
    return {name: keypair_from_uri(f"//{name}").ss58_address for name in NAMES}


@pytest.fixture
def subnet(keys):
    """netuid 1: //Alice validates (uid 0); Bob and Charlie (one coldkey, Eve's) and Dave mine; Ferdie over IPv6."""
    sub = InMemorySubstrate(block=1000)
    # the owner (Eve) holds no uid: subtensor lets an owner set weights without a permit or stake
    sub.add_subnet(1, owner_hotkey=keys["Eve"], owner_coldkey=keys["Eve"], weights_version=3)
    sub.register(1, keys["Alice"], keys["Alice"], stake=1000.0, validator_permit=True)
    sub.register(1, keys["Bob"], keys["Eve"], axon="127.0.0.1:9001", stake=2.5)
    sub.register(1, keys["Charlie"], keys["Eve"], axon="127.0.0.1:9002")
    sub.register(1, keys["Dave"], keys["Dave"])
    sub.register(1, keys["Ferdie"], keys["Ferdie"], axon="[::1]:9004")
    return sub


@pytest.fixture
def chain(subnet):
    with chain_for(subnet, 1, "//Alice") as edge:
        yield edge


def test_the_sdk_decodes_the_metagraph(chain, subnet, keys):
    snap = chain.snapshot()
    assert (snap.netuid, snap.block, snap.tempo, snap.owner_hotkey) == (1, 1000, 360, keys["Eve"])
    assert [(n.uid, n.hotkey, n.coldkey, n.axon) for n in snap.neurons] == [
        (0, keys["Alice"], keys["Alice"], None),
        (1, keys["Bob"], keys["Eve"], "127.0.0.1:9001"),
        (2, keys["Charlie"], keys["Eve"], "127.0.0.1:9002"),
        (3, keys["Dave"], keys["Dave"], None),
        (4, keys["Ferdie"], keys["Ferdie"], "[::1]:9004"),
    ]
    assert [n.validator_permit for n in snap.neurons] == [True, False, False, False, False]
    assert snap.neurons[0].stake == 1000.0 and snap.neurons[1].stake == 2.5
    assert snap.neurons[1].url == "http://127.0.0.1:9001" and snap.neurons[3].url is None
    hp = snap.hyperparameters
    assert (
        hp.weights_rate_limit,
        hp.min_allowed_weights,
        hp.max_weight_limit,
        hp.weights_version,
        hp.commit_reveal,
        hp.activity_cutoff,
    ) == (100, 1, 65535, 3, False, 5000)
    assert [n.uid for n in snap.served(exclude=chain.hotkey)] == [1, 2, 4]


def test_a_plain_set_goes_through_the_sdk_with_our_u16(chain, subnet, keys):
    snap = chain.snapshot()
    v = weight_vector({keys["Bob"]: 0.6, keys["Charlie"]: 0.3, keys["Ferdie"]: 0.1}, snap, chain.hotkey)
    plan = chain.plan(v)
    assert plan.method == "set" and plan.ok and plan.signer == keys["Alice"] and plan.version_key == 3
    assert (plan.uids, plan.weights_u16) == (v.chain_uids, v.chain_u16) == ((1, 2, 4), (65535, 32768, 10923))
    assert subnet.extrinsics == []  # a dry run sends nothing
    done = chain.submit(v)
    assert done == Submission(
        netuid=1,
        block=1001,
        signer=keys["Alice"],
        method="set",
        uids=(1, 2, 4),
        weights_u16=(65535, 32768, 10923),
        version_key=3,
        ok=True,
        extrinsic="1001-0001",
        block_hash="0x" + (1001).to_bytes(32, "big").hex(),
    )
    sent = subnet.extrinsics[-1]
    assert (sent["function"], sent["params"]) == (
        "set_mechanism_weights",
        {"netuid": 1, "mecid": 0, "dests": [1, 2, 4], "weights": [65535, 32768, 10923], "version_key": 3},
    )
    assert subnet.subnets[1].weights[0] == [(1, 65535), (2, 32768), (4, 10923)]
    assert chain.snapshot().neurons[0].last_update == 1001
    assert Submission.from_json(done.to_json()) == done


@pytest.mark.parametrize("seed", range(12))
def test_the_sdk_sends_exactly_our_u16_vector(keys, seed):
    """Random ledgers, caps and minimums: the call the SDK builds carries the vector chain.weights computed."""
    rng = random.Random(seed)
    sub = InMemorySubstrate()
    n = rng.randint(3, 20)
    sub.add_subnet(
        2,
        owner_hotkey=keys["Alice"],
        owner_coldkey=keys["Alice"],
        min_allowed_weights=rng.randint(1, n - 1),
        max_weight_limit=rng.choice([65535, rng.randint(65535 // (n - 1) + 1, 65535)]),
    )
    sub.register(2, keys["Alice"], keys["Alice"], stake=10.0, validator_permit=True)
    miners = [f"5Miner{i:02d}" for i in range(n - 1)]  # addresses the chain never decodes
    for hotkey in miners:
        sub.register(2, hotkey, "5Cold", axon=f"127.0.0.1:{rng.randint(1024, 65535)}")
    ledger = {h: rng.random() for h in rng.sample(miners, rng.randint(1, len(miners)))}
    with chain_for(sub, 2, "//Alice") as edge:
        snap = edge.snapshot()
        v = weight_vector(ledger, snap, edge.hotkey)
        assert problems(v, snap) == []
        plan = edge.plan(v)
        assert (plan.uids, plan.weights_u16) == (v.chain_uids, v.chain_u16)
        assert edge.submit(v).ok and sub.extrinsics[-1]["params"]["weights"] == list(v.chain_u16)


def test_commit_reveal_on_then_off(chain, subnet, keys):
    subnet.subnets[1].commit_reveal = True
    ledger = {keys["Bob"]: 2.0, keys["Charlie"]: 1.0}
    v = weight_vector(ledger, chain.snapshot(), chain.hotkey)
    assert v.commit_reveal
    plan = chain.plan(v)
    assert plan.method == "commit" and plan.reveal_round > 0 and plan.uids == (1, 2)
    done = chain.submit(v)
    # the drand round follows the wall clock: the submission's is the plan's, or a later one
    assert done.ok and done.method == "commit" and done.reveal_round >= plan.reveal_round
    commit = subnet.subnets[1].commits[-1]
    assert commit["uid"] == 0 and len(commit["commit"]) > 100 and commit["commit_reveal_version"] == 4
    assert [e["function"] for e in subnet.extrinsics] == ["commit_timelocked_mechanism_weights"]

    subnet.subnets[1].commit_reveal = False
    subnet.advance(400)
    v = weight_vector(ledger, chain.snapshot(), chain.hotkey)
    done = chain.submit(v)
    assert done.ok and done.method == "set" and done.reveal_round is None
    assert subnet.extrinsics[-1]["function"] == "set_mechanism_weights"


def test_too_fast_is_a_rejected_record_not_an_error(chain, subnet, keys):
    v = weight_vector({keys["Bob"]: 1.0}, chain.snapshot(), chain.hotkey)
    assert chain.submit(v).ok
    again = chain.submit(weight_vector({keys["Bob"]: 1.0}, chain.snapshot(), chain.hotkey))
    assert not again.ok and again.error_kind == "rejected" and "rate limit" in again.error
    assert len(subnet.extrinsics) == 1  # the SDK's preflight stopped it before signing
    plan = chain.plan(weight_vector({keys["Bob"]: 1.0}, chain.snapshot(), chain.hotkey))
    assert not plan.ok and "rate limit" in plan.violations[0] and plan.uids == (1,)


def test_a_chain_refusal_is_stored_with_the_chains_reason(chain, subnet, keys):
    v = weight_vector({keys["Bob"]: 1.0}, chain.snapshot(), chain.hotkey)
    subnet.subnets[1].weights_version = 9  # the owner raised the version key after our snapshot
    refused = chain.submit(v)
    assert not refused.ok and refused.error_kind == "rejected" and refused.extrinsic == "1001-0001"
    assert subnet.extrinsics[-1]["error"] == "IncorrectWeightVersionKey" and "version" in refused.error.lower()


def test_a_deregistered_hotkey_leaves_the_next_submission(chain, subnet, keys):
    ledger = {keys["Bob"]: 0.5, keys["Charlie"]: 0.5}
    assert weight_vector(ledger, chain.snapshot(), chain.hotkey).uids == (1, 2)
    subnet.register(1, keys["Mallory"], keys["Mallory"], axon="127.0.0.1:9009", uid=1)  # Bob's uid, freed
    snap = chain.snapshot()
    v = weight_vector(ledger, snap, chain.hotkey)
    assert v.uids == (2,) and v.deregistered == (keys["Bob"],) and keys["Mallory"] not in v.hotkeys
    assert chain.submit(v).ok and subnet.extrinsics[-1]["params"]["dests"] == [2]


def test_nothing_to_follow_keeps_the_validator_alive_with_a_self_weight(chain, subnet):
    v = weight_vector({}, chain.snapshot(), chain.hotkey)
    assert v.kind == "keep-alive"
    assert chain.submit(v).ok and subnet.extrinsics[-1]["params"]["dests"] == [0]
    with pytest.raises(WeightsError):
        chain.plan(weight_vector({}, chain.snapshot(), chain.hotkey, keep_alive=False))


def test_padded_vectors_pass_the_chains_own_checks(chain, subnet, keys):
    subnet.subnets[1].min_allowed_weights = 3
    subnet.subnets[1].max_weight_limit = 30000  # under half per uid
    v = weight_vector({keys["Bob"]: 3.0, keys["Charlie"]: 1.0}, chain.snapshot(), chain.hotkey)
    assert v.kind == "padded" and v.fillers == (4,)
    assert chain.submit(v).ok


def test_an_unregistered_hotkey_stops_at_once(subnet, keys):
    with chain_for(subnet, 1, "//Mallory") as edge:
        v = weight_vector({keys["Bob"]: 1.0}, edge.snapshot(), edge.hotkey)
        with pytest.raises(PermanentChainError) as submitted:
            edge.submit(v)
        with pytest.raises(PermanentChainError) as planned:  # the SDK's own preflight
            edge.plan(v)
    assert submitted.value.kind == planned.value.kind == "not registered"
    assert subnet.extrinsics == []


def test_no_validator_permit_stops_at_once(subnet, keys):
    with chain_for(subnet, 1, "//Bob") as edge:
        with pytest.raises(PermanentChainError, match="no validator permit") as caught:
            edge.submit(weight_vector({keys["Charlie"]: 1.0}, edge.snapshot(), edge.hotkey))
    assert caught.value.kind == "no validator permit" and subnet.extrinsics == []


def test_a_permit_lost_after_the_snapshot_is_refused_by_the_chain_and_stored(chain, subnet, keys):
    v = weight_vector({keys["Bob"]: 1.0}, chain.snapshot(), chain.hotkey)
    subnet.subnets[1].neurons[0].validator_permit = False
    with pytest.raises(PermanentChainError) as caught:
        chain.submit(v)
    assert caught.value.kind == "no validator permit"
    record = caught.value.submission
    assert record.error_kind == "permanent" and record.extrinsic == "1001-0001" and not record.ok


def test_an_unknown_subnet_stops_at_once(subnet):
    with chain_for(subnet, 7, "//Alice") as edge:
        with pytest.raises(PermanentChainError) as caught:
            edge.snapshot()
    assert caught.value.kind == "unknown subnet"


def test_an_outage_is_transient_and_the_edge_reconnects(chain, subnet, keys):
    v = weight_vector({keys["Bob"]: 1.0}, chain.snapshot(), chain.hotkey)
    subnet.outage = True
    with pytest.raises(TransientChainError):
        chain.snapshot()
    with pytest.raises(TransientChainError):
        chain.submit(v)
    assert subnet.extrinsics == []
    subnet.outage = False
    assert chain.snapshot().block == 1000 and chain.submit(v).ok


class SlowSubstrate(InMemorySubstrate):
    async def block_number(self) -> int:
        await asyncio.sleep(5)
        return self.block


def test_a_chain_that_does_not_answer_in_time_is_transient(keys):
    sub = SlowSubstrate()
    sub.add_subnet(1, owner_hotkey=keys["Alice"], owner_coldkey=keys["Alice"])
    sub.register(1, keys["Alice"], keys["Alice"], validator_permit=True)
    with chain_for(sub, 1, "//Alice", timeout_s=0.2) as edge:
        with pytest.raises(TransientChainError, match="within 0.2 s"):
            edge.snapshot()


def test_a_wallet_on_disk(tmp_path, subnet):
    wallet = bt.Wallet("cold", "hot", path=str(tmp_path))
    wallet.create_new_hotkey(suppress=True)
    hotkey = wallet.hotkeypub.ss58_address
    subnet.register(1, hotkey, hotkey, stake=5.0, validator_permit=True)
    with open_chain("local", 1, wallet="cold", hotkey="hot", wallet_path=str(tmp_path), substrate=subnet) as edge:
        assert edge.hotkey == hotkey and hotkey not in repr(edge.plan.__doc__ or "")
        snap = edge.snapshot()
        v = weight_vector({snap.neurons[1].hotkey: 1.0}, snap, edge.hotkey)
        assert edge.submit(v).ok and subnet.extrinsics[-1]["signer"] == hotkey
    with pytest.raises(PermanentChainError) as caught:
        open_chain("local", 1, wallet="cold", hotkey="missing", wallet_path=str(tmp_path), substrate=subnet)
    assert caught.value.kind == "wrong wallet"


def test_unknown_networks_and_mismatched_vectors_are_refused(chain, subnet, keys):
    with pytest.raises(PermanentChainError) as caught:
        open_chain("mainnet", 1, hotkey_uri="//Alice", substrate=subnet)
    assert caught.value.kind == "unknown network"
    v = weight_vector({keys["Bob"]: 1.0}, chain.snapshot(), keys["Bob"])
    with pytest.raises(ValueError, match="another validator hotkey"):
        chain.plan(v)
    assert isinstance(chain, BittensorChain) and "Alice" not in repr(chain) and keys["Alice"] in repr(chain)
