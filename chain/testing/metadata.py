"""A runtime metadata (SCALE, V14) for the SDK's own codec: the calls the validator sends, as subtensor declares them.

The in-memory chain needs the SDK's SCALE codec (``bittensor._transport.codec.RuntimeCodec``, backed by
``bittensor_core``) to encode every call the SDK composes and decode it again before the chain's rules see it,
as a node does. The codec is built from a runtime's metadata; with no node to record it from, this module
writes the part of subtensor's metadata those calls need, from subtensor's source:

- the pallet ``SubtensorModule`` at index 7 (``runtime/src/lib.rs``, ``construct_runtime!``);
- its calls with their ``#[pallet::call_index]``, argument names and types
  (``pallets/subtensor/src/macros/dispatches.rs``): ``set_mechanism_weights`` (119: ``netuid: NetUid,
  mecid: MechId, dests: Vec<u16>, weights: Vec<u16>, version_key: u64``) and
  ``commit_timelocked_mechanism_weights`` (118: ``netuid: NetUid, mecid: MechId, commit: BoundedVec<u8, ..>,
  reveal_round: u64, commit_reveal_version: u16``);
- ``NetUid(u16)`` and ``MechId(u8)`` (``common/src/lib.rs``), plain newtypes;
- the extrinsic: ``MultiAddress``, ``MultiSignature`` and the transaction extensions the SDK's signer
  frames (``runtime/src/lib.rs`` ``TxExtension``: nonce, mortality, genesis, spec and transaction
  versions, tip, metadata hash; the runtime's own extensions carry nothing and are left out).

A call composed with a wrong argument name, a missing argument or a value of the wrong type is refused by
the SDK's codec here, as by a node's. The type registry follows scale-info's portable form (frame-metadata
``RuntimeMetadataV14``); ``metadata_v14()`` returns the bytes, ``codec()`` the SDK's codec over them.
"""

from __future__ import annotations

from typing import Any

SUBTENSOR_PALLET = ("SubtensorModule", 7)
CALLS = {  # name -> (call index, [(argument, type name)]) from dispatches.rs
    "set_mechanism_weights": (
        119,
        [("netuid", "NetUid"), ("mecid", "MechId"), ("dests", "Vec<u16>"), ("weights", "Vec<u16>"),
         ("version_key", "u64")],
    ),
    "commit_timelocked_mechanism_weights": (
        118,
        [("netuid", "NetUid"), ("mecid", "MechId"), ("commit", "BoundedVec<u8, ConstU32<MAX_CRV3_COMMIT_SIZE_BYTES>>"),
         ("reveal_round", "u64"), ("commit_reveal_version", "u16")],
    ),
}  # fmt: skip
SPEC_VERSION = 435


def compact(n: int) -> bytes:
    """SCALE compact integer."""
    if n < 1 << 6:
        return bytes([n << 2])
    if n < 1 << 14:
        return ((n << 2) | 1).to_bytes(2, "little")
    if n < 1 << 30:
        return ((n << 2) | 2).to_bytes(4, "little")
    raw = n.to_bytes((n.bit_length() + 7) // 8, "little")
    return bytes([((len(raw) - 4) << 2) | 3]) + raw


def text(s: str) -> bytes:
    data = s.encode()
    return compact(len(data)) + data


def vec(items: list[bytes]) -> bytes:
    return compact(len(items)) + b"".join(items)


def option(value: bytes | None) -> bytes:
    return b"\x00" if value is None else b"\x01" + value


def _field(ty: int, *, name: str | None = None, type_name: str | None = None) -> bytes:
    return option(None if name is None else text(name)) + compact(ty) + option(None if type_name is None else text(type_name)) + vec([])  # fmt: skip


def _type(path: list[str], type_def: bytes, params: list[tuple[str, int | None]] = ()) -> bytes:  # type: ignore[assignment]
    param_bytes = [text(n) + option(None if t is None else compact(t)) for n, t in params]
    return vec([text(p) for p in path]) + vec(param_bytes) + type_def + vec([])


def _composite(fields: list[bytes]) -> bytes:
    return b"\x00" + vec(fields)


def _variant(variants: list[tuple[str, int, list[bytes]]]) -> bytes:
    return b"\x01" + vec([text(name) + vec(fields) + bytes([index]) + vec([]) for name, index, fields in variants])


def _sequence(of: int) -> bytes:
    return b"\x02" + compact(of)


def _array(length: int, of: int) -> bytes:
    return b"\x03" + length.to_bytes(4, "little") + compact(of)


def _tuple(of: list[int]) -> bytes:
    return b"\x04" + vec([compact(t) for t in of])


def _compact(of: int) -> bytes:
    return b"\x06" + compact(of)


_PRIMITIVE = {"bool": 0, "u8": 3, "u16": 4, "u32": 5, "u64": 6}


def _primitive(name: str) -> bytes:
    return b"\x05" + bytes([_PRIMITIVE[name]])


def metadata_v14() -> bytes:
    """The metadata bytes (module docstring): ``meta`` + version 14 + the registry, the pallet, the extrinsic."""
    ids: dict[str, int] = {}
    types: list[bytes] = []

    def add(name: str, body: bytes) -> int:
        ids[name] = len(types)
        types.append(compact(ids[name]) + body)
        return ids[name]

    u8, u16, u64 = (add(p, _type([], _primitive(p))) for p in ("u8", "u16", "u64"))
    vec_u8, vec_u16 = add("Vec<u8>", _type([], _sequence(u8))), add("Vec<u16>", _type([], _sequence(u16)))
    add("NetUid", _type(["subtensor_runtime_common", "NetUid"], _composite([_field(u16, type_name="u16")])))
    add("MechId", _type(["subtensor_runtime_common", "MechId"], _composite([_field(u8, type_name="u8")])))
    bounded = _type(["bounded_collections", "bounded_vec", "BoundedVec"], _composite([_field(vec_u8, type_name="Vec<T>")]),
                    [("T", u8), ("S", None)])  # fmt: skip
    ids["BoundedVec<u8, ConstU32<MAX_CRV3_COMMIT_SIZE_BYTES>>"] = add("BoundedVec", bounded)
    ids["u16"], ids["u64"], ids["Vec<u16>"] = u16, u64, vec_u16
    calls = [
        (name, index, [_field(ids[ty], name=arg, type_name=ty) for arg, ty in args])
        for name, (index, args) in sorted(CALLS.items(), key=lambda c: c[1][0])
    ]
    pallet_call = add("Call", _type(["pallet_subtensor", "pallet", "Call"], _variant(calls), [("T", None)]))
    pallet, index = SUBTENSOR_PALLET
    runtime_call = add(
        "RuntimeCall",
        _type(["node_subtensor_runtime", "RuntimeCall"], _variant([(pallet, index, [_field(pallet_call)])])),
    )
    empty_enum = _variant([])
    add("RuntimeEvent", _type(["node_subtensor_runtime", "RuntimeEvent"], empty_enum))
    add("RuntimeError", _type(["node_subtensor_runtime", "RuntimeError"], empty_enum))
    # the extrinsic's parts (runtime/src/lib.rs: Address = MultiAddress, Signature = MultiSignature, TxExtension)
    u32, unit = add("u32", _type([], _primitive("u32"))), add("()", _type([], _tuple([])))
    bytes32, bytes64 = add("[u8; 32]", _type([], _array(32, u8))), add("[u8; 64]", _type([], _array(64, u8)))
    bytes65 = add("[u8; 65]", _type([], _array(65, u8)))
    account = add("AccountId32", _type(["sp_core", "crypto", "AccountId32"], _composite([_field(bytes32)])))
    address = add(
        "MultiAddress",
        _type(["sp_runtime", "multiaddress", "MultiAddress"], _variant([("Id", 0, [_field(account)])]),
              [("AccountId", account), ("AccountIndex", unit)]),
    )  # fmt: skip
    signature = add(
        "MultiSignature",
        _type(["sp_runtime", "MultiSignature"], _variant([
            ("Ed25519", 0, [_field(bytes64)]), ("Sr25519", 1, [_field(bytes64)]), ("Ecdsa", 2, [_field(bytes65)])])),
    )  # fmt: skip
    era = add(
        "Era",
        _type(["sp_runtime", "generic", "era", "Era"],
              _variant([("Immortal", 0, [])] + [(f"Mortal{i}", i, [_field(u8)]) for i in range(1, 256)])),
    )  # fmt: skip
    h256 = add("H256", _type(["primitive_types", "H256"], _composite([_field(bytes32)])))
    nonce = add("Compact<u32>", _type([], _compact(u32)))
    tip = add("Compact<u64>", _type([], _compact(u64)))
    mode = add(
        "Mode", _type(["frame_metadata_hash_extension", "Mode"], _variant([("Disabled", 0, []), ("Enabled", 1, [])]))
    )
    digest = add("Option<[u8; 32]>", _type(["Option"], _variant([("None", 0, []), ("Some", 1, [_field(bytes32)])]),
                                          [("T", bytes32)]))  # fmt: skip
    # identifier, what the extrinsic carries, what the signature also covers (frame_system and the runtime's own)
    extensions = [
        ("CheckNonZeroSender", unit, unit), ("CheckSpecVersion", unit, u32), ("CheckTxVersion", unit, u32),
        ("CheckGenesis", unit, h256), ("CheckMortality", era, h256), ("CheckNonce", nonce, unit),
        ("CheckWeight", unit, unit), ("ChargeTransactionPayment", tip, unit), ("CheckMetadataHash", mode, digest),
    ]  # fmt: skip
    extra = add("TxExtension", _type([], _tuple([ty for _, ty, _ in extensions])))
    extrinsic = add(
        "UncheckedExtrinsic",
        _type(
            ["fp_self_contained", "unchecked_extrinsic", "UncheckedExtrinsic"],
            _composite([_field(vec_u8)]),
            [("Address", address), ("Call", runtime_call), ("Signature", signature), ("Extra", extra)],
        ),
    )
    runtime = add("Runtime", _type(["node_subtensor_runtime", "Runtime"], _composite([])))
    pallet_metadata = text(pallet) + option(None) + option(compact(pallet_call)) + option(None) + vec([]) + option(None) + bytes([index])  # fmt: skip
    extrinsic_metadata = (
        compact(extrinsic)
        + bytes([4])
        + vec([text(name) + compact(ty) + compact(add_) for name, ty, add_ in extensions])
    )
    return b"meta" + bytes([14]) + vec(types) + vec([pallet_metadata]) + extrinsic_metadata + compact(runtime)


def codec() -> Any:
    """The SDK's own SCALE codec over ``metadata_v14()`` (imports the SDK)."""
    # lazy: bittensor is the optional [chain] extra
    from bittensor._transport.codec import RuntimeCodec

    return RuntimeCodec(metadata_v14(), spec_version=SPEC_VERSION, transaction_version=1)
