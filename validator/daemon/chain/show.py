"""``validator weights show``: what the daemon would submit now, from a stored run's ledger and the chain's head.

``weights_view(store, edge, network)`` is the data (a ``WeightsView``; nothing printed), ``render`` its text.
``WeightsView.health`` (``chain_health``) is the chain side the daemon's metrics also export: the permit, the
stake, the blocks until inactive, the last weights that landed (block and time) and the read's block, for
any other view of it (``chain_health(snapshot, hotkey, attempts)`` needs no chain call of its own).

The ledger (``ledger.json``, else rebuilt from the store's records) is keyed by
hotkey; ``chain.weights.weight_vector`` maps it to the subnet's uids at the
snapshot's block and computes the u16 vector the SDK sends; the SDK's dry run
(``Chain.plan``) says how it would go (set or commit, version key, fee,
warnings, violations); ``chain.schedule.weights_due`` whether it is due, from
the chain's ``last_update`` and the store's last landed submission. Nothing
is signed or sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chain.errors import PermanentChainError, WeightsError
from chain.schedule import Due, blocks_until_inactive, weights_due
from chain.weights import WeightVector, problems, weight_vector
from validator.daemon.chain.attempts import WeightsAttempt, load_attempts
from validator.review import load_store
from validator.terminal import safe

if TYPE_CHECKING:
    from chain.base import Chain
    from chain.types import MetagraphSnapshot, SubmissionPlan
    from emissions.ledger import Ledger
    from storage.base import Store


@dataclass(frozen=True)
class ChainHealth:
    """The validator's standing on the subnet at one read (the figures of the ``validator_chain_*`` metrics)."""

    block: int  # the read's block
    registered: bool
    permit: bool
    stake: float | None  # alpha; None: not registered
    blocks_until_inactive: int | None  # None: unknown (no activity_cutoff, or not registered)
    last_weights_block: int | None  # the last submission of this store that landed
    last_weights_at: str | None  # its time (ISO 8601 UTC)

    def line(self) -> str:
        if not self.registered:
            return f"chain at block {self.block}: not registered (no weights; the daemon checks again every refresh)"
        left = "unknown" if self.blocks_until_inactive is None else f"{self.blocks_until_inactive} blocks"
        last = (
            f"block {self.last_weights_block} ({self.last_weights_at})"
            if self.last_weights_block is not None
            else "none from this store"
        )
        return (
            f"chain at block {self.block}: permit {'yes' if self.permit else 'no'}, stake {self.stake:g}, "
            f"inactive in {left}, last weights landed: {last}"
        )


def chain_health(snapshot: MetagraphSnapshot, hotkey: str, attempts: list[WeightsAttempt]) -> ChainHealth:
    """The standing of ``hotkey`` in ``snapshot``, with the last landed submission among ``attempts``."""
    me = snapshot.by_hotkey(hotkey)
    landed = [a for a in attempts if a.landed and a.submission is not None]
    last = landed[-1] if landed else None
    last_block = (last.submission.block or last.block) if last and last.submission else None
    left = None
    if me is not None:
        left = blocks_until_inactive(
            block=snapshot.block,
            last_update=max(me.last_update, last_block or 0),
            activity_cutoff=snapshot.hyperparameters.activity_cutoff,
        )
    return ChainHealth(
        block=snapshot.block,
        registered=me is not None,
        permit=bool(me and me.validator_permit),
        stake=me.stake if me else None,
        blocks_until_inactive=left,
        last_weights_block=last_block,
        last_weights_at=last.attempted_at if last else None,
    )


@dataclass(frozen=True)
class WeightsView:
    """Everything ``validator weights show`` prints."""

    network: str
    snapshot: MetagraphSnapshot
    hotkey: str
    ledger: Ledger
    vector: WeightVector
    problems: tuple[str, ...]
    plan: SubmissionPlan | None
    plan_error: str | None
    due: Due
    last: WeightsAttempt | None  # the store's last submission that landed
    health: ChainHealth


def stored_ledger(store: Store) -> Ledger | None:
    """The store's ledger: ``ledger.json``, else the one its records make (None: no round stored)."""

    review = load_store(store)
    if review.ledger is not None:
        return review.ledger
    trajectory = review.ledger_trajectory() if review.rounds else []
    return trajectory[-1] if trajectory else None


def weights_view(store: Store, edge: Chain, network: str, version_key: int | None = None) -> WeightsView:
    """The view of the ledger in ``store`` against the chain ``edge`` at its head (module docstring), with the
    ``version_key`` the daemon would send (``[chain] weights_version``)."""
    ledger = stored_ledger(store)
    if ledger is None:
        raise ValueError("the store holds no ledger and no evaluated round: nothing to weight")
    snapshot = edge.snapshot()
    vector = weight_vector(ledger.weights(), snapshot, edge.hotkey, version_key=version_key)
    said = tuple(problems(vector, snapshot))
    plan, plan_error = None, None
    if not said:
        try:
            plan = edge.plan(vector)
        except (PermanentChainError, WeightsError) as exc:  # shown, not fatal: this is a dry run
            plan_error = str(exc)
    attempts = load_attempts(store, snapshot.netuid)
    landed = [a for a in attempts if a.landed]
    last = landed[-1] if landed else None
    me = snapshot.by_hotkey(edge.hotkey)
    due = weights_due(
        block=snapshot.block,
        tempo=snapshot.tempo,
        weights_rate_limit=snapshot.hyperparameters.weights_rate_limit,
        last_update=me.last_update if me else None,
        last_submitted=(last.submission.block if last and last.submission else None),
    )
    health = chain_health(snapshot, edge.hotkey, attempts)
    return WeightsView(network, snapshot, edge.hotkey, ledger, vector, said, plan, plan_error, due, last, health)


def render(view: WeightsView) -> str:
    """The view as the terminal shows it: the uids, hotkeys, float and u16 weights, then the plan."""
    snap, v, hp = view.snapshot, view.vector, view.snapshot.hyperparameters
    me = snap.by_hotkey(view.hotkey)
    who = f"uid {me.uid}, validator permit {'yes' if me.validator_permit else 'no'}" if me else "not registered"
    ledger_weights = view.ledger.weights()
    lines = [
        f"netuid {snap.netuid} on {view.network} at block {snap.block} (tempo {snap.tempo}); validator "
        f"{view.hotkey} ({who})",
        view.health.line(),
        f"ledger after {view.ledger.last_round_id or 'no round'} ({view.ledger.rounds} rounds, "
        f"{len(view.ledger.miners)} miners); vector: {v.kind}",
        f"  {'uid':>5}  {'hotkey':<48} {'ledger':>8} {'share':>8} {'u16':>6}",
    ]
    for uid, hotkey, share, u16 in zip(v.uids, v.hotkeys, v.shares, v.u16):
        note = "filler" if uid in v.fillers else ("self (keep-alive)" if uid == v.self_uid else "")
        lines.append(
            f"  {uid:>5}  {safe(hotkey, 48):<48} {ledger_weights.get(hotkey, 0.0):>8.4f} {share:>8.4f} "
            f"{u16:>6}  {note}".rstrip()
        )
    if v.reason:
        lines.append(f"keep-alive self-weight instead of the ledger's: {v.reason}")
    if v.deregistered:
        lines.append(f"deregistered (dropped): {', '.join(safe(h, 48) for h in v.deregistered)}")
    lines.append(
        f"subnet: min_allowed_weights {hp.min_allowed_weights}, max_weight_limit {hp.max_weight_limit} "
        f"({hp.max_weight_share:.4f}), weights_rate_limit {hp.weights_rate_limit}, version key "
        f"{hp.weights_version}, commit-reveal {'on' if hp.commit_reveal else 'off'}"
    )
    for problem in view.problems:
        lines.append(f"not sendable: {problem}")
    if view.plan is not None:
        p = view.plan
        fee = "unknown" if p.fee_tao is None else f"{p.fee_tao:g} TAO"
        reveal = f", revealed at drand round {p.reveal_round}" if p.reveal_round else ""
        lines.append(f"plan: {p.method} {len(p.uids)} uids, version key {p.version_key}, fee {fee}{reveal}")
        lines += [f"  warning: {w}" for w in p.warnings] + [f"  violation: {x}" for x in p.violations]
    elif view.plan_error is not None:
        lines.append(f"plan: refused: {view.plan_error}")
    last = view.last
    lines.append(
        f"due: {'yes' if view.due.due else 'no'} ({view.due.reason})"
        + (
            f"; last landed: {last.outcome} at block {last.submission.block}"
            if last and last.submission
            else "; nothing landed from this store yet"
        )
    )
    left = (
        blocks_until_inactive(block=snap.block, last_update=me.last_update, activity_cutoff=hp.activity_cutoff)
        if me is not None and me.last_update
        else None
    )
    if left is not None:
        lines.append(
            f"inactive in {left} blocks without a weight update (activity_cutoff {hp.activity_cutoff})"
            if left > 0
            else f"inactive: no weight update for {-left + hp.activity_cutoff} blocks"
        )
    return "\n".join(lines)
