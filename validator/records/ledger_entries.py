"""The daemon's side of the ledger: the pure ledger (``emissions.ledger``) fed from stored evaluation records.

``entries_from_record`` is the one reader of a record for the ledger: each
miner's paid share (``emissions.amount / emissions.pool`` x ``emissions.pool_scale``: of the nominal pool), and on a canary
round its accuracy on the known answer (the record's ``canary`` section,
written by ``validator.round.canaries``); ``close_pairs`` and ``comparable`` read the
round's pairs of miners far more alike than the round and the miners whose answers
could be compared (the ledger's identity evidence); ``forgotten`` the hotkeys the daemon dropped before
the round (``Ledger.without`` them before ``Ledger.apply``). The daemon reads and writes ``ledger.json``
itself (its commit points); the review rebuilds a ledger from the records with
the same function.
"""

from __future__ import annotations

from collections.abc import Iterable

from consensus.config import ConsensusConfig
from consensus.identity import LEAD, MIN_ROUNDS, SHARE, ClosePair, Link
from emissions.ledger import OLD_SCHEMA, SCHEMA, Ledger, LedgerError, MinerEntry, MinerTotals
from emissions.ticks import TickPart
from validator.records.evaluation_record import CanaryRecord, ClosePairRecord, RoundRecord

__all__ = [
    "OLD_SCHEMA",
    "SCHEMA",
    "Ledger",
    "LedgerError",
    "MinerEntry",
    "MinerTotals",
    "TickPart",
    "canary_accuracy",
    "close_pairs",
    "comparable",
    "consensus_right",
    "entries_from_record",
    "nominal_pool",
    "paid_share",
    "forgotten",
    "identity_links",
    "tick_part",
]


def canary_accuracy(canary: CanaryRecord | None) -> dict[int, float]:
    """Response index -> accuracy on a canary round's known answer; empty for other rounds."""
    if canary is None or not canary.canary:
        return {}
    return {int(a.index): float(a.accuracy) for a in canary.answers}


def entries_from_record(record: RoundRecord) -> list[MinerEntry]:
    """The ledger's view of an evaluation record (``validator.round.evaluate.build_record``).

    share = ``paid_share``: the amount over the round's nominal pool (the config's ``emissions.pool_units``; a
    round pays ``pool_scale`` of it, less when its consensus is weak), so a round that paid half its nominal
    pool moves the EMAs half as much as one that paid it all, as its units weigh in the totals, and the final
    weights rank as the units do (a record that names no nominal pool: over its own pool). On a
    canary round every answer gets an accuracy: judged ones their judged value, the others (failed, empty) 0,
    since they gave no right answer.
    """
    pool = int(record.emissions.pool or record.emissions.total or 0)
    nominal = nominal_pool(record)
    accuracy = canary_accuracy(record.canary)
    verified = {int(a.index): bool(a.right) for a in record.task.answers} if record.task is not None else {}
    out = []
    for r in record.responses:
        amount = int(r.emissions.amount)
        if not 0 <= amount <= max(pool, 0):
            raise LedgerError(f"record {record.round_id!r}: response {r.index} was paid {amount} of a pool of {pool}")
        share = paid_share(amount, pool, nominal)
        out.append(
            MinerEntry(
                miner=r.miner,
                share=share,
                emission=amount,
                in_consensus=bool(r.in_consensus),
                failed=r.error is not None,
                canary=accuracy.get(int(r.index), 0.0) if accuracy else None,
                verified=verified.get(int(r.index), False) if record.task is not None else None,
            )
        )
    return out


def nominal_pool(record: RoundRecord) -> int | None:
    """The configured pool of the run that wrote ``record`` (its config's ``emissions.pool_units``), if it names one."""
    units = record.config.value("emissions", "pool_units")
    return units if isinstance(units, int) and not isinstance(units, bool) else None


def paid_share(amount: int, pool: int, nominal: int | None) -> float:
    """The ledger's share of a round's ``amount``: over the nominal pool when one is known (and not below the
    round's pool), else over the round's pool; 0 for a round that paid nothing. The review's rebuilt ledger
    (``validator.review.miner_history``) reads its shares here too, so both folds agree to the last bit."""
    base = nominal if nominal is not None and nominal >= pool else pool
    return min(1.0, amount / base) if base > 0 else 0.0


def fold_record(ledger: Ledger, sequence: int, record: RoundRecord, tick: TickPart | None = None) -> Ledger:
    """``ledger`` with one evaluation record folded in, as every fold of the records does (the daemon, a store
    replay's committees, the benchmarks): its entries, quorum, canary verdict, close pairs and compared miners."""
    return ledger.apply(
        sequence,
        record.round_id,
        entries_from_record(record),
        no_quorum=not record.evaluated,
        consensus_right=consensus_right(record),
        close=close_pairs(record),
        comparable=comparable(record),
        tick=tick,
    )


def consensus_right(record: RoundRecord) -> bool | None:
    """On a canary round: did the dominant cluster give the known answer? None on other rounds."""
    canary = record.canary
    if canary is None or not canary.canary:
        return None
    return canary.consensus_right


def close_pairs(record: RoundRecord | tuple[ClosePairRecord, ...] | None) -> tuple[ClosePair, ...]:
    """The round's close pairs (``Ledger.apply(close=)``) from a record, or from its ``close_pairs`` section."""
    found = record.close_pairs if isinstance(record, RoundRecord) else record
    try:
        return tuple(ClosePair(p.first, p.second, p.later) for p in found or ())
    except ValueError as exc:  # a pair not in name order: not what build_record writes
        name = record.round_id if isinstance(record, RoundRecord) else "a record"
        raise LedgerError(f"record {name!r}: close_pairs: {exc}") from None


def comparable(record: RoundRecord | tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The miners whose answers the round could compare (``Ledger.apply(comparable=)``), from a record or its
    ``comparable`` section; None when the record holds none (written before 1.4's ``comparable``, or with
    ``identity_persistence`` off): the ledger then counts every miner that answered."""
    found = record.comparable if isinstance(record, RoundRecord) else record
    return None if found is None else tuple(found)


def forgotten(record: RoundRecord) -> tuple[str, ...]:
    """The hotkeys the daemon dropped from its ledger before this round (the record's ``daemon.forgotten``, from
    its input's marker): a ledger folded from the records applies ``without(forgotten(record))`` first."""
    return tuple(record.daemon.forgotten or ()) if record.daemon is not None else ()


def tick_part(marker: object) -> TickPart | None:
    """The tick and committee a round belongs to (``Ledger.apply(tick=)``), from a record's ``daemon`` marker or a
    stored input's; None for a round stored before committees (or not by the daemon): a tick of its own."""
    tick = getattr(marker, "tick", None)
    if tick is None:
        return None
    try:
        return TickPart(int(tick), int(marker.committee), int(marker.committees))
    except (TypeError, ValueError) as exc:
        raise LedgerError(f"a round's tick marker is malformed: {exc}") from None


def identity_links(ledger: Ledger, config: ConsensusConfig, miners: Iterable[str]) -> tuple[Link, ...]:
    """The ledger's identity links (``consensus.identity``) between ``miners`` (one round's), with the config's
    thresholds; none when ``identity_persistence`` is off. The daemon stores them with the round's input, so
    every later evaluation of the round (recovery, replay, what-if) uses these, whatever the ledger says then."""
    if not config.identity.identity_persistence:
        return ()
    return ledger.links(min_rounds=MIN_ROUNDS, share=SHARE, lead=LEAD, among=miners)
