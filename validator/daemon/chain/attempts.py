"""The record of one weight submission (or plan) of the daemon in chain mode, and its one writer and reader.

Every time weights are due the daemon builds the vector from the ledger
(``chain.weights.weight_vector``) and either submits it (``--set-weights``)
or only plans it (the SDK's dry run). Either way a ``WeightsAttempt`` is
stored under ``storage.keys.weights_attempt`` (``chain/<netuid>/weights/``):
the block, the uids, hotkeys, shares and u16 weights, the vector's kind, the
subnet's objections (``problems``), the SDK's plan or the ``Submission``
(set or commit, extrinsic id or error). The report lists them
(``validator.report``) and ``validator weights show`` reads the last one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from chain.types import Submission, SubmissionPlan, fields_json
from storage import keys
from storage.base import KeyNotFound, Store, StoreError
from storage.codec import dumps
from validator.records.reader import RoundReader

if TYPE_CHECKING:
    from chain.weights import WeightVector

log = logging.getLogger(__name__)

SCHEMA = "consensus-validator/weights-attempt/1"
Mode = Literal["submit", "plan"]


def attempt_id(at: float, block: int) -> str:
    """An id that sorts in time order: the UTC time to the microsecond, then the block."""
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ") + f"-b{block}"


def plan_to_json(plan: SubmissionPlan) -> dict[str, Any]:
    return {
        "method": plan.method,
        "block": plan.block,
        "signer": plan.signer,
        "uids": list(plan.uids),
        "weights_u16": list(plan.weights_u16),
        "version_key": plan.version_key,
        "fee_tao": plan.fee_tao,
        "effects": list(plan.effects),
        "warnings": list(plan.warnings),
        "violations": list(plan.violations),
        "reveal_round": plan.reveal_round,
    }


def plan_from_json(netuid: int, data: Mapping[str, Any]) -> SubmissionPlan:
    return SubmissionPlan(
        netuid=netuid,
        block=int(data["block"]),
        signer=str(data["signer"]),
        method=data["method"],
        uids=tuple(int(u) for u in data["uids"]),
        weights_u16=tuple(int(w) for w in data["weights_u16"]),
        version_key=int(data["version_key"]),
        fee_tao=data.get("fee_tao"),
        effects=tuple(data.get("effects", ())),
        warnings=tuple(data.get("warnings", ())),
        violations=tuple(data.get("violations", ())),
        reveal_round=data.get("reveal_round"),
    )


@dataclass(frozen=True)
class WeightsAttempt:
    """One weight submission or plan (module docstring); ``plan`` and ``submission`` are None when nothing was
    planned or sent (the subnet would refuse the vector: ``problems``, or the chain did not answer)."""

    attempt_id: str
    attempted_at: str  # ISO 8601 UTC
    netuid: int
    block: int  # the snapshot's block the vector was built at
    mode: Mode  # "submit" (--set-weights) or "plan" (a dry run only)
    kind: str  # the vector's: ledger, padded, keep-alive or empty
    uids: tuple[int, ...]
    hotkeys: tuple[str, ...]
    shares: tuple[float, ...]  # of the total, after the subnet's max-weight clip
    u16: tuple[int, ...]  # what the chain receives (0: dropped by the quantisation)
    fillers: tuple[int, ...] = ()
    deregistered: tuple[str, ...] = ()  # ledger hotkeys no longer registered (dropped)
    after_round: str | None = None  # the last round the ledger had applied
    problems: tuple[str, ...] = ()
    reason: str = ""  # why a keep-alive self-weight rather than the ledger's vector
    reveal: str = ""  # a landed commit, checked on chain after its reveal window: "revealed" or "missing"
    plan: SubmissionPlan | None = None
    submission: Submission | None = None

    @property
    def outcome(self) -> str:
        """In a word: set, commit, planned, refused (by the chain), not sent, or no answer."""
        if self.submission is not None:
            if self.submission.ok:
                return self.submission.method
            return "no answer" if self.submission.error_kind == "transient" else "refused"
        if self.plan is not None:
            return "planned" if self.plan.ok else "refused"
        return "not sent"

    @property
    def landed(self) -> bool:
        return self.submission is not None and self.submission.ok

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            **fields_json(self),
            "plan": None if self.plan is None else plan_to_json(self.plan),
            "submission": None if self.submission is None else self.submission.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "weights attempt") -> WeightsAttempt:
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
            raise ValueError(f"{where}: not a weights attempt (expected schema {SCHEMA!r})")
        try:
            netuid = int(data["netuid"])
            return cls(
                attempt_id=str(data["attempt_id"]),
                attempted_at=str(data["attempted_at"]),
                netuid=netuid,
                block=int(data["block"]),
                mode=data["mode"],
                kind=str(data["kind"]),
                uids=tuple(int(u) for u in data["uids"]),
                hotkeys=tuple(str(h) for h in data["hotkeys"]),
                shares=tuple(float(x) for x in data["shares"]),
                u16=tuple(int(v) for v in data["u16"]),
                fillers=tuple(int(u) for u in data.get("fillers", ())),
                deregistered=tuple(str(h) for h in data.get("deregistered", ())),
                after_round=data.get("after_round"),
                problems=tuple(data.get("problems", ())),
                reason=str(data.get("reason", "")),
                reveal=str(data.get("reveal", "")),
                plan=None if data.get("plan") is None else plan_from_json(netuid, data["plan"]),
                submission=None if data.get("submission") is None else Submission.from_json(data["submission"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: malformed weights attempt: {exc}") from exc


def new_attempt(
    at: float, vector: WeightVector, mode: Mode, after_round: str | None, said: tuple[str, ...]
) -> WeightsAttempt:
    """The record of ``vector`` about to be submitted (or planned) at unix time ``at``; ``said``: the subnet's
    objections (``chain.weights.problems``)."""
    return WeightsAttempt(
        attempt_id=attempt_id(at, vector.block),
        attempted_at=datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds"),
        netuid=vector.netuid,
        block=vector.block,
        mode=mode,
        kind=vector.kind,
        uids=vector.uids,
        hotkeys=vector.hotkeys,
        shares=tuple(float(x) for x in vector.shares),
        u16=vector.u16,
        fillers=vector.fillers,
        deregistered=vector.deregistered,
        after_round=after_round,
        problems=said,
        reason=vector.reason,
    )


def store_attempt(store: Store, attempt: WeightsAttempt) -> str | None:
    """Write ``attempt``; its key, or None when the store failed (logged: a record is never worth a round)."""
    key = keys.weights_attempt(attempt.netuid, attempt.attempt_id)
    try:
        store.put(key, dumps(attempt.to_json()), "application/json")
    except StoreError as exc:
        log.warning("weights attempt %s not stored: %s", attempt.attempt_id, exc)
        return None
    return key


def load_attempts(store: Store, netuid: int | None = None, *, last: int | None = None) -> list[WeightsAttempt]:
    """The stored attempts (of ``netuid``, or of every subnet), oldest first; ``last``: only the newest ones.

    An unreadable one is skipped with a warning, never raised; ``StoreError`` when the store cannot be listed.
    """
    prefix = keys.weights_prefix(netuid) if netuid is not None else keys.CHAIN
    found = sorted(
        (key for key in store.list(prefix) if key.endswith(".json") and "/weights/" in key),
        key=lambda k: k.rsplit("/", 1)[1],
    )
    out: list[WeightsAttempt] = []
    for key in found[-last:] if last else found:
        try:
            out.append(WeightsAttempt.from_json(RoundReader(store).document(key), key))
        except (KeyNotFound, StoreError, ValueError) as exc:
            log.warning("skipping %s: %s", key, exc)
    return out
