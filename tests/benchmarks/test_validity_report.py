"""benchmarks.validity.report's sybil-group figures on a hand-made table (no model)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks.validity_report import PARTS, report
from consensus.types import Reason


def _round(amounts: dict[str, int]) -> SimpleNamespace:
    results = [
        SimpleNamespace(
            miner=m, reason=Reason.IN_CONSENSUS, words=10, score=SimpleNamespace(**dict.fromkeys(PARTS, 0.5))
        )
        for m in amounts
    ]
    return SimpleNamespace(
        evaluation=SimpleNamespace(results=results, consensus=SimpleNamespace(reached=True)),
        allocation=SimpleNamespace(
            amounts=list(amounts.values()), speed=[1.0] * len(amounts), top=[1.0] * len(amounts)
        ),
    )


def test_a_group_is_measured_over_all_rounds_and_over_the_second_half_alone():
    early = {"a": 10, "b": 10, "s-0": 10, "s-1": 10}  # before persistence links the group: two voices
    late = {"a": 10, "b": 10, "s-0": 2, "s-1": 2}  # after: one voice between them
    truth = {"lc_winrate": {"a": 1.0, "b": 2.0}, "sybil_groups": {"g": ["s-0", "s-1"]}}
    rep = report([_round(early), _round(early), _round(late), _round(late)], truth, boot=10)
    g = rep["sybil_groups"]["g"]
    assert g["over_honest_mean"] == pytest.approx(48 / 40)  # 24 + 24 units against an honest 40
    assert g["late_over_honest_mean"] == pytest.approx(8 / 20)  # 4 + 4 against 20 in the last two rounds
