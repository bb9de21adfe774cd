"""A re-evaluated round against its original record: who joined or left consensus, whose payment changed."""

from __future__ import annotations

from validator.records import evaluation_record as rec
from validator.records.replay_summary import RoundDiffRow


def diff_records(
    before: rec.RoundRecord | None, after: rec.RoundRecord, *, embeddings_reused: bool = False
) -> RoundDiffRow:
    """``after`` against ``before`` (None: no original evaluation), as stored in ``replays/<replay>.json``;
    ``embeddings_reused``: the re-evaluation read the stored embeddings."""

    def by_miner(record: rec.RoundRecord | None) -> dict[str, tuple[bool, int]]:
        if record is None:
            return {}
        return {r.miner: (r.in_consensus, r.emissions.amount) for r in record.responses}

    old, new = by_miner(before), by_miner(after)
    joined, left, emissions = [], [], {}
    for miner in sorted(set(old) | set(new)):
        was_in, was_paid = old.get(miner, (False, 0))
        now_in, now_paid = new.get(miner, (False, 0))
        if now_in and not was_in:
            joined.append(miner)
        if was_in and not now_in:
            left.append(miner)
        if was_paid != now_paid:
            emissions[miner] = (was_paid, now_paid)
    return RoundDiffRow(
        after.round_id,
        tuple(joined),
        tuple(left),
        emissions,
        None if before is None else before.consensus.score,
        after.consensus.score,
        embeddings_reused,
        before is not None,
    )
