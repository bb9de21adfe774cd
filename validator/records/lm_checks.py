"""What the LM's checks of a round said, as values: what ``validator.round.gather_evidence.gather_evidence`` gathers.

``Collected`` is a round's signals (``consensus.signals.Signals``) with the ``LMChecks`` behind them: each
check's verdict (polarity, factual, arbitration, the judge against the reference) and
what did not run and why. The evaluation record lists them (``validator.round.evaluate.build_record``) and the
LM evidence stores them (``validator.records.lm_evidence.LMEvidence``), so a replay without the LM uses them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from consensus.signals import Signals

if TYPE_CHECKING:
    from consensus.arbitration import ArbitrationCheck
    from lm.factual import FactualCheck


@dataclass(frozen=True)
class PolarityCheck:
    index: int
    label: str
    score: int
    expected: float | None
    fallback: bool


@dataclass(frozen=True)
class ReferenceCheck:
    index: int
    quality: int | None  # the judge's 1..5; None when it gave no valid verdict
    score: float | None  # (quality - 1) / 4
    error: str | None


@dataclass(frozen=True)
class SkippedCheck:
    """An LM check that did not run or gave nothing: stage, response index (None: the whole stage), why."""

    stage: str  # "polarity", "factual", "reference", "figures"
    index: int | None
    reason: str


@dataclass(frozen=True)
class LMChecks:
    """What each of the LM's checks of a round said, or why it did not run (the record's and the evidence's lists)."""

    polarity_checks: tuple[PolarityCheck, ...] = ()
    factual_checks: tuple[FactualCheck, ...] = ()
    arbitration: ArbitrationCheck | None = None
    reference_checks: tuple[ReferenceCheck, ...] = ()
    skipped: tuple[SkippedCheck, ...] = ()


@dataclass(frozen=True)
class Collected:
    """A round's signals, the LM's checks behind them (none without the LM) and the seconds each stage took."""

    signals: Signals
    checks: LMChecks = LMChecks()
    timings: Mapping[str, float] = field(default_factory=dict)
