"""The state of the in-memory chain's subnets, and the chain's weight-setting rules applied to it (no SDK).

``FakeSubnet`` holds one subnet (its neurons by uid, its weight-setting
hyperparameters under the chain's names, the weights set and the commits
made); ``set_weights`` and ``commit_weights`` check an extrinsic's parameters
as subtensor does (the ``set_mechanism_weights`` docstring's errors; the cap as
``check_vec_max_limited`` computes it, ``chain.weights.within_max_weight``) and
apply it, returning the chain error's name when it is refused.
``chain.testing.substrate`` serves this state to the SDK.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from chain.types import U16_MAX
from chain.weights import within_max_weight


@dataclass
class FakeNeuron:
    """One registered uid."""

    hotkey: str
    coldkey: str
    axon: str | None = None  # "ip:port" served (IPv4 or "[v6]:port"), None: nothing served
    stake: float = 0.0  # alpha staked to the hotkey
    validator_permit: bool = False
    block_at_registration: int = 0
    last_update: int = 0


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
    max_uids: int = 256
    registered_at: int = 0
    last_epoch_block: int = 0
    epoch_index: int = 0
    name: str = "test subnet"
    symbol: str = "\u03b1"
    neurons: list[FakeNeuron] = field(default_factory=list)  # index = uid
    weights: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # uid -> [(dest, u16)], max-upscaled
    commits: list[dict[str, Any]] = field(default_factory=list)  # timelocked commits, in order
    last_commit: dict[int, int] = field(default_factory=dict)  # uid -> block of its last commit

    def uid_of(self, hotkey: str) -> int | None:
        return next((uid for uid, n in enumerate(self.neurons) if n.hotkey == hotkey), None)

    def set_weights(self, uid: int, block: int, params: dict[str, Any]) -> str | None:
        """``set_mechanism_weights`` by ``uid`` at ``block``: the checks its docstring lists, then the update
        (None: applied, else the chain error's name)."""
        dests, values = list(params["dests"]), list(params["weights"])
        if len(dests) != len(values):
            return "WeightVecNotEqualSize"
        if self.commit_reveal:
            return "CommitRevealEnabled"
        if int(params["version_key"]) < self.weights_version:
            return "IncorrectWeightVersionKey"
        me = self.neurons[uid]
        if me.last_update and block - me.last_update < self.weights_rate_limit:
            return "SettingWeightsTooFast"
        self_weight = dests == [uid]
        if not self_weight and not me.validator_permit:
            return "NeuronNoValidatorPermit"
        if len(set(dests)) != len(dests):
            return "DuplicateUids"
        if any(d < 0 or d >= len(self.neurons) for d in dests):
            return "UidVecContainInvalidOne"
        if not self_weight and len(dests) < self.min_allowed_weights:
            return "WeightVecLengthIsLow"
        if not self_weight and not within_max_weight(values, self.max_weight_limit):
            return "MaxWeightExceeded"
        top = max(values) if values else 0
        self.weights[uid] = [(d, round(v * U16_MAX / top) if top else 0) for d, v in zip(dests, values)]
        me.last_update = block
        return None

    def commit_weights(self, uid: int, hotkey: str, block: int, params: dict[str, Any]) -> str | None:
        """``commit_timelocked_mechanism_weights``: kept as committed (the chain reveals it at the drand round)."""
        if not self.commit_reveal:
            return "CommitRevealDisabled"
        last = self.last_commit.get(uid)
        if last is not None and block - last < self.weights_rate_limit:
            return "CommittingWeightsTooFast"
        self.commits.append(
            {
                "uid": uid,
                "hotkey": hotkey,
                "block": block,
                "commit": bytes(params["commit"]),
                "reveal_round": int(params["reveal_round"]),
                "commit_reveal_version": int(params["commit_reveal_version"]),
            }
        )
        self.last_commit[uid] = block
        return None


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
