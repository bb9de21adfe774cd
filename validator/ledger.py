"""The daemon's side of the ledger: the pure ledger (``emissions.ledger``) fed from stored evaluation records.

``entries_from_record`` is the one reader of a record for the ledger: each
miner's paid share (``emissions.amount / emissions.pool``), and on a canary
round its accuracy on the known answer (the record's ``canary`` section,
written by ``validator.canaries``). The daemon reads and writes ``ledger.json``
itself (its commit points); the review rebuilds a ledger from the records with
the same function.
"""

from __future__ import annotations

from emissions.ledger import OLD_SCHEMA, SCHEMA, Ledger, LedgerError, MinerEntry, MinerTotals
from validator.record import CanaryRecord, RoundRecord

__all__ = ["OLD_SCHEMA", "SCHEMA", "Ledger", "LedgerError", "MinerEntry", "MinerTotals", "canary_accuracy",
           "consensus_right", "entries_from_record"]


def canary_accuracy(canary: CanaryRecord | None) -> dict[int, float]:
    """Response index -> accuracy on a canary round's known answer; empty for other rounds."""
    if canary is None or not canary.canary:
        return {}
    return {int(a.index): float(a.accuracy) for a in canary.answers}


def entries_from_record(record: RoundRecord) -> list[MinerEntry]:
    """The ledger's view of an evaluation record (``validator.evaluate.build_record``).

    share = amount / the round's emitted pool. On a canary round every answer
    gets an accuracy: judged ones their judged value, the others (failed,
    empty) 0, since they gave no right answer.
    """
    pool = int(record.emissions.pool or record.emissions.total or 0)
    accuracy = canary_accuracy(record.canary)
    out = []
    for r in record.responses:
        amount = int(r.emissions.amount)
        share = amount / pool if pool > 0 else 0.0
        if not 0.0 <= share <= 1.0:
            raise LedgerError(f"record {record.round_id!r}: response {r.index} was paid {amount} of a pool of {pool}")
        out.append(MinerEntry(miner=r.miner, share=share, emission=amount, in_consensus=bool(r.in_consensus),
                              failed=r.error is not None,
                              canary=accuracy.get(int(r.index), 0.0) if accuracy else None))
    return out


def consensus_right(record: RoundRecord) -> bool | None:
    """On a canary round: did the dominant cluster give the known answer? None on other rounds."""
    canary = record.canary
    if canary is None or not canary.canary:
        return None
    return canary.consensus_right
