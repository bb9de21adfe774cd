"""From the ledger's weights (keyed by hotkey) to the vector a subnet accepts (pure).

At submit time each hotkey of the ledger is looked up in the metagraph
snapshot: a hotkey that is no longer registered is dropped (and listed in
``deregistered``), and a hotkey that registered on a freed uid has no ledger
entry, so it starts from nothing. The validator never weights itself, except
for the keep-alive below.

What the chain receives is computed exactly as the SDK computes it
(``bittensor/intents/weights.py``, 11.3.0: ``clip_to_max_weight``,
``normalize`` and ``_conform``): the floats are clipped so that no uid holds
more than ``max_weight_limit / 65535`` of the total (mass above a cutoff is
redistributed, not discarded), then max-upscaled to u16 (the largest weight
becomes 65535, each value rounded with Python's ``round``, zeros dropped).
``sdk_conform`` below repeats those steps operation for operation, so the u16
vector printed by ``validator weights show`` is the one the SDK sends;
tests/chain/test_weights.py checks it against the SDK's own functions.

Two chain rules can make the ledger's vector unacceptable as it is:

- ``min_allowed_weights``: the chain refuses fewer nonzero weights than
  ``min(subnet_n, min_allowed_weights)`` (subtensor's ``check_length``,
  ``required_weights``), and the SDK (11.3.0, ``intents/weights.py``
  ``_conform``) refuses to send fewer than ``min_allowed_weights`` even to a
  subnet that has fewer uids: there the only vector that can go is the
  self-weight below;
- ``max_weight_limit``: with ``n`` uids, no vector fits the cap unless
  ``n * max_weight_limit >= 65535`` (the SDK then falls back to a uniform vector,
  which the chain refuses as well).

Our choice when fewer miners qualify than these rules need: **pad with
fillers**, so the qualified miners are still paid what the rules allow rather
than not at all. Fillers are other registered uids (never the validator):
miners the ledger paid too little to survive the u16 rounding first (most paid
first), then non-validators serving an axon, then the rest, by uid. When the
cap does not bind on the ledger's own proportions, each filler gets the
smallest weight that survives the u16 quantisation (1 of 65535 relative to the
top weight), so nearly all of the mass stays with the qualified miners in the
ledger's proportions. When it binds, the qualified miners take all the mass the
cap lets them hold, clipped as the SDK clips (the largest at the cap, the
others in their proportions), and only the rest — which the chain forbids them
to hold — is spread evenly over as few fillers as fit under the cap. We clip
ourselves whenever the cap binds, a hair below it (``safe_cap``), so that the
u16 rounding cannot push the largest weight over the chain's check.

With no qualified miner at all, or when no vector of the miners can pass the
subnet's rules (a single miner under a cap: subtensor checks the cap on any
length but one self-weight), the validator sets a lone **self-weight** (the
chain exempts it from both rules, ``is_self_weight``, and pays nobody through
it), with the ``reason`` why: it keeps the validator's ``last_update`` fresh
so it does not go inactive (``activity_cutoff``) while there is nothing it may
send (``keep_alive=False`` turns this off: then the vector is returned as it
is, and ``problems`` says why the chain would refuse it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

from chain.errors import WeightsError
from chain.types import U16_MAX, MetagraphSnapshot, Neuron

Kind = Literal["ledger", "padded", "keep-alive", "empty"]


# --- the SDK's steps, operation for operation (bittensor 11.3.0, intents/weights.py) -------------------------


def clip_to_max_weight(weights: Sequence[float], limit: float) -> list[float]:
    """Normalise to sum 1 with no element above ``limit`` (the SDK's ``clip_to_max_weight``).

    Within the limit: just sum-normalised. Otherwise everything above a cutoff
    is clipped to it, the cutoff chosen so the largest normalised weight lands
    on the limit. ``len * limit <= 1`` (no vector can fit): uniform.
    """
    n = len(weights)
    total = float(sum(weights))
    if n == 0 or total <= 0:
        raise WeightsError("all weights are zero; nothing to set")
    if n * limit <= 1:
        return [1.0 / n] * n
    estimation = sorted(w / total for w in weights)
    if estimation[-1] <= limit:
        return [w / total for w in weights]
    epsilon = 1e-7
    cumsum = list(accumulate(estimation))
    n_values = sum(1 for i, e in enumerate(estimation) if e / ((n - i - 1) * e + cumsum[i] + epsilon) < limit)
    cutoff_scale = (limit * cumsum[n_values - 1] - epsilon) / (1 - limit * (n - n_values))
    cutoff = cutoff_scale * total
    clipped = [min(float(w), cutoff) for w in weights]
    clipped_total = sum(clipped)
    return [w / clipped_total for w in clipped]


def quantize_u16(uids: Sequence[int], weights: Sequence[float]) -> tuple[list[int], list[int]]:
    """Max-upscale to u16 and drop zeros (the SDK's ``normalize``): the largest weight becomes 65535."""
    if len(uids) != len(weights):
        raise WeightsError(f"uids and weights must be equal length: {len(uids)} vs {len(weights)}")
    if any(not math.isfinite(w) or w < 0 for w in weights):
        raise WeightsError("weights must be finite and non-negative")
    if any(u < 0 or u > U16_MAX for u in uids):
        raise WeightsError("uids must be in 0..65535")
    top = max(weights) if weights else 0
    if top == 0:
        return [], []
    out_uids: list[int] = []
    out_vals: list[int] = []
    for uid, weight in zip(uids, weights):
        value = round((weight / top) * U16_MAX)
        if value != 0:
            out_uids.append(int(uid))
            out_vals.append(int(value))
    return out_uids, out_vals


def sdk_conform(
    uids: Sequence[int], weights: Sequence[float], *, max_weight_limit: int, self_uid: int | None
) -> tuple[list[int], list[int]]:
    """What ``SetWeights`` sends for these floats: the clip (unless a lone self-weight or no cap), then u16.

    The SDK's ``_conform`` without its ``min_allowed_weights`` check (``problems`` reports that).
    """
    floats = [float(w) for w in weights]
    is_self_weight = list(uids) == [self_uid]
    if not is_self_weight and max_weight_limit < U16_MAX:
        floats = clip_to_max_weight(floats, max_weight_limit / U16_MAX)
    return quantize_u16([int(u) for u in uids], floats)


def within_max_weight(values: Sequence[int], max_weight_limit: int) -> bool:
    """The chain's cap check on the u16 values sent (subtensor's ``max_weight_limited`` -> ``check_vec_max_limited``):
    normalised to sum 1 in I32F32 fixed point (32 fractional bits, divisions truncated), the largest is at most
    ``max_weight_limit / 65535`` (no cap at 65535)."""
    if max_weight_limit >= U16_MAX or not values:
        return True
    total = sum(values)
    if total == 0:
        return True
    # I32F32 a / b on raw bits is (a_bits << 32) // b_bits; a u16 value v has bits v << 32
    return (max(values) << 32) // total <= (max_weight_limit << 32) // U16_MAX


# --- the ledger -> the subnet's vector ----------------------------------------------------------------------


@dataclass(frozen=True)
class WeightVector:
    """What one submission would carry, with the reasons it carries it.

    ``uids``/``raw`` are what ``SetWeights`` is given (ordered by uid);
    ``shares`` the fraction of the total each uid ends up with after the
    max-weight clip (sum 1); ``u16`` the SDK's quantisation, aligned with
    ``uids`` (0: dropped by the quantisation, not sent). ``kind``: ``ledger``
    (the ledger's qualified miners as they are), ``padded`` (fillers added,
    module docstring), ``keep-alive`` (a lone self-weight) or ``empty``
    (nothing to submit).
    """

    netuid: int
    block: int  # the snapshot's block
    version_key: int  # what the validator sends ([chain] weights_version), at least the subnet's weights_version
    self_hotkey: str
    self_uid: int | None  # None: the validator's hotkey is not registered on the subnet
    validator_permit: bool  # a permit, or the subnet owner (subtensor lets it weight others without one)
    commit_reveal: bool  # the subnet commits weights timelocked (the SDK then commits instead of setting)
    kind: Kind
    uids: tuple[int, ...]
    hotkeys: tuple[str, ...]
    raw: tuple[float, ...]
    shares: tuple[float, ...]
    u16: tuple[int, ...]
    fillers: tuple[int, ...] = ()  # uids added only to satisfy min_allowed_weights / max_weight_limit
    deregistered: tuple[str, ...] = ()  # ledger hotkeys with weight that hold no uid any more (dropped)
    reason: str = ""  # why a keep-alive (or empty) vector instead of the ledger's: said once by the daemon

    @property
    def chain_uids(self) -> tuple[int, ...]:
        """The uids the chain receives (nonzero after quantisation)."""
        return tuple(u for u, v in zip(self.uids, self.u16) if v)

    @property
    def chain_u16(self) -> tuple[int, ...]:
        return tuple(v for v in self.u16 if v)


def _check_ledger(ledger: Mapping[str, float]) -> None:
    for hotkey, weight in ledger.items():
        if not isinstance(hotkey, str) or not hotkey:
            raise WeightsError(f"ledger keys are hotkeys (non-empty strings), got {hotkey!r}")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
            raise WeightsError(f"hotkey {hotkey}: weight {weight!r} is not a finite non-negative number")


def _filler_order(neuron: Neuron) -> tuple[bool, bool, int]:
    # a filler is paid something: non-validators first, those serving an axon (live miners) before the rest
    return (neuron.validator_permit, neuron.axon is None, neuron.uid)


def _water_fill(q: list[float], total: float, cap: float) -> list[float]:
    """Shares proportional to ``q`` summing to ``total``, none above ``cap``: the capped ones sit at the cap and the
    rest keep their proportions (what the SDK's clip does). Everything at the cap when ``total`` cannot fit under it."""
    if total >= cap * len(q):
        return [cap] * len(q)
    capped: set[int] = set()
    while True:
        free = [i for i in range(len(q)) if i not in capped]
        scale = (total - cap * len(capped)) / sum(q[i] for i in free)
        over = {i for i in free if q[i] * scale > cap}
        if not over:
            return [cap if i in capped else q[i] * scale for i in range(len(q))]
        capped |= over


def safe_cap(max_weight_limit: int, entries: int) -> float:
    """The largest share we give one uid under the cap: a hair below ``max_weight_limit / 65535`` so that the u16
    rounding of up to ``entries`` values (half a unit each) cannot push the largest over the chain's cap, and the
    SDK's clip finds nothing to clip (it would otherwise move the top weight onto the cap itself)."""
    if max_weight_limit >= U16_MAX:
        return 1.0
    if max_weight_limit <= 0:
        return 0.0
    limit = max_weight_limit / U16_MAX
    return min(limit * (1 - 1e-9), U16_MAX / (U16_MAX * U16_MAX / max_weight_limit + entries / 2))


def _shares(
    q: list[float], candidates: list[Neuron], *, min_weights: int, cap: float
) -> tuple[list[float], list[Neuron]]:
    """Shares (sum 1) for the qualified miners ``q`` (sum 1) and the fillers they need (module docstring)."""
    qmax = max(q)
    needed = max(min_weights - len(q), 0)
    if qmax <= cap:
        # the cap does not bind: fillers at one u16 unit of the top weight, the ledger's proportions kept
        fillers = candidates[:needed]
        scale = 1.0 / (1.0 + len(fillers) * qmax / U16_MAX)
        return [w * scale for w in q] + [scale * qmax / U16_MAX] * len(fillers), fillers
    # the cap binds: the qualified miners take all the cap allows (clipped as the SDK clips), and the rest goes
    # evenly to as few fillers as fit under the cap, each at least one u16 unit of the top (capped) share
    rest = max(0.0, 1.0 - len(q) * cap)
    fillers = candidates[: max(needed, math.ceil(rest / cap - 1e-12))]
    filler = max(rest / len(fillers), cap / U16_MAX) if fillers else 0.0
    return _water_fill(q, 1.0 - filler * len(fillers), cap) + [filler] * len(fillers), fillers


def spec_version(version: str) -> int:
    """A package version as the subnet template's ``spec_version`` (1000 x major + 10 x minor + patch: 0.1.0 -> 10,
    2.3.4 -> 2034): the version key subnets expect; 0 when ``version`` has no major.minor.patch."""
    parts = version.split("+")[0].split(".")
    try:
        major, minor, patch = (int("".join(c for c in p if c.isdigit()) or 0) for p in (parts + ["0", "0"])[:3])
    except ValueError:
        return 0
    return 1000 * major + 10 * minor + patch


def weight_vector(
    ledger: Mapping[str, float],
    snapshot: MetagraphSnapshot,
    self_hotkey: str,
    *,
    keep_alive: bool = True,
    version_key: int | None = None,
) -> WeightVector:
    """The submission the ledger's weights make on this subnet at this block (module docstring); ``version_key``:
    the validator's own (``[chain] weights_version``; None: the subnet's, for a preview only: echoing it would
    defeat a subnet owner's version bump meant to stop outdated validators)."""
    _check_ledger(ledger)
    hp = snapshot.hyperparameters
    by_hotkey = {n.hotkey: n for n in snapshot.neurons}
    me = by_hotkey.get(self_hotkey)
    deregistered = tuple(sorted(h for h, w in ledger.items() if w > 0 and h not in by_hotkey))
    registered = {h: float(w) for h, w in ledger.items() if w > 0 and h in by_hotkey and h != self_hotkey}
    # a weight below one u16 unit of the largest would be rounded away by the SDK: not a qualified miner
    top = max(registered.values(), default=0.0)
    qualified = sorted((by_hotkey[h] for h, w in registered.items() if w * U16_MAX >= top), key=lambda n: n.uid)
    base = dict(
        netuid=snapshot.netuid,
        block=snapshot.block,
        version_key=hp.weights_version if version_key is None else version_key,
        self_hotkey=self_hotkey,
        self_uid=me.uid if me else None,
        validator_permit=snapshot.may_set_weights(self_hotkey),
        commit_reveal=hp.commit_reveal,
        deregistered=deregistered,
    )

    if not qualified:
        if keep_alive and me is not None:
            return _self_weight(me, base, "no registered miner has weight in the ledger yet")
        return WeightVector(kind="empty", uids=(), hotkeys=(), raw=(), shares=(), u16=(), **base)

    limit_u16 = hp.max_weight_limit
    cap = safe_cap(limit_u16, len(snapshot.neurons))
    weights = [registered[n.hotkey] for n in qualified]
    total = sum(weights)
    q = [w / total for w in weights]
    fillers: list[Neuron] = []
    kind: Kind = "ledger"
    min_weights = required_weights(snapshot)
    if len(q) < min_weights or len(q) * cap < 1.0:
        taken = {n.hotkey for n in qualified} | {self_hotkey}
        # miners the ledger paid too little to count come first, most paid first; then the rest (_filler_order)
        candidates = sorted(
            (n for n in snapshot.neurons if n.hotkey not in taken),
            key=lambda n: (-registered.get(n.hotkey, 0.0), *_filler_order(n)),
        )
        weights, fillers = _shares(q, candidates, min_weights=min_weights, cap=cap)
        kind = "padded"
    elif max(q) > cap:
        weights = _water_fill(q, 1.0, cap)  # clipped here, with the rounding margin, rather than by the SDK
    # the SDK is given the entries in uid order (a {uid: weight} mapping would be sorted the same way)
    entries = sorted(zip(qualified + fillers, weights), key=lambda e: e[0].uid)
    uids = [n.uid for n, _ in entries]
    raw = [w for _, w in entries]
    sent_uids, sent_u16 = sdk_conform(uids, raw, max_weight_limit=limit_u16, self_uid=base["self_uid"])
    by_uid = dict(zip(sent_uids, sent_u16))
    shares = clip_to_max_weight(raw, limit_u16 / U16_MAX) if limit_u16 < U16_MAX else [w / sum(raw) for w in raw]
    vector = WeightVector(
        kind=kind,
        uids=tuple(uids),
        hotkeys=tuple(n.hotkey for n, _ in entries),
        raw=tuple(raw),
        shares=tuple(shares),
        u16=tuple(by_uid.get(u, 0) for u in uids),
        fillers=tuple(sorted(n.uid for n in fillers)),
        **base,
    )
    said = problems(vector, snapshot)
    if said and keep_alive and me is not None:  # no vector of the miners passes: keep the validator active instead
        return _self_weight(me, base, "; ".join(said))
    return vector


def _self_weight(me: Neuron, base: dict, reason: str) -> WeightVector:
    return WeightVector(
        kind="keep-alive",
        uids=(me.uid,),
        hotkeys=(me.hotkey,),
        raw=(1.0,),
        shares=(1.0,),
        u16=(U16_MAX,),
        reason=reason,
        **base,
    )


def required_weights(snapshot: MetagraphSnapshot) -> int:
    """The fewest nonzero weights the subnet accepts from a vector that is not a lone self-weight: subtensor's
    ``check_length`` (``pallets/subtensor/src/subnets/weights.rs``) takes ``min(subnet_n, min_allowed_weights)``."""
    return min(len(snapshot.neurons), snapshot.hyperparameters.min_allowed_weights)


def problems(vector: WeightVector, snapshot: MetagraphSnapshot) -> list[str]:
    """Why the chain would refuse this vector (empty: it would accept it), as the chain checks it.

    Registration and the validator permit are the edge's to enforce
    (``PermanentChainError``); this checks only the vector against the subnet's rules.
    """
    hp = snapshot.hyperparameters
    out: list[str] = []
    if vector.kind == "empty":
        return [vector.reason or "nothing to submit: no registered miner has weight in the ledger"]
    if vector.version_key < hp.weights_version:  # weights.rs check_version_key: a self-weight too
        return [
            f"version key {vector.version_key} is older than the subnet's weights_version {hp.weights_version}: "
            f"the subnet owner requires a newer validator (update it; [chain] weights_version)"
        ]
    u16 = vector.chain_u16
    if vector.self_uid is not None and vector.chain_uids == (vector.self_uid,):
        return out  # a lone self-weight is exempt from both rules (weights.rs is_self_weight)
    required = required_weights(snapshot)
    if len(u16) < required:
        out.append(f"only {len(u16)} nonzero weights; the subnet requires at least {required}")
    elif len(u16) < hp.min_allowed_weights:  # subtensor would take it; the SDK does not send it
        out.append(
            f"only {len(u16)} nonzero weights: the subnet has {len(snapshot.neurons)} uids, which subtensor "
            f"accepts, but the SDK refuses fewer than min_allowed_weights ({hp.min_allowed_weights})"
        )
    if not within_max_weight(u16, hp.max_weight_limit):
        out.append(
            f"the largest weight is {max(u16) / sum(u16):.4f} of the total; the subnet caps one uid at "
            f"{hp.max_weight_share:.4f}"
        )
    return out
