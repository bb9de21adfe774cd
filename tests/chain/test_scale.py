"""The SDK's own SCALE codec, extrinsic builder and sr25519 signing, driven offline (chain.testing.metadata and
chain.testing.extrinsics): the bytes of the calls we send, a wrong name or type refused, signatures checked."""

from __future__ import annotations

import asyncio
import struct

import pytest

bt = pytest.importorskip("bittensor")

from chain.sdk_wallet import keypair_from_uri  # noqa: E402
from chain.testing import InMemorySubstrate, chain_for  # noqa: E402
from chain.testing.extrinsics import InvalidTransaction, era_birth, receive, sign  # noqa: E402
from chain.testing.metadata import CALLS, codec, compact  # noqa: E402
from chain.weights import weight_vector  # noqa: E402


@pytest.fixture(scope="module")
def keys():
    return {n: keypair_from_uri(f"//{n}") for n in ("Alice", "Bob", "Charlie")}


@pytest.fixture
def sub(keys):
    chain = InMemorySubstrate(block=1000)
    chain.add_subnet(3, owner_hotkey="5Owner", owner_coldkey="5Owner", weights_version=7, weights_rate_limit=0)
    chain.register(3, keys["Alice"].ss58_address, keys["Alice"].ss58_address, stake=10.0, validator_permit=True)
    for name in ("Bob", "Charlie"):
        chain.register(3, keys[name].ss58_address, keys[name].ss58_address, axon="127.0.0.1:9000")
    return chain


def u16s(values: list[int]) -> bytes:
    return compact(len(values)) + b"".join(struct.pack("<H", v) for v in values)


def test_set_mechanism_weights_is_encoded_as_subtensor_declares_it():
    """Pallet 7, call 119; netuid u16, mecid u8, dests and weights Vec<u16>, version_key u64 (dispatches.rs)."""
    call = bt.calls.SubtensorModule.set_mechanism_weights(
        netuid=3, mecid=0, dests=[1, 2], weights=[65535, 100], version_key=7
    )
    data = codec().call_data(codec().compose_call(*call))
    assert data == bytes([7, 119]) + struct.pack("<HB", 3, 0) + u16s([1, 2]) + u16s([65535, 100]) + struct.pack("<Q", 7)
    assert CALLS["set_mechanism_weights"][0] == 119 and CALLS["commit_timelocked_mechanism_weights"][0] == 118


def test_what_we_submit_goes_through_the_codec_and_a_signed_extrinsic(sub, keys):
    with chain_for(sub, 3, "//Alice") as edge:
        v = weight_vector(
            {keys["Bob"].ss58_address: 3.0, keys["Charlie"].ss58_address: 1.0}, edge.snapshot(), edge.hotkey
        )
        assert edge.submit(v).ok
    sent = sub.extrinsics[-1]
    assert sent["signer"] == keys["Alice"].ss58_address  # read from the decoded extrinsic, not from the keypair
    assert sent["params"] == {"netuid": 3, "mecid": 0, "dests": [1, 2], "weights": [65535, 21845], "version_key": 7}


@pytest.mark.parametrize(
    "change, error",
    [
        (lambda p: {("uids" if k == "dests" else k): v for k, v in p.items()}, 'missing call param "dests"'),
        (lambda p: {**p, "weights": [w / 65535 for w in p["weights"]]}, "cannot encode"),  # floats, not u16
        (lambda p: {**p, "weights": [w * 2 for w in p["weights"]]}, "out of range"),  # over u16
        (lambda p: {k: v for k, v in p.items() if k != "mecid"}, 'missing call param "mecid"'),
    ],
)
def test_a_wrong_field_name_or_type_in_the_call_fails_in_the_sdks_codec(sub, keys, monkeypatch, change, error):
    """As if the SDK (or our use of it) built set_mechanism_weights with another name or type: refused."""
    real = bt.calls.SubtensorModule.set_mechanism_weights

    def altered(**params):
        module, function, built = real(**params)
        return bt.calls.Call(module, function, change(built))

    monkeypatch.setattr(bt.calls.SubtensorModule, "set_mechanism_weights", staticmethod(altered))
    with chain_for(sub, 3, "//Alice") as edge:
        v = weight_vector({keys["Bob"].ss58_address: 1.0}, edge.snapshot(), edge.hotkey)
        with pytest.raises(Exception, match=error):
            edge.submit(v)
    assert sub.extrinsics == []


def test_subtensor_renaming_an_argument_fails_the_sdks_call(sub, keys, monkeypatch):
    """The fixture pins subtensor's names: a runtime whose set_mechanism_weights said `uids` refuses the SDK's."""
    index, args = CALLS["set_mechanism_weights"]
    monkeypatch.setitem(CALLS, "set_mechanism_weights", (index, [("uids" if a == "dests" else a, t) for a, t in args]))
    sub.codec = codec()
    with chain_for(sub, 3, "//Alice") as edge:
        v = weight_vector({keys["Bob"].ss58_address: 1.0}, edge.snapshot(), edge.hotkey)
        with pytest.raises(Exception, match='missing call param "uids"'):
            edge.submit(v)


def test_the_signature_covers_the_payload_and_the_nonce_is_checked(keys):
    c, alice = codec(), keys["Alice"]
    call = c.compose_call(*bt.calls.SubtensorModule.set_mechanism_weights(3, 0, [1], [65535], 0))

    def block_hash(n: int) -> str:
        return "0x" + n.to_bytes(32, "big").hex()

    data = asyncio.run(sign(c, call, alice, nonce=4, block=1000, era_block_hash=block_hash(era_birth(1000))))
    got = receive(c, data, expected_nonce=4, head=1010, block_hash=block_hash)
    assert got.signer == alice.ss58_address and got.params["dests"] == [1] and got.nonce == 4
    tampered = bytearray(data)
    tampered[-9] ^= 1  # the version key's first byte
    with pytest.raises(InvalidTransaction, match="BadProof"):
        receive(c, bytes(tampered), expected_nonce=4, head=1010, block_hash=block_hash)
    with pytest.raises(InvalidTransaction, match="BadProof"):  # signed for another chain state (era block)
        receive(c, data, expected_nonce=4, head=1010, block_hash=lambda n: block_hash(n + 1))
    with pytest.raises(InvalidTransaction, match="Stale/Future"):
        receive(c, data, expected_nonce=5, head=1010, block_hash=block_hash)


def test_a_commit_goes_through_the_codec_too(sub, keys):
    sub.subnets[3].commit_reveal = True
    with chain_for(sub, 3, "//Alice") as edge:
        submission = edge.submit(weight_vector({keys["Bob"].ss58_address: 1.0}, edge.snapshot(), edge.hotkey))
    assert submission.ok and submission.method == "commit"
    commit = sub.subnets[3].commits[-1]
    assert commit["commit_reveal_version"] == 4 and len(commit["commit"]) > 100  # the timelock ciphertext
