"""The edge: the only module that imports the Bittensor SDK (``pip install 'consensus-validator[chain]'``).

Written against ``bittensor==11.3.0`` (the lean rewrite: ``bt.Client``,
typed reads, intents; no axon, dendrite or MockSubtensor).
``BittensorChain`` implements ``chain.base.Chain`` over a ``bt.Client``:

- ``snapshot()``: ``client.subnets.metagraph(netuid)`` (the SDK's own decoding
  of the ``get_metagraph`` runtime call) and the weight-setting
  hyperparameters, all read at one block, as a ``MetagraphSnapshot``;
- ``plan(vector)`` / ``submit(vector)``: ``client.plan`` / ``client.execute`` of
  ``bt.SetWeights``, which conforms the weights to the subnet (the same steps as
  ``chain.weights.sdk_conform``), preflights registration and the rate limit,
  and chooses a plain set or a timelocked commit-reveal (CRv4) from the
  subnet's settings.

The SDK is async; the daemon is not. Each call runs on a private event loop in
a background thread, bounded by a timeout. SDK errors are translated at this
boundary into ``chain.errors`` (transient: no answer; permanent: not
registered, no permit, wrong wallet, unknown subnet); a submission the chain
refuses comes back as a failed ``Submission``. After a transient error the
client is dropped and the next call connects again. Pass ``substrate=`` (for
example ``chain.testing.InMemorySubstrate``) to run everything offline.

The connection and its event loop are ``chain.sdk_client.SdkClient`` (the base
class); the hotkey that signs comes from ``chain.sdk_wallet.hotkey_source``, the
one place keys are made. These three modules are the SDK's importers (with
``chain/testing/substrate.py``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from chain.base import check_network
from chain.errors import PermanentChainError, TransientChainError, WeightsError, sdk_not_installed
from chain.sdk_client import SdkClient
from chain.sdk_wallet import hotkey_source
from chain.types import Hyperparameters, MetagraphSnapshot, Neuron, Submission, SubmissionPlan
from chain.weights import WeightVector

try:
    import bittensor as bt
    import bittensor_core
    from bittensor.intents.weights import SetWeights
except ImportError as exc:  # pragma: no cover - exercised by tests/chain/test_boundaries.py in a subprocess
    raise sdk_not_installed() from exc

SDK_VERSION = "11.3.0"  # what this module is written against (pyproject's `chain` extra pins it)

# the SDK's error codes (bittensor.ErrorCode) by what they mean for the daemon
_PERMANENT_CODES = {"not_registered": "not registered", "not_authorized": "no validator permit"}
_PERMANENT_NAMES = {
    "HotKeyNotRegisteredInSubNet": "not registered",
    "NotRegistered": "not registered",
    "NeuronNoValidatorPermit": "no validator permit",
    "NotEnoughStakeToSetWeights": "not enough stake",
}
_REJECTED_CODES = {"rate_limited", "invalid_argument", "limit_exceeded", "policy_violation"}


class BittensorChain(SdkClient):
    """``chain.base.Chain`` over the Bittensor SDK, for one subnet and one validator hotkey (module docstring)."""

    def __repr__(self) -> str:  # never the keypair
        return f"BittensorChain(network={self.network!r}, netuid={self.netuid}, hotkey={self._hotkey!r})"

    def __enter__(self) -> BittensorChain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reads ----------------------------------------------------------------------------------------------

    def snapshot(self) -> MetagraphSnapshot:
        return self._run(self._snapshot, f"reading the metagraph of netuid {self.netuid}", self.timeout_s)

    async def _snapshot(self) -> MetagraphSnapshot:
        client = await self._connected()
        view = await client.at()  # every read below at one block
        try:
            graph = await view.subnets.metagraph(self.netuid, commitments=False)
        except bt.ChainError as exc:
            raise TransientChainError(f"reading the metagraph: {exc}") from exc
        if graph is None:
            raise PermanentChainError(
                f"netuid {self.netuid} does not exist on {self.network}",
                kind="unknown subnet",
                hint="check --netuid and --network",
            )
        hp = view.hyperparameters
        st = bt.storage.SubtensorModule
        rate, min_w, max_w, version, cr, cutoff, vtrust, reveal = await asyncio.gather(
            hp.weights_rate_limit(self.netuid),
            hp.min_allowed_weights(self.netuid),
            hp.max_weight_limit(self.netuid),
            view.query(st.WeightsVersionKey, [self.netuid]),
            view.subnets.commit_reveal_enabled(self.netuid),
            view.query(st.ActivityCutoff, [self.netuid]),
            view.query(st.ValidatorTrust, [self.netuid]),  # not in the runtime's metagraph record: PerU16 per uid
            view.query(st.RevealPeriodEpochs, [self.netuid]),
        )
        vtrust = list(vtrust or [])
        neurons = tuple(
            Neuron(
                uid=n.uid,
                hotkey=n.hotkey,
                coldkey=n.coldkey,
                axon=n.axon,
                validator_permit=n.validator_permit,
                stake=float(n.total_stake.alpha),
                last_update=n.last_update,
                block_at_registration=n.block_at_registration,
                active=n.active,
                validator_trust=_per_u16(vtrust[n.uid]) if n.uid < len(vtrust) else 0.0,
                dividends=float(n.dividends),
                incentive=float(n.incentive),
                emission=float(n.emission.alpha),
            )
            for n in graph.neurons
        )
        return MetagraphSnapshot(
            netuid=self.netuid,
            block=graph.block,
            tempo=graph.tempo,
            owner_hotkey=str(graph.owner_hotkey or ""),
            neurons=neurons,
            hyperparameters=Hyperparameters(
                weights_rate_limit=int(rate),
                min_allowed_weights=int(min_w),
                max_weight_limit=int(max_w),
                weights_version=int(version or 0),
                commit_reveal=bool(cr),
                activity_cutoff=int(cutoff or 0),
                reveal_period=int(reveal or 1),
            ),
        )

    def weights_row(self, uid: int) -> tuple[tuple[int, int], ...]:
        """The weights on chain of ``uid`` on this mechanism (``Weights``: (dest uid, u16), max-upscaled)."""

        async def go() -> tuple[tuple[int, int], ...]:
            client = await self._connected()
            index = self.mechid * 4096 + self.netuid  # subtensor's NetUidStorageIndex (GLOBAL_MAX_SUBNET_COUNT)
            row = await client.query(bt.storage.SubtensorModule.Weights, [index, uid])
            return tuple((int(dest), int(w)) for dest, w in (row or ()))

        return self._run(go, "reading the weights on chain", self.timeout_s)

    def genesis_hash(self) -> str:
        async def go() -> str:
            client = await self._connected()
            return str(await client._block_hash(0))  # the SDK's one reader of a block's hash (Substrate.block_hash)

        return self._run(go, "reading the genesis hash", self.timeout_s)

    # --- weights --------------------------------------------------------------------------------------------

    def _intent(self, vector: WeightVector) -> Any:
        if vector.netuid != self.netuid:
            raise ValueError(f"the vector is for netuid {vector.netuid}, this chain edge for {self.netuid}")
        if vector.self_hotkey != self._hotkey:
            raise ValueError("the vector was built for another validator hotkey")
        if vector.kind == "empty" or not vector.chain_uids:
            raise WeightsError("nothing to submit: no registered miner has weight in the ledger")
        return SetWeights(
            netuid=self.netuid,
            uids=list(vector.uids),
            weights=list(vector.raw),
            version_key=vector.version_key,
            mechid=self.mechid,
        )

    def plan(self, vector: WeightVector) -> SubmissionPlan:
        intent = self._intent(vector)
        public = bittensor_core.Keypair(ss58_address=self._hotkey)  # a dry run needs no private key

        async def go() -> SubmissionPlan:
            client = await self._connected()
            try:
                plan = await client.plan(intent, public)
            except bt.ChainError as exc:
                classified = self._classified(exc)
                if not isinstance(classified, WeightsError):
                    raise classified from exc
                # the SDK's preflight refuses it for now (rate limit, too few weights): a plan with that violation
                return SubmissionPlan(
                    netuid=self.netuid,
                    block=vector.block,
                    signer=self._hotkey,
                    method="commit" if vector.commit_reveal else "set",
                    uids=vector.chain_uids,
                    weights_u16=vector.chain_u16,
                    version_key=vector.version_key,
                    fee_tao=None,
                    violations=(str(exc),),
                )
            except bt.BittensorError as exc:
                raise WeightsError(str(exc)) from exc
            call = plan.call
            uids, u16 = vector.chain_uids, vector.chain_u16
            if getattr(call, "function", None) == "set_mechanism_weights":  # a readable call: the SDK's own values
                uids, u16 = tuple(call.params["dests"]), tuple(call.params["weights"])
            return SubmissionPlan(
                netuid=self.netuid,
                block=vector.block,
                signer=plan.signer_address or self._hotkey,
                method="commit" if "reveal_round" in plan.extras else "set",
                uids=tuple(uids),
                weights_u16=tuple(u16),
                version_key=vector.version_key,
                fee_tao=float(plan.fee.tao) if plan.fee is not None else None,
                effects=tuple(plan.effects),
                warnings=tuple(plan.warnings),
                violations=tuple(plan.violations),
                reveal_round=plan.extras.get("reveal_round"),
            )

        return self._run(go, "planning the weight submission", self.timeout_s)

    def _signing_key(self) -> Any:
        if self._signer is None:
            self._signer = self._signer_factory()  # chain.sdk_wallet: its errors are already "wrong wallet"
            if self._signer.ss58_address != self._hotkey:
                raise PermanentChainError(
                    "the hotkey's private key does not match its public file",
                    kind="wrong wallet",
                    hint="regenerate the wallet's hotkeypub",
                )
        return self._signer

    def signer(self) -> Any:
        """The validator's hotkey keypair (Epistula requests are signed with it): unlocked now, once."""
        return self._signing_key()

    def _classified(self, exc: Any) -> Exception:
        """An SDK ``ChainError`` raised before anything was sent, as the daemon must treat it."""
        code = getattr(getattr(exc, "code", None), "value", None)
        kind = _PERMANENT_NAMES.get(getattr(exc, "name", None) or "") or _PERMANENT_CODES.get(code or "")
        if kind is not None:
            return PermanentChainError(
                f"{self._hotkey} on netuid {self.netuid}: {exc}",
                kind=kind,
                hint="register the hotkey and stake to it, or use the right wallet",
            )
        if code in _REJECTED_CODES:
            return WeightsError(str(exc))
        return TransientChainError(str(exc))

    def submit(self, vector: WeightVector) -> Submission:
        intent = self._intent(vector)
        if vector.self_uid is None:
            raise PermanentChainError(
                f"hotkey {self._hotkey} is not registered on netuid {self.netuid}",
                kind="not registered",
                hint="register it, or use the right wallet",
            )
        if not vector.validator_permit and vector.chain_uids != (vector.self_uid,):  # a self-weight needs none
            raise PermanentChainError(
                f"hotkey {self._hotkey} (uid {vector.self_uid}) has no validator permit on netuid {self.netuid}",
                kind="no validator permit",
                hint="permits go to the top validators by stake; stake more to it",
            )
        signer = self._signing_key()
        method = "commit" if vector.commit_reveal else "set"
        record = dict(
            netuid=self.netuid,
            signer=self._hotkey,
            uids=vector.chain_uids,
            weights_u16=vector.chain_u16,
            version_key=vector.version_key,
        )

        async def go() -> Submission:
            client = await self._connected()
            try:
                # inclusion is enough (finality adds blocks of waiting); the SDK resubmits pool races itself
                result = await client.execute(
                    intent, signer, wait_for_inclusion=True, wait_for_finalization=False, retries=2
                )
            except bt.ChainError as exc:
                classified = self._classified(exc)
                if isinstance(classified, WeightsError):  # refused before sending (rate limit, too few weights)
                    return Submission(
                        block=vector.block, method=method, ok=False, error=str(exc), error_kind="rejected", **record
                    )
                raise classified from exc
            except bt.PolicyError as exc:
                return Submission(
                    block=vector.block, method=method, ok=False, error=str(exc), error_kind="rejected", **record
                )
            landed_method = "commit" if "reveal_round" in result.data else method
            if result.success:
                block = int(result.extrinsic_id.split("-")[0]) if result.extrinsic_id else vector.block
                return Submission(
                    block=block,
                    method=landed_method,
                    ok=True,
                    extrinsic=result.extrinsic_id,
                    block_hash=result.block_hash,
                    reveal_round=result.data.get("reveal_round"),
                    **record,
                )
            error = result.error
            failed = Submission(
                block=vector.block,
                method=landed_method,
                ok=False,
                extrinsic=result.extrinsic_id,
                block_hash=result.block_hash,
                error=result.message or "refused",
                error_kind="rejected",
                **record,
            )
            kind = _PERMANENT_NAMES.get(getattr(error, "name", None) or "")
            if kind is not None:
                raise PermanentChainError(
                    f"{self._hotkey} on netuid {self.netuid}: {result.message}",
                    kind=kind,
                    hint="register the hotkey, stake to it, or use the right wallet",
                    submission=replace(failed, error_kind="permanent"),
                )
            return failed

        # after a timeout the extrinsic may still land: the next attempt's rate-limit check then refuses a double
        return self._run(go, "submitting weights", self.submit_timeout_s)


def _per_u16(raw: Any) -> float:
    """A ``PerU16`` storage value as a fraction (the node's codec gives the u16; a decoded fraction is kept)."""
    return raw / 65535 if isinstance(raw, int) else float(raw)


def open_chain(
    network: str,
    netuid: int,
    *,
    wallet: str = "default",
    hotkey: str = "default",
    wallet_path: str | None = None,
    hotkey_uri: str | None = None,
    substrate: Any = None,
    timeout_s: float = 60.0,
    mechid: int = 0,
) -> BittensorChain:
    """The chain edge for a validator hotkey: from a wallet on disk, or from a secret URI (dev chains, tests).

    The hotkey's public file is read now (a missing wallet stops here, with
    ``PermanentChainError``); its private key only at the first submission
    (or ``signer()``). A submission may take three times ``timeout_s``.
    """
    check_network(network)
    key = hotkey_source(wallet=wallet, hotkey=hotkey, wallet_path=wallet_path, hotkey_uri=hotkey_uri)
    return BittensorChain(
        network,
        netuid,
        hotkey=key.address,
        signer=key.unlock,
        substrate=substrate,
        timeout_s=timeout_s,
        submit_timeout_s=3 * timeout_s,
        mechid=mechid,
    )
