"""chain.weights: the ledger's hotkeys to uids, the SDK's own normalisation, the min_allowed_weights / cap choice."""

from __future__ import annotations

import copy
import math
import random

import pytest

from chain.errors import WeightsError
from chain.testing.subnet import FakeNeuron, FakeSubnet
from chain.types import U16_MAX, Hyperparameters, MetagraphSnapshot, Neuron
from chain.weights import clip_to_max_weight, problems, quantize_u16, sdk_conform, weight_vector, within_max_weight

ME = "validator"


def snapshot(
    n_miners: int = 5,
    *,
    min_allowed_weights: int = 1,
    max_weight_limit: int = U16_MAX,
    served: bool = True,
    extra: tuple[Neuron, ...] = (),
) -> MetagraphSnapshot:
    neurons = [Neuron(0, ME, "cold-v", None, True, 1000.0, 0)]
    neurons += [
        Neuron(i, f"m{i}", f"cold-{i}", f"127.0.0.1:{9000 + i}" if served else None, False, 1.0, 0)
        for i in range(1, n_miners + 1)
    ]
    neurons += list(extra)
    hp = Hyperparameters(
        weights_rate_limit=100,
        min_allowed_weights=min_allowed_weights,
        max_weight_limit=max_weight_limit,
        weights_version=7,
        commit_reveal=False,
    )
    return MetagraphSnapshot(netuid=3, block=500, tempo=360, neurons=tuple(neurons), hyperparameters=hp)


# --- the SDK's steps, checked against the SDK itself ---------------------------------------------------------


def test_quantize_by_hand():
    assert quantize_u16([4, 2, 9], [0.5, 1.0, 0.0]) == ([4, 2], [32768, 65535])  # round(32767.5) = 32768
    assert quantize_u16([1], [0.0]) == ([], [])
    assert quantize_u16([1, 2], [1e-6, 1.0]) == ([2], [65535])  # below half a unit of the top: dropped


def test_clip_by_hand():
    assert clip_to_max_weight([1, 1, 2], 1.0) == [0.25, 0.25, 0.5]
    assert clip_to_max_weight([1, 1, 1], 0.2) == [1 / 3] * 3  # 3 * 0.2 <= 1: nothing fits, uniform
    clipped = clip_to_max_weight([8, 1, 1, 1, 1], 0.4)
    assert max(clipped) == pytest.approx(0.4, abs=1e-6) and sum(clipped) == pytest.approx(1)
    assert clipped[1:] == [clipped[1]] * 4  # the rest keep their proportions
    with pytest.raises(WeightsError):
        clip_to_max_weight([0, 0], 0.5)


@pytest.mark.parametrize("seed", range(100))
def test_our_conform_is_the_sdks(seed):
    sdk = pytest.importorskip("bittensor.intents.weights")
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    uids = rng.sample(range(256), n)
    weights = [rng.choice([0.0, rng.random(), rng.random() * 1e-5, float(rng.randint(1, 9))]) for _ in range(n)]
    if not any(weights):
        weights[0] = 1.0
    limit = rng.choice([U16_MAX, rng.randint(300, U16_MAX - 1), rng.randint(U16_MAX // n if n else 1, U16_MAX)])
    self_uid = rng.choice([None, uids[0]])
    preflight = sdk._Preflight(
        uid=-1 if self_uid is None else self_uid, commit_reveal=False, min_allowed_weights=0, max_weight_limit=limit
    )
    theirs = sdk._conform(list(uids), list(weights), preflight, 3)
    assert sdk_conform(uids, weights, max_weight_limit=limit, self_uid=self_uid) == tuple(map(list, theirs))
    assert clip_to_max_weight(weights, limit / U16_MAX) == sdk.clip_to_max_weight(weights, limit / U16_MAX)
    assert quantize_u16(uids, weights) == sdk.normalize(uids, weights)


def test_within_max_weight_is_the_chains_fixed_point_check():
    assert within_max_weight([65535, 65535], 32768)  # 0.5 <= 0.500008
    assert not within_max_weight([65535, 65535], 32767)  # 0.5 > 0.499992
    assert not within_max_weight([65535, 60000], 34212) and within_max_weight([65535, 60000], 34213)
    assert within_max_weight([65535], 1) is False and within_max_weight([7], U16_MAX)


# --- ledger -> uids --------------------------------------------------------------------------------------------


def test_hotkeys_become_uids_and_only_registered_miners_count():
    snap = snapshot(4)
    ledger = {"m2": 0.5, "m4": 0.25, "gone": 0.25, ME: 0.9, "m1": 0.0}
    before = copy.deepcopy(ledger)
    v = weight_vector(ledger, snap, ME)
    assert ledger == before
    assert v.kind == "ledger" and v.uids == (2, 4) and v.hotkeys == ("m2", "m4")
    assert v.deregistered == ("gone",)
    assert v.u16 == (65535, 32768) and v.chain_uids == (2, 4)
    assert sum(v.shares) == pytest.approx(1) and v.shares[0] == pytest.approx(2 / 3)
    assert (v.netuid, v.block, v.version_key, v.self_uid, v.validator_permit) == (3, 500, 7, 0, True)
    assert problems(v, snap) == []


def test_a_hotkey_on_a_freed_uid_starts_from_nothing():
    before = snapshot(3)
    ledger = {"m1": 1.0, "m2": 1.0, "m3": 1.0}
    assert weight_vector(ledger, before, ME).uids == (1, 2, 3)
    # m2 deregistered; "newcomer" registered on its uid
    neurons = tuple(
        n if n.uid != 2 else Neuron(2, "newcomer", "cold-x", "127.0.0.1:9999", False, 0.0, 0) for n in before.neurons
    )
    after = MetagraphSnapshot(3, 600, 360, neurons, before.hyperparameters)
    v = weight_vector(ledger, after, ME)
    assert v.uids == (1, 3) and "newcomer" not in v.hotkeys and v.deregistered == ("m2",)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "1", True])
def test_bad_ledger_values_are_refused(bad):
    with pytest.raises(WeightsError):
        weight_vector({"m1": bad}, snapshot(), ME)


def test_nothing_to_follow_sets_a_keep_alive_self_weight():
    snap = snapshot(3)
    v = weight_vector({"m1": 0.0, "gone": 1.0}, snap, ME)
    assert v.kind == "keep-alive" and v.uids == (0,) and v.u16 == (U16_MAX,) and v.deregistered == ("gone",)
    assert problems(v, snap) == []
    assert weight_vector({}, snap, ME, keep_alive=False).kind == "empty"
    empty = weight_vector({}, snap, "not-registered")
    assert empty.kind == "empty" and empty.self_uid is None and not empty.validator_permit
    assert problems(empty, snap)


# --- fewer qualified miners than the rules need ----------------------------------------------------------------


def test_a_weight_the_u16_rounding_would_drop_does_not_qualify():
    v = weight_vector({"m1": 1.0, "m2": 0.9 / U16_MAX, "m3": 1.0 / U16_MAX}, snapshot(3), ME)
    assert v.uids == (1, 3) and v.u16 == (65535, 1)


def test_too_few_miners_are_padded_with_the_smallest_fillers():
    snap = snapshot(6, min_allowed_weights=4)
    v = weight_vector({"m5": 3.0, "m2": 1.0}, snap, ME)
    assert v.kind == "padded"
    assert v.fillers == (1, 3)  # served non-validators by uid, never the validator, never a qualified miner
    by_uid = dict(zip(v.uids, v.u16))
    assert by_uid == {1: 1, 2: 21845, 3: 1, 5: 65535}  # the ledger's 3:1 kept; fillers at one u16 unit
    assert problems(v, snap) == []


def test_fillers_prefer_miners_serving_an_axon_over_idle_uids_and_validators():
    extra = (
        Neuron(3, "idle", "cold-i", None, False, 0.0, 0),
        Neuron(4, "peer-validator", "cold-p", "1.2.3.4:1", True, 50.0, 0),
        Neuron(5, "live", "cold-l", "1.2.3.4:2", False, 0.0, 0),
    )
    snap = snapshot(2, min_allowed_weights=4, extra=extra)
    assert weight_vector({"m1": 1.0}, snap, ME).fillers == (2, 3, 5)


def test_a_binding_cap_gives_the_qualified_miners_all_it_allows():
    snap = snapshot(8, max_weight_limit=U16_MAX // 4 + 10)  # at most (just over) a quarter of the total per uid
    v = weight_vector({"m1": 3.0, "m2": 1.0}, snap, ME)  # two miners can hold at most half
    assert v.kind == "padded" and len(v.fillers) == 2
    shares = dict(zip(v.uids, v.shares))
    cap = snap.hyperparameters.max_weight_share
    assert shares[1] == pytest.approx(cap, abs=1e-4) and shares[2] == pytest.approx(cap, abs=1e-4)
    assert sum(shares[f] for f in v.fillers) == pytest.approx(1 - 2 * cap, abs=1e-4)
    assert problems(v, snap) == []


def subtensor_accepts(v, snap) -> str | None:
    """The vector's u16 values as subtensor's own rules judge them (chain.testing.subnet, written from
    pallets/subtensor/src/subnets/weights.rs): None when accepted, else the chain error's name."""
    subnet = FakeSubnet(
        snap.netuid,
        "owner-not-registered",
        "cold",
        min_allowed_weights=snap.hyperparameters.min_allowed_weights,
        max_weight_limit=snap.hyperparameters.max_weight_limit,
        weights_rate_limit=0,
    )
    subnet.neurons = [FakeNeuron(n.hotkey, n.coldkey, n.axon, n.stake, n.validator_permit) for n in snap.neurons]
    params = {"dests": list(v.chain_uids), "weights": list(v.chain_u16), "version_key": v.version_key}
    return subnet.set_weights(v.self_uid, snap.block, params)


def test_a_subnet_smaller_than_min_allowed_weights_gets_the_self_weight_and_the_reason():
    snap = snapshot(2, min_allowed_weights=8)  # 3 uids: subtensor asks min(3, 8) = 3 weights
    every = weight_vector({"m1": 1.0, "m2": 1.0}, snap, ME, keep_alive=False)
    assert subtensor_accepts(every, snap) == "WeightVecLengthIsLow"  # the validator does not weight itself
    # the SDK 11.3.0 asks min_allowed_weights whatever the subnet's size: no vector of the miners goes
    v = weight_vector({"m1": 1.0}, snap, ME)
    assert v.kind == "keep-alive" and "at least 3" in v.reason
    assert problems(v, snap) == [] and subtensor_accepts(v, snap) is None


def test_a_single_miner_under_a_cap_becomes_a_self_weight_and_says_why():
    # subtensor checks the cap on any length but a lone self-weight: [miner] alone is MaxWeightExceeded
    snap = snapshot(1, max_weight_limit=U16_MAX // 3)  # 2 uids under a cap of a third: no vector of them fits
    alone = weight_vector({"m1": 1.0}, snap, ME, keep_alive=False)
    assert subtensor_accepts(alone, snap) == "MaxWeightExceeded"
    assert any("caps one uid" in p for p in problems(alone, snap))
    v = weight_vector({"m1": 1.0}, snap, ME)
    assert v.kind == "keep-alive" and v.chain_uids == (0,) and "caps one uid" in v.reason
    assert problems(v, snap) == [] and subtensor_accepts(v, snap) is None


def test_a_one_uid_subnet_under_a_cap_sends_the_self_weight():
    snap = snapshot(0, min_allowed_weights=8, max_weight_limit=1000)
    v = weight_vector({}, snap, ME)
    assert v.kind == "keep-alive" and subtensor_accepts(v, snap) is None


@pytest.mark.parametrize("seed", range(100))
def test_any_ledger_on_any_subnet_gives_a_vector_subtensor_accepts(seed):
    """Whatever the subnet (tiny, capped so that nothing fits, min_allowed_weights above its size), the vector
    passes subtensor's own checks; the ledger's miners are paid whenever a vector of theirs can pass."""
    rng = random.Random(seed)
    n = rng.randint(0, 12)
    limit = rng.choice([U16_MAX, rng.randint(1, U16_MAX)])
    min_w = rng.randint(1, 16)
    snap = snapshot(n, min_allowed_weights=min_w, max_weight_limit=limit)
    hotkeys = [f"m{i}" for i in rng.sample(range(1, n + 1), rng.randint(0, n))]
    v = weight_vector({h: rng.random() + 1e-3 for h in hotkeys}, snap, ME)
    assert subtensor_accepts(v, snap) is None, (v, snap)
    # the miners at the cap can hold the whole (with the rounding margin), and are as many as the SDK asks
    fits = n * limit > U16_MAX * (1 + 1e-6) and n >= min_w
    assert (v.kind == "keep-alive") == (not hotkeys or not fits), v
    assert (v.reason != "") == (v.kind == "keep-alive")


def test_a_tight_cap_on_a_full_subnet():
    """Old finney subnets: 256 uids, no uid above 455/65535 (0.7%) of the total: at least 145 uids carry weight."""
    snap = snapshot(255, min_allowed_weights=8, max_weight_limit=455)
    ledger = {f"m{i}": float(i) for i in range(1, 21)}
    v = weight_vector(ledger, snap, ME)
    assert v.kind == "padded" and len(v.chain_uids) >= 145 and problems(v, snap) == []
    paid = dict(zip(v.hotkeys, v.u16))
    assert min(paid[h] for h in ledger) >= max(paid[snap.neurons[f].hotkey] for f in v.fillers)
