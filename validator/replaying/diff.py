"""A re-evaluated round against its original record: who joined or left consensus, whose payment changed."""

from __future__ import annotations

from dataclasses import dataclass, field

from validator import record as rec


@dataclass
class RoundDiff:
    round_id: str
    joined: list[str] = field(default_factory=list)  # moved into consensus
    left: list[str] = field(default_factory=list)  # moved out of consensus
    emissions: dict[str, tuple[int, int]] = field(default_factory=dict)  # miner -> (before, after), changed only
    consensus: tuple[float | None, float | None] = (None, None)
    embeddings_reused: bool = False
    original: bool = True  # an original evaluation existed

    def as_dict(self) -> dict:
        return {
            "round_id": self.round_id,
            "joined": self.joined,
            "left": self.left,
            "emissions": {m: {"before": b, "after": a, "change": a - b} for m, (b, a) in self.emissions.items()},
            "consensus_before": self.consensus[0],
            "consensus_after": self.consensus[1],
            "embeddings_reused": self.embeddings_reused,
            "original": self.original,
        }


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
