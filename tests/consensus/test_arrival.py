"""Which of two answers came first: the validator's own clock at receipt (``Response.received_s``), not latency.

A miner's latency runs from its own request; requests leave at different moments (connection slots, signing),
so a copier asked late can show a shorter latency than the author it copied. The copy stage reads arrival
(``consensus.pipeline.arrivals``): the source is the answer that reached the validator first, the copy's
reason and the tie note say the real gap, and copies sent after their source never lower its pay.
"""

from __future__ import annotations

import numpy as np
import pytest

from consensus import Reason, evaluate
from consensus.pipeline import arrivals
from consensus.types import Response, Round
from emissions.allocate import allocate
from emissions.config import EmissionsConfig

AUTHOR = (
    "Seasons happen because the rotation axis of the Earth is tilted by about twenty three degrees relative to "
    "its orbit. When a hemisphere leans toward the Sun it receives steeper sunlight and longer days, which "
    "brings summer, while the other hemisphere gets winter. Distance from the Sun matters very little."
)
OTHERS = (
    "Our planet has seasons since its spin axis is inclined. Each half of the globe alternately faces the star "
    "more directly during part of the year, collecting concentrated radiation over lengthy daylight hours. "
    "Perihelion falls in January, proving proximity is irrelevant.",
    "Think of a flashlight shining on a table: aimed straight down, the spot is small and bright; tilted, it "
    "spreads out and dims. Northern June sunshine arrives nearly overhead, December sunshine arrives slanting, "
    "so warmth differs although orbital geometry barely changes.",
)


def round_of(latency: tuple[float, float], received: tuple[float, float] | None, copies: int = 1) -> Round:
    """author (0), ``copies`` verbatim copiers (1..), two honest others; the copiers share the second timing."""
    lat = [latency[0], *[latency[1] + 0.001 * k for k in range(copies)], 5.0, 6.0]
    rec = None if received is None else [received[0], *[received[1] + 0.001 * k for k in range(copies)], 5.5, 6.5]
    texts = [AUTHOR, *[AUTHOR] * copies, *OTHERS]
    names = ["author", *[f"copier{k}" for k in range(copies)], "h1", "h2"]
    return Round(
        "r",
        "Why do we have seasons?",
        tuple(
            Response(m, t, lat[k], received_s=None if rec is None else rec[k])
            for k, (m, t) in enumerate(zip(names, texts))
        ),
    )


def vectors(n: int) -> np.ndarray:
    v = np.full((n, 8), 0.3, dtype=np.float32) + np.eye(n, 8, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize(
    ("latency", "received"),
    [
        ((1.0, 3.0), (1.0, 3.0)),  # the copier answers later, by both clocks
        ((2.0, 0.5), (2.1, 3.0)),  # the copier's own latency is shorter (asked later): it still arrived later
        ((1.0, 1.0), (1.0, 2.5)),  # equal latencies: the receipt clock orders them
    ],
)
def test_the_copier_is_the_one_that_arrived_later_by_the_validator_s_clock(latency, received):
    ev = evaluate(round_of(latency, received), vectors(4))
    author, copier = ev.results[0], ev.results[1]
    assert author.reason is Reason.IN_CONSENSUS and copier.reason is Reason.COPY and copier.copy_of == 0
    gap_ms = (received[1] - received[0]) * 1000
    assert f"which arrived {gap_ms:.0f} ms earlier" in copier.detail


def test_without_a_receipt_clock_arrival_reads_the_latency():
    r = round_of((2.0, 0.5), None)
    assert arrivals(r).tolist() == [2.0, 0.5, 5.0, 6.0]
    ev = evaluate(r, vectors(4))
    assert ev.results[0].reason is Reason.COPY and ev.results[1].reason is Reason.IN_CONSENSUS


def test_a_tie_note_says_the_true_gap():
    ev = evaluate(round_of((1.0, 1.0), (1.0, 1.03)), vectors(4))
    assert ev.groups == ((0, 1),)
    note = next(n for n in ev.notes if "share one payout" in n)
    assert "arrived 30 ms apart (within the tie window of 50 ms)" in note


@pytest.mark.parametrize("copies", [1, 2, 3])
def test_copies_sent_after_the_source_never_lower_its_pay(copies):
    lone = round_of((1.0, 9.0), (1.0, 9.0), copies=0)
    alone = allocate(lone, evaluate(lone, vectors(3)), EmissionsConfig())
    round_ = round_of((1.0, 3.0), (1.0, 3.0), copies=copies)
    copied = evaluate(round_, vectors(3 + copies))
    assert [r.reason for r in copied.results[1 : 1 + copies]] == [Reason.COPY] * copies
    paid = allocate(round_, copied, EmissionsConfig())
    assert paid.amounts[0] >= alone.amounts[0]
    assert all(paid.amounts[k] == 0 for k in range(1, 1 + copies))
