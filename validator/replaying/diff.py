"""A re-evaluated round against its original record: who joined or left consensus, whose payment changed."""

from __future__ import annotations

from dataclasses import dataclass, field

from validator.records import evaluation_record as rec
from validator.records.replay_summary import RoundDiffRow


@dataclass
class RoundDiff:
    round_id: str
    joined: list[str] = field(default_factory=list)  # moved into consensus
    left: list[str] = field(default_factory=list)  # moved out of consensus
    emissions: dict[str, tuple[int, int]] = field(default_factory=dict)  # miner -> (before, after), changed only
    consensus: tuple[float | None, float | None] = (None, None)
    embeddings_reused: bool = False
    original: bool = True  # an original evaluation existed

    def row(self) -> RoundDiffRow:
        """This diff as stored in ``replays/<replay>.json`` (``validator.records.replay_summary.RoundDiffRow``)."""
        return RoundDiffRow(
            self.round_id,
            tuple(self.joined),
            tuple(self.left),
            dict(self.emissions),
            self.consensus[0],
            self.consensus[1],
            self.embeddings_reused,
            self.original,
        )

    def as_dict(self) -> dict:
        return self.row().to_json()


def diff_records(before: rec.RoundRecord | None, after: rec.RoundRecord) -> RoundDiff:
    def by_miner(record: rec.RoundRecord | None) -> dict[str, tuple[bool, int]]:
        if record is None:
            return {}
        return {r.miner: (r.in_consensus, r.emissions.amount) for r in record.responses}

    old, new = by_miner(before), by_miner(after)
    diff = RoundDiff(
        after.round_id,
        original=before is not None,
        consensus=(None if before is None else before.consensus.score, after.consensus.score),
    )
    for miner in sorted(set(old) | set(new)):
        was_in, was_paid = old.get(miner, (False, 0))
        now_in, now_paid = new.get(miner, (False, 0))
        if now_in and not was_in:
            diff.joined.append(miner)
        if was_in and not now_in:
            diff.left.append(miner)
        if was_paid != now_paid:
            diff.emissions[miner] = (was_paid, now_paid)
    return diff
