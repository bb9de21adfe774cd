"""The values that cross the chain edge: a metagraph snapshot in, weight submissions out (frozen, no SDK types).

``MetagraphSnapshot`` is what the rest of the program knows about a subnet at
one block: its neurons (uid, hotkey, coldkey, served axon, permit, stake, last
weight update), its tempo and the hyperparameters that govern weight setting.
``SubmissionPlan`` is the SDK's dry run of a weight submission and
``Submission`` the record of one that was attempted (stored by the daemon,
shown in the report). Nothing here imports the SDK: these types work without
the ``chain`` extra installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

U16_MAX = 65535

Method = Literal["set", "commit"]


@dataclass(frozen=True)
class Neuron:
    """One uid of a subnet at the snapshot's block."""

    uid: int
    hotkey: str  # ss58
    coldkey: str  # ss58: the entity that owns the hotkey (one voice, one payout per coldkey)
    axon: str | None  # "ip:port" ("[v6]:port") when the neuron serves an axon, else None
    validator_permit: bool
    stake: float  # total stake in the subnet's own units (alpha)
    last_update: int  # block of the neuron's last weight update (0: never)
    block_at_registration: int = 0
    active: bool = True
    # the neuron's standing after the last epoch (what Yuma Consensus made of its weights and its miners' work)
    validator_trust: float = 0.0  # vtrust, 0..1: how much of its weight survived the consensus clip
    dividends: float = 0.0  # 0..1 share of the subnet's validator dividends
    incentive: float = 0.0  # 0..1 share of the subnet's miner incentive
    emission: float = 0.0  # alpha emitted to it in the last epoch

    @property
    def url(self) -> str | None:
        """``http://ip:port``: where a miner serving an axon answers (None when nothing is served)."""
        return f"http://{self.axon}" if self.axon else None


@dataclass(frozen=True)
class Hyperparameters:
    """The subnet settings that decide how (and how often) weights may be set."""

    weights_rate_limit: int  # blocks between two weight updates of one hotkey (the chain refuses faster)
    min_allowed_weights: int  # fewest nonzero weights a submission may carry (a lone self-weight is exempt)
    max_weight_limit: int  # largest share of one uid, in u16 of the total (65535: no cap)
    weights_version: int  # the version key a submission must carry (at least)
    commit_reveal: bool  # weights are committed timelocked and revealed by the chain (CRv4), not set in clear
    activity_cutoff: int = 0  # blocks without a weight update after which a validator counts as inactive (0: unknown)
    reveal_period: int = 1  # epochs after its commit's epoch that the chain reveals a commit-reveal vector

    @property
    def max_weight_share(self) -> float:
        """``max_weight_limit`` as a fraction of the total (1.0: no cap)."""
        return self.max_weight_limit / U16_MAX


@dataclass(frozen=True)
class MetagraphSnapshot:
    """A subnet at one block: its neurons ordered by uid, its tempo and its weight-setting hyperparameters."""

    netuid: int
    block: int
    tempo: int  # blocks per epoch
    neurons: tuple[Neuron, ...]
    hyperparameters: Hyperparameters
    owner_hotkey: str = ""  # the subnet owner's hotkey: subtensor lets it set weights without a permit or stake

    def __post_init__(self) -> None:
        uids = [n.uid for n in self.neurons]
        if uids != sorted(set(uids)):
            raise ValueError(f"neurons must be ordered by uid, each once (got {uids})")
        hotkeys = [n.hotkey for n in self.neurons]
        if len(set(hotkeys)) != len(hotkeys):
            raise ValueError("a hotkey holds at most one uid of a subnet")

    def by_hotkey(self, hotkey: str) -> Neuron | None:
        return next((n for n in self.neurons if n.hotkey == hotkey), None)

    def may_set_weights(self, hotkey: str) -> bool:
        """Can ``hotkey`` set weights on other uids? A validator permit, or the subnet's owner (subtensor's
        ``check_validator_permit``)."""
        me = self.by_hotkey(hotkey)
        return me is not None and (me.validator_permit or hotkey == self.owner_hotkey)

    def served(self, *, exclude: str | None = None) -> tuple[Neuron, ...]:
        """The neurons that serve an axon, ordered by uid, without the hotkey ``exclude`` (the validator itself)."""
        return tuple(n for n in self.neurons if n.axon and n.hotkey != exclude)


@dataclass(frozen=True)
class SubmissionPlan:
    """The SDK's dry run of one weight submission (``client.plan``): nothing was signed or sent.

    ``uids``/``weights_u16`` are what the chain would receive. ``method`` is the
    path the SDK chose from the subnet's settings: a plain ``set`` or a
    timelocked ``commit`` (commit-reveal). ``violations`` are the SDK's hard
    stops (the submission would be refused).
    """

    netuid: int
    block: int
    signer: str  # the hotkey that would sign (ss58)
    method: Method
    uids: tuple[int, ...]
    weights_u16: tuple[int, ...]
    version_key: int
    fee_tao: float | None
    effects: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    violations: tuple[str, ...] = ()
    reveal_round: int | None = None  # drand round the chain reveals a commit at

    @property
    def ok(self) -> bool:
        return not self.violations


SUBMISSION_SCHEMA = "consensus-validator/chain-submission/1"


def fields_json(record: Any) -> dict[str, Any]:
    """A record's fields in declaration order, tuples as lists: the stored form of a record whose keys are its
    field names (``Submission``, ``validator.daemon.chain.attempts.WeightsAttempt``)."""
    values = {f.name: getattr(record, f.name) for f in fields(record)}
    return {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}


ErrorKind = Literal["rejected", "transient", "permanent"]


@dataclass(frozen=True)
class Submission:
    """The record of one attempted weight submission, stored whether it landed or not.

    ``block`` is the block the extrinsic was included in when it landed, else
    the chain head seen when it was attempted (None: the chain did not answer).
    ``extrinsic`` is the SDK's identifier of the included extrinsic,
    ``"<block>-<index>"`` (the 11.x result carries no extrinsic hash), and
    ``block_hash`` the including block's hash. A failed attempt carries the
    reason in ``error`` and its class in ``error_kind``: ``rejected`` (the chain
    refused it: too fast, wrong version key...), ``transient`` (no answer) or
    ``permanent`` (not registered, no permit, wrong wallet).
    """

    netuid: int
    block: int | None
    signer: str
    method: Method
    uids: tuple[int, ...]
    weights_u16: tuple[int, ...]
    version_key: int
    ok: bool
    extrinsic: str | None = None
    block_hash: str | None = None
    reveal_round: int | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None

    def __post_init__(self) -> None:
        if self.method not in ("set", "commit"):
            raise ValueError(f"method must be 'set' or 'commit', got {self.method!r}")
        if self.error_kind not in (None, "rejected", "transient", "permanent"):
            raise ValueError(f"unknown error kind {self.error_kind!r}")
        if len(self.uids) != len(self.weights_u16):
            raise ValueError(f"{len(self.uids)} uids but {len(self.weights_u16)} weights")
        if self.ok != (self.error is None):
            raise ValueError("a submission that landed has no error, and one that failed has one")

    def to_json(self) -> dict[str, Any]:
        return {"schema": SUBMISSION_SCHEMA, **fields_json(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Submission:
        if not isinstance(data, Mapping) or data.get("schema") != SUBMISSION_SCHEMA:
            raise ValueError(f"not a submission record (expected schema {SUBMISSION_SCHEMA!r})")
        try:
            return cls(
                netuid=int(data["netuid"]),
                block=None if data["block"] is None else int(data["block"]),
                signer=str(data["signer"]),
                method=data["method"],
                uids=tuple(int(u) for u in data["uids"]),
                weights_u16=tuple(int(w) for w in data["weights_u16"]),
                version_key=int(data["version_key"]),
                ok=bool(data["ok"]),
                extrinsic=data.get("extrinsic"),
                block_hash=data.get("block_hash"),
                reveal_round=data.get("reveal_round"),
                error=data.get("error"),
                error_kind=data.get("error_kind"),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed submission record: {exc}") from exc
