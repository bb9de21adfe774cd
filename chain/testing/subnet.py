"""The state of the in-memory chain's subnets, and subtensor's weight rules applied to it (no SDK, no project rule).

``FakeSubnet`` holds one subnet (its neurons by uid, its weight-setting
hyperparameters under the chain's names, the weights set and the commits
made). ``set_weights`` and ``commit_weights`` are subtensor's own checks,
written from its Rust source in the order it runs them
(``pallets/subtensor/src/subnets/weights.rs``: ``internal_set_weights`` and
``internal_commit_timelocked_weights``, their helpers named beside each
check), with its fixed-point arithmetic (``pallets/subtensor/src/epoch/math.rs``:
``vec_u16_max_upscale_to_u16``, ``check_vec_max_limited``, I32F32 numbers
emulated on integers). Nothing here imports the project's weight code, so a
wrong rule of ours cannot agree with itself. ``chain.testing.substrate``
serves this state to the SDK.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

U16_MAX = 65535
FRAC = 32  # I32F32: 32 fractional bits
RAO_PER_ALPHA = 10**9
COMMIT_REVEAL_VERSION = 4  # lib.rs DefaultCommitRevealWeightsVersion
MAX_UNREVEALED_COMMITS = 10  # weights.rs internal_commit_timelocked_weights, step 7


def _fixed(value: int) -> int:
    """I32F32::saturating_from_num of an integer, as raw bits."""
    return value << FRAC


def _div(a: int, b: int) -> int:
    """I32F32 ``a.safe_div(b)`` on raw bits (non-negative operands: truncated; 0 when ``b`` is 0)."""
    return 0 if b == 0 else (a << FRAC) // b


def _mul(a: int, b: int) -> int:
    return (a * b) >> FRAC


def _round_to_int(bits: int) -> int:
    """``.round().saturating_to_num::<u16>()`` of a non-negative I32F32 (ties away from zero)."""
    return min((bits + (1 << (FRAC - 1))) >> FRAC, U16_MAX)


def vec_u16_max_upscale_to_u16(values: list[int]) -> list[int]:
    """math.rs ``vec_u16_max_upscale_to_u16`` -> ``vec_max_upscale_to_u16``: the largest becomes 65535."""
    vec = [_fixed(v) for v in values]
    if not vec:
        return []
    top = max(vec)
    u16_max, threshold = _fixed(U16_MAX), _fixed(32768)
    if top == 0:
        return [min(_mul(e, u16_max) >> FRAC, U16_MAX) for e in vec]
    if top > threshold:
        ratio = _div(u16_max, top)
        return [_round_to_int(_mul(e, ratio)) for e in vec]
    return [_round_to_int(_div(_mul(e, u16_max), top)) for e in vec]


def check_vec_max_limited(values: list[int], max_limit: int) -> bool:
    """math.rs ``check_vec_max_limited``: normalised to sum 1 (``inplace_normalize``), the largest is at most
    ``max_limit / 65535``, all in I32F32."""
    limit = _div(_fixed(max_limit), _fixed(U16_MAX))
    vec = [_fixed(v) for v in values]
    total = sum(vec)
    if total != 0:
        vec = [_div(v, total) for v in vec]
    return not vec or max(vec) <= limit


@dataclass
class FakeNeuron:
    """One registered uid."""

    hotkey: str
    coldkey: str
    axon: str | None = None  # "ip:port" served (IPv4 or "[v6]:port"), None: nothing served
    stake: float = 0.0  # alpha staked to the hotkey
    validator_permit: bool = False
    block_at_registration: int = 0
    last_update: int = 0  # LastUpdate: a set, or (subtensor >= CRv4) a timelocked commit
    # what the last epoch made of it (set by a test: this chain runs no Yuma Consensus)
    validator_trust: float = 0.0  # ValidatorTrust (PerU16 on chain)
    dividends: float = 0.0  # Dividends (PerU16)
    incentive: float = 0.0  # Incentive (PerU16)
    emission: float = 0.0  # Emission (alpha; rao on chain)


@dataclass
class FakeSubnet:
    """One subnet's state and its weight-setting hyperparameters (the chain's names)."""

    netuid: int
    owner_hotkey: str
    owner_coldkey: str
    tempo: int = 360
    weights_rate_limit: int = 100  # WeightsSetRateLimit
    min_allowed_weights: int = 1  # MinAllowedWeights
    max_weight_limit: int = U16_MAX  # MaxWeightsLimit
    weights_version: int = 0  # WeightsVersionKey
    commit_reveal: bool = False  # CommitRevealWeightsEnabled
    reveal_period: int = 1  # RevealPeriodEpochs
    activity_cutoff: int = 5000  # ActivityCutoff
    epoch_consensus: str = "Yuma"  # SubnetEpochConsensus: "Null" lets only the sole permit holder set weights
    stake_threshold: float = 0.0  # StakeThreshold (alpha here): the least stake that may set weights
    max_uids: int = 256
    registered_at: int = 0
    last_epoch_block: int = 0
    epoch_index: int = 0
    name: str = "test subnet"
    symbol: str = "\u03b1"
    neurons: list[FakeNeuron] = field(default_factory=list)  # index = uid
    weights: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # uid -> [(dest, u16)], max-upscaled
    commits: list[dict[str, Any]] = field(default_factory=list)  # timelocked commits, in order

    def uid_of(self, hotkey: str) -> int | None:
        return next((uid for uid, n in enumerate(self.neurons) if n.hotkey == hotkey), None)

    # --- weights.rs helpers, one for one ----------------------------------------------------------------------

    def _owner_uid(self) -> int | None:  # utils/misc.rs get_owner_uid: SubnetOwnerHotkey's uid
        return self.uid_of(self.owner_hotkey)

    @staticmethod
    def is_self_weight(uid: int, uids: list[int], weights: list[int]) -> bool:
        return len(weights) == 1 and bool(uids) and uids[0] == uid

    def check_len_uids_within_allowed(self, uids: list[int]) -> bool:
        return len(uids) <= len(self.neurons)  # at most subnetwork_n uids

    def check_weights_min_stake(self, uid: int) -> bool:  # lib.rs: the owner may set weights whatever its stake
        return uid == self._owner_uid() or self.neurons[uid].stake >= self.stake_threshold

    def check_version_key(self, version_key: int) -> bool:
        return self.weights_version == 0 or version_key >= self.weights_version

    def check_rate_limit(self, uid: int, block: int) -> bool:
        last = self.neurons[uid].last_update
        return last == 0 or block - last >= self.weights_rate_limit  # 0: never set (the storage default)

    def check_validator_permit(self, uid: int, uids: list[int], weights: list[int]) -> bool:
        if self.is_self_weight(uid, uids, weights) or uid == self._owner_uid():
            return True
        return self.neurons[uid].validator_permit

    def contains_invalid_uids(self, uids: list[int]) -> bool:
        return any(not 0 <= u < len(self.neurons) for u in uids)

    def check_length(self, uid: int, uids: list[int], weights: list[int]) -> bool:
        # min(subnet_n, min_allowed_weights): a subnet smaller than the minimum needs only its size
        min_allowed = min(len(self.neurons), self.min_allowed_weights)
        return self.is_self_weight(uid, uids, weights) or len(weights) >= min_allowed

    def max_weight_limited(self, uid: int, uids: list[int], weights: list[int]) -> bool:
        if self.is_self_weight(uid, uids, weights) or self.max_weight_limit == U16_MAX:
            return True
        return check_vec_max_limited(weights, self.max_weight_limit)

    # --- the extrinsics -----------------------------------------------------------------------------------------

    def set_weights(self, uid: int, block: int, params: dict[str, Any]) -> str | None:
        """dispatches.rs ``set_mechanism_weights`` -> weights.rs ``internal_set_weights`` by ``uid`` at ``block``
        (None: applied, else the chain error's name). Registration and the mechanism are checked by the caller."""
        if self.commit_reveal:  # dispatches.rs set_mechanism_weights
            return "CommitRevealEnabled"
        uids, values = [int(d) for d in params["dests"]], [int(w) for w in params["weights"]]
        if len(uids) != len(values):  # 2. uids_match_values
            return "WeightVecNotEqualSize"
        if not self.check_len_uids_within_allowed(uids):  # 4.
            return "UidsLengthExceedUidsInSubNet"
        if not self.check_weights_min_stake(uid):  # 6.
            return "NotEnoughStakeToSetWeights"
        if not self.check_version_key(int(params["version_key"])):  # 7.
            return "IncorrectWeightVersionKey"
        if not self.check_rate_limit(uid, block):  # 9. (commit-reveal off)
            return "SettingWeightsTooFast"
        if not self.check_validator_permit(uid, uids, values):  # 10.
            return "NeuronNoValidatorPermit"
        if len(set(uids)) != len(uids):  # 11. has_duplicate_uids
            return "DuplicateUids"
        if self.contains_invalid_uids(uids):  # 12.
            return "UidVecContainInvalidOne"
        if not self.check_length(uid, uids, values):  # 13.
            return "WeightVecLengthIsLow"
        upscaled = vec_u16_max_upscale_to_u16(values)  # 14.
        if not self.max_weight_limited(uid, uids, upscaled):  # 15.
            return "MaxWeightExceeded"
        self.weights[uid] = list(zip(uids, upscaled))  # 17.
        self.neurons[uid].last_update = block  # 18.
        return None

    def commit_weights(self, uid: int, hotkey: str, block: int, params: dict[str, Any]) -> str | None:
        """weights.rs ``internal_commit_timelocked_weights``: kept as committed (the chain reveals it at the drand
        round); the commit moves ``LastUpdate`` (step 10), so the rate limit counts from it."""
        if not self.commit_reveal:  # 2.
            return "CommitRevealDisabled"
        if int(params["commit_reveal_version"]) != COMMIT_REVEAL_VERSION:  # 3.
            return "IncorrectCommitRevealVersion"
        if not self.check_rate_limit(uid, block):  # 5.
            return "CommittingWeightsTooFast"
        pending = [c for c in self.commits if c["uid"] == uid and c["epoch"] == self.epoch_index]
        if len(pending) >= MAX_UNREVEALED_COMMITS:  # 7.
            return "TooManyUnrevealedCommits"
        self.commits.append(
            {
                "uid": uid,
                "hotkey": hotkey,
                "block": block,
                "epoch": self.epoch_index,
                "commit": _commit_bytes(params["commit"]),
                "reveal_round": int(params["reveal_round"]),
                "commit_reveal_version": int(params["commit_reveal_version"]),
            }
        )
        self.neurons[uid].last_update = block  # 10.
        return None


def _commit_bytes(value: Any) -> bytes:
    """A decoded ``BoundedVec<u8>``: the codec gives bytes back as ``0x`` hex (or text when they are printable)."""
    if isinstance(value, str):
        return bytes.fromhex(value[2:]) if value.startswith("0x") else value.encode()
    return bytes(value)


def axon_value(axon: str | None, block: int) -> dict[str, int]:
    """The runtime's ``AxonInfo`` as decoded (ip as an integer, 0: not served): read by ``metagraph._axon_endpoint``."""
    if not axon:
        return {
            "block": 0,
            "version": 0,
            "ip": 0,
            "port": 0,
            "ip_type": 0,
            "protocol": 0,
            "placeholder1": 0,
            "placeholder2": 0,
        }
    host, _, port = axon.rpartition(":")
    ip = ipaddress.ip_address(host.strip("[]"))
    return {
        "block": block,
        "version": 1,
        "ip": int(ip),
        "port": int(port),
        "ip_type": ip.version,
        "protocol": 4,
        "placeholder1": 0,
        "placeholder2": 0,
    }


def per_u16(fraction: float) -> int:
    """A 0..1 score as the chain stores it (PerU16)."""
    return int(round(min(max(fraction, 0.0), 1.0) * U16_MAX))


def metagraph_record(s: FakeSubnet, block: int) -> dict[str, Any]:
    """The decoded ``get_metagraph`` record, every key ``metagraph.py:_build`` reads (columns per uid)."""
    n = s.neurons
    rao = [int(round(x.stake * RAO_PER_ALPHA)) for x in n]
    return {
        "netuid": s.netuid,
        "name": s.name,
        "symbol": s.symbol,
        "identity": None,
        "network_registered_at": s.registered_at,
        "owner_hotkey": s.owner_hotkey,
        "owner_coldkey": s.owner_coldkey,
        "block": block,
        "tempo": s.tempo,
        "last_step": s.last_epoch_block,
        "blocks_since_last_step": block - s.last_epoch_block,
        "num_uids": len(n),
        "max_uids": s.max_uids,
        "tao_in": 0,
        "alpha_in": 0,
        "moving_price": {"bits": 0},
        "hotkeys": [x.hotkey for x in n],
        "coldkeys": [x.coldkey for x in n],
        "identities": [None] * len(n),
        "axons": [axon_value(x.axon, x.block_at_registration) for x in n],
        "active": [True] * len(n),
        "validator_permit": [x.validator_permit for x in n],
        "last_update": [x.last_update for x in n],
        "block_at_registration": [x.block_at_registration for x in n],
        # PerU16 score columns (0..65535) and rao balances
        "rank": [0] * len(n),
        "trust": [0] * len(n),
        "consensus": [0] * len(n),
        "incentives": [per_u16(x.incentive) for x in n],
        "dividends": [per_u16(x.dividends) for x in n],
        "pruning_score": [0] * len(n),
        "emission": [int(round(x.emission * RAO_PER_ALPHA)) for x in n],
        "alpha_stake": rao,
        "tao_stake": [0] * len(n),
        "total_stake": rao,
    }
