"""``InMemorySubstrate``: the SDK's ``Substrate`` protocol served from ``chain.testing.subnet``'s state.

The reads are served in the shape the SDK 11.3.0 reads them (the reading SDK
function is named next to each value). Calls go through the SDK's own SCALE
codec (``chain.testing.metadata``): ``compose`` encodes them, ``submit``
signs them with the SDK's own extrinsic builder and decodes and verifies the
extrinsic as a node does (``chain.testing.extrinsics``), so a wrong argument
name or type, or a signature that does not cover the payload, fails as on a
node;
``submit`` includes an extrinsic in the next block after
``FakeSubnet.set_weights`` / ``commit_weights`` checked and applied the decoded
arguments, and answers a refusal as a live node does. Imports the SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import bittensor as bt
from bittensor._generated.errors import ERRORS

from chain.sdk import BittensorChain, open_chain
from chain.testing.extrinsics import InvalidTransaction, era_birth, receive, sign
from chain.testing.metadata import codec as runtime_codec
from chain.testing.subnet import FakeNeuron, FakeSubnet, metagraph_record, per_u16

# bittensor/settings.py GLOBAL_MAX_SUBNET_COUNT: LastUpdate and the weights are keyed by mechid * 4096 + netuid
_MECHANISM_STRIDE = 4096
_ERROR_DOCS = {info.name: info.docs for info in ERRORS.values() if info.pallet == "SubtensorModule"}


class InMemorySubstrate:
    """The SDK's ``Substrate`` protocol (``bittensor/_substrate.py``) over in-memory subnets (module docstring)."""

    def __init__(self, *, block: int = 1000, block_time: float = 12.0) -> None:
        self.block = block
        self.seconds_per_block = block_time
        self.subnets: dict[int, FakeSubnet] = {}
        self.outage = False
        self.connected = False
        self.token_symbols: dict[int, str] = {}
        self.extrinsics: list[dict[str, Any]] = []  # every submitted call: signer, module, function, params, result
        self.codec = runtime_codec()  # the SDK's SCALE codec over subtensor's call and extrinsic metadata
        self.genesis: str | None = None  # block 0's hash when a test makes it another chain's (finney's)

    # --- building the chain (tests) -------------------------------------------------------------------------

    def add_subnet(self, netuid: int, *, owner_hotkey: str, owner_coldkey: str, **settings: Any) -> FakeSubnet:
        subnet = FakeSubnet(
            netuid, owner_hotkey, owner_coldkey, registered_at=self.block, last_epoch_block=self.block, **settings
        )
        self.subnets[netuid] = subnet
        return subnet

    def register(
        self,
        netuid: int,
        hotkey: str,
        coldkey: str,
        *,
        axon: str | None = None,
        stake: float = 0.0,
        validator_permit: bool = False,
        uid: int | None = None,
    ) -> int:
        """Register ``hotkey``: on the next free uid, or on ``uid`` (whose holder is deregistered: a freed uid)."""
        subnet = self.subnets[netuid]
        if subnet.uid_of(hotkey) is not None:
            raise ValueError(f"{hotkey} is already registered on netuid {netuid}")
        neuron = FakeNeuron(hotkey, coldkey, axon, stake, validator_permit, block_at_registration=self.block)
        if uid is None:
            if len(subnet.neurons) >= subnet.max_uids:
                raise ValueError(f"netuid {netuid} is full: name the uid to replace")
            subnet.neurons.append(neuron)
            return len(subnet.neurons) - 1
        subnet.neurons[uid] = neuron  # the old hotkey is deregistered; its weights and commits go with it
        subnet.weights.pop(uid, None)
        for weights in subnet.weights.values():
            weights[:] = [(dest, w) for dest, w in weights if dest != uid]
        return uid

    def advance(self, blocks: int = 1) -> int:
        """Produce ``blocks`` blocks (epochs run every ``tempo + 1`` blocks); the new head."""
        for _ in range(blocks):
            self.block += 1
            for subnet in self.subnets.values():
                if subnet.tempo and self.block - subnet.last_epoch_block >= subnet.tempo + 1:
                    subnet.last_epoch_block = self.block
                    subnet.epoch_index += 1
        return self.block

    # --- the protocol: lifecycle and chain metadata ---------------------------------------------------------

    def _answer(self) -> None:
        if self.outage:
            raise bt.RpcConnectionError("could not connect to any endpoint: in-memory chain outage")

    def balance(self, rao: int, netuid: int = 0) -> bt.Balance:
        return bt.Balance(int(rao), netuid, self.token_symbols.get(netuid) if netuid else None)

    async def connect(self) -> None:
        self._answer()
        self.connected = True

    async def close(self) -> None:
        self.connected = False

    async def block_hash(self, block: int | None = None) -> str:
        self._answer()
        if block == 0 and self.genesis is not None:
            return self.genesis
        return self._hash(self.block if block is None else block)

    @staticmethod
    def _hash(block: int) -> str:
        return "0x" + block.to_bytes(32, "big").hex()

    async def block_number(self) -> int:
        self._answer()
        return self.block

    async def finalized_block_number(self) -> int:
        self._answer()
        return self.block

    async def block_time(self) -> float:
        # RpcSubstrate reads Aura.SlotDuration / 1000; the commit-reveal round math uses it
        return self.seconds_per_block

    async def spec_version(self) -> int:
        self._answer()
        return 435

    async def constant(self, module: str, name: str) -> Any:
        self._answer()
        if (module, name) == ("Aura", "SlotDuration"):
            return int(self.seconds_per_block * 1000)
        raise NotImplementedError(f"the in-memory chain has no constant {module}.{name}")

    # --- reads ----------------------------------------------------------------------------------------------

    def _subnet(self, netuid: Any) -> FakeSubnet | None:
        return self.subnets.get(int(netuid) % _MECHANISM_STRIDE)

    async def query(
        self, module: str, storage_function: str, params: list | None = None, block_hash: str | None = None
    ) -> Any:
        self._answer()
        params = list(params or [])
        subnet = self._subnet(params[0]) if params else None
        if module != "SubtensorModule":
            raise NotImplementedError(f"the in-memory chain has no storage {module}.{storage_function}")
        if storage_function == "Uids":  # intents/weights.py _preflight: [netuid, hotkey] -> uid, None unregistered
            return subnet.uid_of(params[1]) if subnet else None
        if storage_function == "Keys":  # [netuid, uid] -> hotkey
            uid = int(params[1])
            return subnet.neurons[uid].hotkey if subnet and uid < len(subnet.neurons) else None
        if storage_function == "Weights":  # [storage index, uid] -> [(dest, u16)]: what set or reveal left
            return list(subnet.weights.get(int(params[1]), [])) if subnet else []
        if storage_function == "NetworksAdded":
            return subnet is not None
        if subnet is None:
            return None  # every per-subnet item of an unknown netuid
        values = {
            # intents/weights.py _preflight and reads/hyperparameters.py (scalar reads: int(value))
            "CommitRevealWeightsEnabled": subnet.commit_reveal,
            "WeightsSetRateLimit": subnet.weights_rate_limit,
            "MinAllowedWeights": subnet.min_allowed_weights,
            "MaxWeightsLimit": subnet.max_weight_limit,
            "WeightsVersionKey": subnet.weights_version,
            "ActivityCutoff": subnet.activity_cutoff,
            # _preflight: the epoch mode; a unit enum variant decodes as its name
            "SubnetEpochConsensus": subnet.epoch_consensus,
            # _preflight: LastUpdate and ValidatorPermit are per-uid vectors
            "LastUpdate": [n.last_update for n in subnet.neurons],
            "ValidatorPermit": [n.validator_permit for n in subnet.neurons],
            # chain.sdk's snapshot: vtrust is not in the runtime's metagraph record
            "ValidatorTrust": [per_u16(n.validator_trust) for n in subnet.neurons],
            # intents/weights.py _build_timelocked: the epoch schedule behind the reveal round
            "Tempo": subnet.tempo,
            "RevealPeriodEpochs": subnet.reveal_period,
            "LastEpochBlock": subnet.last_epoch_block,
            "PendingEpochAt": 0,
            "SubnetEpochIndex": subnet.epoch_index,
            "BlocksSinceLastStep": self.block - subnet.last_epoch_block,
        }
        if storage_function not in values:
            raise NotImplementedError(f"the in-memory chain has no storage {module}.{storage_function}")
        return values[storage_function]

    async def map_has_entries(
        self, module: str, storage_function: str, params: list, block_hash: str | None = None
    ) -> bool:
        return bool(await self.query_map(module, storage_function, params, block_hash))

    async def query_map(
        self, module: str, storage_function: str, params: list | None = None, block_hash: str | None = None
    ) -> list[tuple[Any, Any]]:
        self._answer()
        params = list(params or [])
        if (module, storage_function) == ("SubtensorModule", "TokenSymbol"):
            # Client.connect -> reads/subnets.py token_symbols: netuid -> the symbol's utf-8 bytes
            return [(netuid, "0x" + s.symbol.encode("utf-8").hex()) for netuid, s in sorted(self.subnets.items())]
        if (module, storage_function) == ("SubtensorModule", "Uids"):
            subnet = self._subnet(params[0])
            return [(n.hotkey, uid) for uid, n in enumerate(subnet.neurons)] if subnet else []
        if module == "Commitments" and storage_function in ("CommitmentOf", "RevealedCommitments"):
            return []  # metagraph.py _fetch_commitment_map: nobody has committed anything
        raise NotImplementedError(f"the in-memory chain has no storage map {module}.{storage_function}")

    async def query_batch(
        self, module: str, storage_function: str, param_sets: list[list], block_hash: str | None = None
    ) -> list[Any]:
        return [await self.query(module, storage_function, params, block_hash) for params in param_sets]

    async def runtime_call(self, api: str, method: str, params: list, block_hash: str | None = None) -> Any:
        self._answer()
        if (api, method) == ("SubnetInfoRuntimeApi", "get_metagraph"):
            subnet = self._subnet(params[0])
            return None if subnet is None else metagraph_record(subnet, self.block)
        raise NotImplementedError(f"the in-memory chain has no runtime call {api}.{method}")

    async def get_block(self, block_number: int | None = None, block_hash: str | None = None) -> dict:
        self._answer()
        number = self.block if block_number is None else block_number
        return {"header": {"number": number, "hash": await self.block_hash(number)}, "extrinsics": []}

    async def decode_scale(self, type_string: str, data: Any) -> Any:
        return self.codec.decode(type_string, bytes(data))  # the SDK's codec, over the metadata it knows

    async def blocks(self, *, finalized: bool = False) -> AsyncIterator[dict]:
        raise NotImplementedError("the in-memory chain does not stream blocks: call advance()")
        yield {}  # pragma: no cover - makes this an async generator, as the protocol says

    async def events(self, block_hash: str | None = None) -> list[dict]:
        self._answer()
        return []

    # --- calls, fees and writes -----------------------------------------------------------------------------

    async def compose(self, call: Any) -> Any:
        """The call's SCALE bytes, by the SDK's own codec (``RpcSubstrate.compose`` does the same against the
        node's metadata): a wrong argument name or type fails here (``chain.testing.metadata``)."""
        self._answer()
        if not isinstance(call, bt.calls.Call):
            raise TypeError(f"expected a generated bittensor Call, got {type(call).__name__}")
        return self.codec.compose_call(call.module, call.function, call.params)

    async def estimate_fee(self, call: Any, keypair: Any) -> bt.Balance:
        self._answer()
        return bt.Balance.from_rao(0)  # weight setting is fee-free here

    async def estimate_weight(self, call: Any, keypair: Any) -> dict:
        return {"ref_time": 0, "proof_size": 0}

    async def account_next_index(self, address: str) -> int:
        self._answer()
        return sum(1 for e in self.extrinsics if e["signer"] == address)

    async def mev_next_key(self) -> bytes | None:
        return None

    async def submit(
        self,
        call: Any,
        keypair: Any,
        *,
        nonce: int | None = None,
        period: int | None = None,
        wait_for_inclusion: bool = True,
        wait_for_finalization: bool = True,
    ) -> bt.ExtrinsicResult:
        self._answer()
        # signed by the SDK's own builder, then decoded and verified as a node's pool does (chain.testing.extrinsics)
        expected = await self.account_next_index(keypair.ss58_address)
        birth = era_birth(self.block)
        data = await sign(self.codec, call, keypair, nonce=expected if nonce is None else nonce, block=self.block,
                          era_block_hash=await self.block_hash(birth))  # fmt: skip
        try:
            got = receive(self.codec, data, expected_nonce=expected, head=self.block, block_hash=self._hash)
        except InvalidTransaction as exc:
            return bt.ExtrinsicResult(
                success=False, message=f"Invalid Transaction: {exc}", error=bt.ChainError(str(exc))
            )
        signer, module, function, params = got.signer, got.module, got.function, got.params
        self.advance()  # included in the next block
        handler = {
            "set_mechanism_weights": self._set_weights,
            "commit_timelocked_mechanism_weights": self._commit_weights,
        }.get(function)
        error = f"the in-memory chain does not run {module}.{function}" if handler is None else handler(signer, params)
        index = 1 + sum(1 for e in self.extrinsics if e["block"] == self.block)
        extrinsic_id = f"{self.block}-{index:04d}"
        block_hash = await self.block_hash(self.block)
        if error is None:
            result = bt.ExtrinsicResult(
                success=True,
                message="Success",
                block_hash=block_hash,
                extrinsic_id=extrinsic_id,
                fee=bt.Balance.from_rao(0),
            )
        else:
            message = _ERROR_DOCS.get(error, error)
            result = bt.ExtrinsicResult(
                success=False,
                message=message,
                block_hash=block_hash,
                extrinsic_id=extrinsic_id,
                error=bt.ChainError(message, error),
            )
        self.extrinsics.append(
            {
                "signer": signer,
                "module": module,
                "function": function,
                "params": params,
                "block": self.block,
                "success": result.success,
                "error": error,
            }
        )
        return result

    def _weights_call(self, signer: str, params: dict[str, Any]) -> tuple[FakeSubnet | None, int | None, str | None]:
        subnet = self._subnet(params["netuid"])
        if subnet is None or int(params["mecid"]) != 0:
            return None, None, "MechanismDoesNotExist"
        uid = subnet.uid_of(signer)
        if uid is None:
            return subnet, None, "HotKeyNotRegisteredInSubNet"
        return subnet, uid, None

    def _set_weights(self, signer: str, params: dict[str, Any]) -> str | None:
        subnet, uid, error = self._weights_call(signer, params)
        return error or subnet.set_weights(uid, self.block, params)

    def _commit_weights(self, signer: str, params: dict[str, Any]) -> str | None:
        subnet, uid, error = self._weights_call(signer, params)
        return error or subnet.commit_weights(uid, signer, self.block, params)

    # --- the rest of the protocol: not needed by weight setting or the metagraph ----------------------------

    def _absent(self, name: str) -> NotImplementedError:
        return NotImplementedError(f"the in-memory chain does not implement Substrate.{name}")

    async def sign_extrinsic(self, call, keypair, *, nonce: int, period: int):
        raise self._absent("sign_extrinsic")

    async def find_extrinsic(self, extrinsic_hash: str, block_hash: str):
        raise self._absent("find_extrinsic")

    async def prepare(self, call, **kwargs):
        raise self._absent("prepare")

    async def submit_signature(self, unsigned, signature, **kwargs):
        raise self._absent("submit_signature")

    async def submit_signed(self, extrinsic, keypair, **kwargs):
        raise self._absent("submit_signed")

    def multisig_account(self, signatories: list[str], threshold: int):
        raise self._absent("multisig_account")

    async def submit_multisig(self, call, keypair, multisig_account, **kwargs):
        raise self._absent("submit_multisig")


def chain_for(
    substrate: InMemorySubstrate, netuid: int, hotkey_uri: str, *, timeout_s: float = 30.0, mechid: int = 0
) -> BittensorChain:
    """Our chain edge over the in-memory chain, signing with the dev key ``hotkey_uri`` (``//Alice``)."""
    return open_chain("local", netuid, hotkey_uri=hotkey_uri, substrate=substrate, timeout_s=timeout_s, mechid=mechid)
