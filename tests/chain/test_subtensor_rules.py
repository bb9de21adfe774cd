"""The test chain's weight rules, checked by hand against subtensor's source (pallets/subtensor/src/subnets/weights.rs,
epoch/math.rs): the values below are worked out from the Rust, not from the project's own weight code."""

from __future__ import annotations

import pytest

pytest.importorskip("bittensor")

from chain.testing.subnet import (
    FakeNeuron,
    FakeSubnet,
    check_vec_max_limited,
    vec_u16_max_upscale_to_u16,
)


def subnet(n: int, **settings) -> FakeSubnet:
    s = FakeSubnet(1, "owner", "owner-cold", **{"weights_rate_limit": 0, **settings})
    s.neurons = [FakeNeuron(f"h{i}", f"c{i}", validator_permit=(i == 0), stake=10.0) for i in range(n)]
    return s


def send(s: FakeSubnet, dests: list[int], weights: list[int], *, uid: int = 0, block: int = 10, version: int = 0):
    return s.set_weights(uid, block, {"dests": dests, "weights": weights, "version_key": version})


# the cases of subtensor's own unit tests (pallets/subtensor/src/tests/math.rs: test_vec_u16_max_upscale_to_u16,
# test_vec_max_upscale_to_u16 for its integer inputs, test_check_vec_max_limited)
@pytest.mark.parametrize(
    "values, upscaled",
    [([], []), ([0], [0]), ([0, 0], [0, 0]), ([1], [65535]), ([0, 1], [0, 65535]), ([65534], [65535]),
     ([65535, 65535], [65535, 65535]), ([0, 1, 65534], [0, 1, 65535]),
     ([0, 1, 2, 3, 4, 65533, 65535], [0, 1, 2, 3, 4, 65533, 65535]), ([0, 1, 65535], [0, 1, 65535]),
     ([0, 1, 2, 32768], [0, 2, 4, 65535]), ([0, 1, 2, 32768, 32769], [0, 2, 4, 65533, 65535]),
     ([16384], [65535]), ([32768], [65535]), ([32769], [65535])],
)  # fmt: skip
def test_max_upscale_as_subtensors_tests_have_it(values, upscaled):
    assert vec_u16_max_upscale_to_u16(values) == upscaled


@pytest.mark.parametrize(
    "values, limit, ok",
    [([], 0, True), ([], 65535, True), ([65535], 65535, True), ([65535], 65534, False), ([65535], 0, False),
     ([0], 65535, True), ([0, 65535], 65535, True), ([0, 65535, 65535], 65535 // 2, False),
     ([0, 65535, 65535], 65535 // 2 + 1, True), ([0, 65535, 65535, 65535], 65535 // 3 - 1, False),
     ([0, 65535, 65535, 65535], 65535 // 3, True)],
)  # fmt: skip
def test_the_cap_as_subtensors_tests_have_it(values, limit, ok):
    assert check_vec_max_limited(values, limit) is ok


def test_length_is_min_of_subnet_n_and_min_allowed_weights():
    s = subnet(3, min_allowed_weights=8)
    assert send(s, [0, 1, 2], [1, 1, 1]) is None  # 3 >= min(3, 8)
    s = subnet(3, min_allowed_weights=8)
    assert send(s, [1, 2], [1, 1]) == "WeightVecLengthIsLow"
    s = subnet(10, min_allowed_weights=8)
    assert send(s, [1, 2, 3], [1, 1, 1]) == "WeightVecLengthIsLow"


def test_a_lone_self_weight_is_exempt_and_a_lone_other_uid_is_not():
    s = subnet(2, min_allowed_weights=8, max_weight_limit=1000)
    assert send(s, [1], [65535]) == "WeightVecLengthIsLow"  # min(2, 8) = 2
    s = subnet(2, min_allowed_weights=1, max_weight_limit=1000)
    assert send(s, [1], [65535]) == "MaxWeightExceeded"  # the cap binds on any length
    s = subnet(2, min_allowed_weights=8, max_weight_limit=1000)
    s.neurons[0].validator_permit = False
    assert send(s, [0], [1]) is None and s.weights[0] == [(0, 65535)]  # no permit needed either


def test_permit_stake_version_rate_limit_and_uids():
    s = subnet(3, weights_version=5, weights_rate_limit=100, stake_threshold=5.0)
    assert send(s, [1, 2], [1, 1], uid=1, version=5) == "NeuronNoValidatorPermit"
    s.owner_hotkey = "h1"  # the owner needs none
    assert send(s, [0, 2], [1, 1], uid=1, version=5) is None
    assert send(s, [1, 2], [1, 1], version=4) == "IncorrectWeightVersionKey"
    assert send(s, [1, 1], [1, 1], version=5) == "DuplicateUids"
    assert send(s, [1, 7], [1, 1], version=5) == "UidVecContainInvalidOne"
    assert send(s, [1, 2, 0, 1], [1, 1, 1, 1], version=5) == "UidsLengthExceedUidsInSubNet"
    assert send(s, [1, 2], [1, 1], version=5, block=10) is None
    assert send(s, [1, 2], [1, 1], version=5, block=109) == "SettingWeightsTooFast"
    assert send(s, [1, 2], [1, 1], version=5, block=110) is None
    s.neurons[0].stake = 1.0
    assert send(s, [1, 2], [1, 1], version=5, block=300) == "NotEnoughStakeToSetWeights"
