"""Identity over rounds: which miners the committees' draw keeps apart, from evidence gathered round after round.

A link is shown to the operator and steers the draw (``validator.daemon.committee_draw.linked_entities``: linked identities
are dealt to different committees, so they answer different prompts); it never removes, zeroes or shares an
answer's pay by itself. On a real subnet most honest miners serve a few popular models with the same settings,
so their answers are alike round after round and they are linked exactly as an operator's rewording identities
are: similarity cannot tell the two apart (a long run of the default daemon linked its honest miners of one
model and, when links made copies, paid nobody; docs/validity.md "Same-model miners"). Within a round a copy
is found from that round's texts and arrivals alone (``consensus.restatements``).

- persistence: a pair of miners that is far more alike than its round in most of the rounds both
  answered. Each round contributes ``close_pairs``: an answer and its nearest neighbour when their
  cosine is in the round's top decile of pair cosines (and at least ``CLOSE_FLOOR``), and each copy and its
  source; the ledger counts, per pair, the rounds both answered since the pair was first close and the rounds
  it was close, and who arrived later (``emissions.ledger.PairTotals``). ``links`` turns those counts into
  links once a pair was close in ``min_rounds`` rounds, both answered in twice as many, and it was close
  in at least ``share`` of them; a pair where one miner arrived later in at least ``lead`` of those rounds
  names it the follower (shown to the operator: who answered later, not who copied).

Measured (docs/validity.md): no honest pair was close in more than 13% (development set) or 26% (wide
set: 80 models, many fine-tunes of a few bases) of the rounds both answered; five identities rewording
one model's answer were close to each other and to their source in 70-74%. (A first version counted an
answer's three nearest answers in the round's top decile: two honest Llama-2 fine-tunes of the development
set were close in 84 of 89 rounds.) Pure: arrays and names in, pairs and links out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

HEADROOM = 0.6  # a close pair is at least this far from the round's median pair cosine towards identical ...
CLOSE_FLOOR = 0.85  # ... and at least this alike
# ``links``' bars: close in MIN_ROUNDS rounds and in SHARE of the rounds both answered (honest pairs: at most
# 0.13 on the development set, 0.26 on the wide set; five rewording identities: 0.70-0.74; docs/validity.md);
# the later one in LEAD of the close rounds follows the other
MIN_ROUNDS, SHARE, LEAD = 5, 0.5, 0.8


@dataclass(frozen=True)
class ClosePair:
    """Two miners whose answers were far more alike than their round's; ``later``: who arrived later (None: tied)."""

    first: str
    second: str
    later: str | None

    def __post_init__(self) -> None:
        if self.first >= self.second:
            raise ValueError(f"a close pair names its miners in order: {self.first!r} >= {self.second!r}")


@dataclass(frozen=True)
class Link:
    """A linked pair of miners: ``follower`` (None: no order) arrived later than the other in most close rounds."""

    first: str
    second: str
    follower: str | None
    close: int
    together: int

    @property
    def leader(self) -> str | None:
        if self.follower is None:
            return None
        return self.second if self.follower == self.first else self.first


def close_pairs(
    sim: np.ndarray, candidates: Sequence[int], miners: Sequence[str], latencies: np.ndarray, tie_window_s: float = 0.0
) -> tuple[ClosePair, ...]:
    """This round's close pairs among ``candidates`` (indices of answers with text of their own): pairs whose
    cosine is at least ``median + HEADROOM * (1 - median)`` of the round's pair cosines and ``CLOSE_FLOOR``."""
    cand = [int(i) for i in candidates]
    if len(cand) < 3:
        return ()
    sub = np.asarray(sim, dtype=np.float64)[np.ix_(cand, cand)]
    rows, cols = np.triu_indices(len(cand), 1)
    median = float(np.median(sub[rows, cols]))
    bar = max(CLOSE_FLOOR, median + HEADROOM * (1.0 - median))
    found: dict[tuple[str, str], ClosePair] = {}
    for a, b in zip(rows.tolist(), cols.tolist()):
        i, j = cand[a], cand[b]
        if sub[a, b] < bar or miners[i] == miners[j]:
            continue
        x, y = sorted((miners[i], miners[j]))
        gap = float(latencies[i]) - float(latencies[j])
        later = None if abs(gap) <= tie_window_s else (miners[i] if gap > 0 else miners[j])
        found[(x, y)] = ClosePair(x, y, later)
    return tuple(found[k] for k in sorted(found))


def links(
    totals: Mapping[tuple[str, str], tuple[int, int, int, int]],
    *,
    min_rounds: int = MIN_ROUNDS,
    share: float = SHARE,
    lead: float = LEAD,
) -> tuple[Link, ...]:
    """Linked pairs from per-pair counts ``(together, close, first_later, second_later)`` (module docstring)."""
    out = []
    for (first, second), (together, close, first_later, second_later) in sorted(totals.items()):
        # twice the rounds it needs to be close: a pair's first rounds, counted from its first close one,
        # say little about how often it is close
        if close < min_rounds or together < 2 * min_rounds or close < share * together:
            continue
        follower = first if first_later >= lead * close else second if second_later >= lead * close else None
        out.append(Link(first, second, follower, close, together))
    return tuple(out)
