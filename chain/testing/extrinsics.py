"""Signed extrinsics for the in-memory chain, built by the SDK's own code and checked as a node checks them.

``sign`` is what ``RpcSubstrate.submit`` does before anything goes on the wire: the SDK's
``bittensor._transport.extrinsics.create_signed_extrinsic`` over its SCALE codec
(``chain.testing.metadata``): the signature payload (call, mortal era, nonce, tip, metadata-hash mode,
spec and transaction versions, genesis and era block hashes), signed by the keypair, assembled into the
extrinsic's bytes. ``receive`` is the node's side: the bytes decoded by the same codec, the signature
verified (sr25519) over the payload rebuilt from the extrinsic's own fields and the chain's state, the
nonce compared with the account's; the call comes back as module, function and decoded arguments.
A wrong field name or type, a payload the signature does not cover, or a wrong nonce fails here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import bittensor_core
from bittensor._transport.extrinsics import create_signed_extrinsic

GENESIS = "0x" + "42" * 32  # the in-memory chain's genesis hash
ERA_PERIOD = 64  # blocks a signed extrinsic stays valid (RpcSubstrate's default era is mortal too)


class InvalidTransaction(ValueError):
    """What a node's pool answers for an extrinsic it will not include (bad proof, stale or future nonce)."""


@dataclass(frozen=True)
class Received:
    """A checked extrinsic: who signed it, and the call it carries (decoded arguments)."""

    signer: str
    nonce: int
    module: str
    function: str
    params: dict[str, Any]


async def sign(codec: Any, call: Any, keypair: Any, *, nonce: int, block: int, era_block_hash: str) -> bytes:
    """The signed extrinsic's bytes, by the SDK's own builder (module docstring)."""
    extrinsic = await create_signed_extrinsic(
        codec,
        call,
        keypair,
        era={"period": ERA_PERIOD, "current": block},
        nonce=nonce,
        genesis_hash=GENESIS,
        era_block_hash=era_block_hash,
    )
    return bytes(extrinsic.data)


def era_birth(block: int) -> int:
    """The block a mortal era signed at ``block`` starts at (its hash is in the signature payload)."""
    return int(bittensor_core.era_birth(ERA_PERIOD, block))


def receive(codec: Any, data: bytes, *, expected_nonce: int, head: int, block_hash: Callable[[int], str]) -> Received:
    """Decode and check a signed extrinsic as a node's pool does at block ``head`` (``InvalidTransaction`` when it
    would not include it); ``block_hash(n)`` is the chain's hash of block ``n`` (the era's birth block)."""
    value = codec.decode_extrinsic(data)
    signer = value["address"]
    scheme, signature = next(iter(value["signature"].items()))
    period, phase = value["era"]
    birth = head - ((head - phase) % period)  # the latest block of that phase: where the era began
    parts = dict(era={"period": period, "current": birth}, nonce=value["nonce"], tip=value["tip"], tip_asset_id=None)
    _, extra, _ = codec.signature_payload_parts(b"", **parts, genesis_hash=GENESIS, era_block_hash=block_hash(birth))
    # the extrinsic: a compact length, the version byte, MultiAddress::Id (1 + 32), MultiSignature (1 + 64), the
    # extensions' bytes, then the call
    call_data = data[_compact_len(data) + 1 + 33 + 65 + len(extra) :]
    if codec.decode_call(call_data)["call_hash"] != value["call"]["call_hash"]:
        raise InvalidTransaction("the call is not where the extrinsic's layout puts it")
    payload = codec.signature_payload(call_data, **parts, genesis_hash=GENESIS, era_block_hash=block_hash(birth))
    if scheme != "Sr25519" or not bittensor_core.verify(payload, bytes.fromhex(signature[2:]), signer):
        raise InvalidTransaction("bad signature (BadProof)")
    if value["nonce"] != expected_nonce:
        raise InvalidTransaction(f"nonce {value['nonce']}, the account's is {expected_nonce} (Stale/Future)")
    call = value["call"]
    args = {a["name"]: a["value"] for a in call["call_args"]}
    return Received(signer, value["nonce"], call["call_module"], call["call_function"], args)


def _compact_len(data: bytes) -> int:
    """Bytes taken by the SCALE compact integer at the start of ``data``."""
    mode = data[0] & 0b11
    return {0: 1, 1: 2, 2: 4}.get(mode, 1 + (data[0] >> 2) + 4)
