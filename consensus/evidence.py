"""The LM's answers about a round, read once by the pure rules: what the evaluation decides from.

``lm.evidence.ask_round`` asks the LM every question about a round in one pass and returns what it said as one
value (``lm.evidence.RoundAnswers``: the questions, the prompt's kind, each answer as a reader sees it, every
answer, what the budget left behind); ``read_answers`` reads that value once, with no LM call: the polarity labels
(or the yes or no of the factual check's short answers), the judge's reference scores, the factual agreement,
the arbitration's verdict (``consensus.arbitration``), each short answer against the reference's
(``consensus.factual_stage``), the figure contradictions the LM confirmed (``consensus.figures``). What it returns
(``Collected``) is the signals ``consensus.pipeline.decide`` reads (``Signals``) and the checks the record and the
stored evidence list (``LMChecks``; ``validator.records.lm_evidence`` stores them, so a replay without the LM
reads them back instead). ``consensus`` does not import ``lm``: the answers are read through ``LMAnswers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from consensus.arbitration import REFERENCE, ArbitrationCheck, PromptReading, ShortAnswer, read_arbitration
from consensus.fact_match import agrees_with_reference, opening_yes_no, says_no_then_yes, yes_no_labels
from consensus.figures import FigureCheck, read_figures
from consensus.signals import Signals
from consensus.text import visible
from consensus.types import Polarity, Round

NOT_YES_NO = "skipped: not a yes/no prompt"
EXPLANATION = "skipped: the prompt asks for an explanation, which has no short answer to compare"
REFERENCE_SHORT_NEEDS_FACTUAL = (
    "skipped: lm.reference_mode 'short' reads the factual check's short answers, and lm.factual is off"
)


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


class FactualReading(ShortAnswer, Protocol):
    """A member's short answer as the factual check left it (``lm.factual.FactualCheck``), and whether its text
    states it and why it has none."""

    @property
    def stated(self) -> bool | None: ...
    @property
    def skipped(self) -> str | None: ...


@dataclass(frozen=True)
class LMChecks:
    """What each of the LM's checks of a round said, or why it did not run (the record's and the evidence's lists)."""

    polarity_checks: tuple[PolarityCheck, ...] = ()
    factual_checks: tuple[FactualReading, ...] = ()  # lm.factual.FactualCheck
    arbitration: ArbitrationCheck | None = None
    reference_checks: tuple[ReferenceCheck, ...] = ()
    skipped: tuple[SkippedCheck, ...] = ()


@dataclass(frozen=True)
class Collected:
    """A round's signals, the LM's checks behind them (none without the LM) and the seconds each stage took."""

    signals: Signals
    checks: LMChecks = LMChecks()
    timings: Mapping[str, float] = field(default_factory=dict)


class LMAnswers(Protocol):
    """What the LM said about one round, in one value (``lm.evidence.RoundAnswers``; its parts are ``lm`` types,
    read here by their fields)."""

    @property
    def questions(self) -> Any: ...  # lm.evidence.Questions: what was asked
    @property
    def kind(self) -> PromptReading: ...  # lm.round_budget.PromptKind
    @property
    def seen(self) -> tuple[str, ...]: ...  # each answer as a reader sees it (consensus.text.visible)
    @property
    def explained(self) -> bool: ...
    @property
    def budget_reason(self) -> str: ...  # what a check the round's budget did not reach records
    @property
    def polarity(self) -> Any: ...  # lm.round_budget.Bounded[int, tuple[Polarity, lm.lm_score.ScoreResult]] | None
    @property
    def judged(self) -> Any: ...  # Bounded[int, ReferenceCheck] | None
    @property
    def factual(self) -> tuple[FactualReading, ...] | None: ...
    @property
    def arbitration(self) -> Any: ...  # lm.arbitrate.ArbitrationAsk | None
    @property
    def reference_short(self) -> Any: ...  # Bounded[int, str | None] | None
    @property
    def figures(self) -> Any: ...  # Bounded[int, str | None] | None: the value the LM read per suspect
    @property
    def timings(self) -> Mapping[str, float]: ...


def factual_agreement(checks: Sequence[FactualReading]) -> dict[int, float]:
    """The signal for the core: index -> agreement, for checks that gave one."""
    return {c.index: c.agreement for c in checks if c.agreement is not None}


def figure_contradictions(checks: Sequence[FigureCheck]) -> dict[int, str]:
    """The signal for the core: index -> why, for the suspects whose contradiction the LM confirmed."""
    return {
        c.index: f"{c.detail}; asked for its value of that fact, the LM read {c.reply!r} in it"
        for c in checks
        if c.contradicts
    }


def read_answers(
    round_: Round,
    answers: LMAnswers,
    reference_cos: Mapping[int, float] | None = None,
    prompt_cos: Mapping[int, float] | None = None,
) -> Collected:
    """What the LM said about ``round_`` (``answers``, one value), read once: the signals the core reads and the
    checks the record shows, in the order the checks were asked; ``reference_cos`` and ``prompt_cos``, the
    embedding similarities measured before the LM, pass through to the signals. No LM call."""
    q, kind = answers.questions, answers.kind
    skipped: list[SkippedCheck] = []
    labels: dict[int, Polarity] = {}
    leaning: dict[int, float] = {}
    polarity_checks: tuple[PolarityCheck, ...] = ()
    if q.polarity and not q.derived and not kind.yes_no:
        skipped.append(SkippedCheck("polarity", None, NOT_YES_NO))
    if answers.polarity is not None:
        done = answers.polarity.done
        # an LM failure (fallback 5) is no label at all: it must not count against the answer
        labels = {i: label for i, (label, res) in done.items() if not res.fallback}
        leaning = {
            i: float(res.expected if res.expected is not None else res.score)
            for i, (label, res) in done.items()
            if not res.fallback
        }
        polarity_checks = tuple(
            PolarityCheck(i, label.value, res.score, res.expected, res.fallback)
            for i, (label, res) in sorted(done.items())
        )
        skipped += [SkippedCheck("polarity", i, why) for i, why in sorted(answers.polarity.skipped.items())]
    judged: tuple[ReferenceCheck, ...] = ()
    if answers.judged is not None:
        judged = tuple(answers.judged.done[i] for i in sorted(answers.judged.done))
        skipped += [SkippedCheck("reference", i, why) for i, why in sorted(answers.judged.skipped.items())]
    factual_checks = answers.factual or ()
    factual = None
    if q.factual and q.members and answers.explained:
        skipped.append(SkippedCheck("factual", None, EXPLANATION))
    elif answers.factual is not None:
        factual = factual_agreement(factual_checks)
        skipped += [
            SkippedCheck("factual", c.index, c.skipped) for c in factual_checks if c.skipped and c.stated is not False
        ]
    arbitration = None
    if q.arbitrating and len(factual_checks) >= 2:
        asked = answers.arbitration
        arbitration = (
            ArbitrationCheck(round_.prompt, skipped=REFERENCE)  # the round has a reference answer: it decides
            if asked is None
            else read_arbitration(
                round_.prompt,
                factual_checks,
                asked.own,
                kind,
                waited=asked.waited,
                why=asked.why,
                # members the factual check did not reach are read from their text once the LM has decided
                texts={c.index: answers.seen[c.index] for c in factual_checks if c.answer is None},
            )
        )
        if arbitration.skipped is not None and arbitration.skipped == answers.budget_reason:
            skipped.append(SkippedCheck("arbitration", None, arbitration.skipped))
    if q.derived:
        labels, leaning, polarity_checks = _polarity_from_short_answers(factual_checks, round_)
    if q.reference_short:
        if q.factual:
            judged, more = _reference_by_short_answers(round_, factual_checks, answers)
            skipped += more
        else:
            skipped.append(SkippedCheck("reference", None, REFERENCE_SHORT_NEEDS_FACTUAL))
    figures: dict[int, str] = {}
    if answers.figures is not None:
        checked = read_figures(q.figures, answers.figures.done, answers.figures.skipped)
        figures = figure_contradictions(checked)
        skipped += [SkippedCheck("figures", c.index, c.skipped) for c in checked if c.skipped]
    scores = {j.index: j.score for j in judged if j.score is not None}
    signals = Signals(
        polarity=labels or None,
        polarity_leaning=leaning or None,
        reference_scores=scores or None,
        reference_similarity=reference_cos,
        prompt_similarity=prompt_cos,
        factual_agreement=factual or None,
        factual_unstated=frozenset(c.index for c in factual_checks if c.stated is False) or None,
        arbitration=None if arbitration is None else arbitration.signal(),
        figure_contradictions=figures or None,
    )
    checks = LMChecks(polarity_checks, tuple(factual_checks), arbitration, judged, tuple(skipped))
    return Collected(signals, checks, dict(answers.timings))


def _polarity_from_short_answers(
    checks: Sequence[FactualReading], round_: Round
) -> tuple[dict[int, Polarity], dict[int, float], tuple[PolarityCheck, ...]]:
    """Polarity labels (and a 0 / 10 leaning) from the yes or no of the factual check's short answers; a "no"
    whose own text opens "No," and then states the question's claim is unclear (``says_no_then_yes``); a member
    without a short answer (the budget, the LM gave none) by the "Yes" or "No" its text opens with, if any."""

    said = yes_no_labels({c.index: c.answer for c in checks if c.answer})
    for i, yes in said.items():
        if yes is False and says_no_then_yes(visible(round_.responses[i].text), round_.prompt):
            said[i] = None
    # a member the budget left without a short answer votes by its own first word ("Yes, ..." / "No, ..."): with
    # two of four reached, the embedded pool's boiling prompt was a 1-1 tie and no consensus (issue 46)
    for c in checks:
        if c.answer is None and c.stated is not False:
            read = opening_yes_no(visible(round_.responses[c.index].text), round_.prompt)
            if read is not None:
                said[c.index] = read
    labels = {
        i: Polarity.UNCLEAR if yes is None else Polarity.AFFIRMATIVE if yes else Polarity.NEGATIVE
        for i, yes in said.items()
    }
    leaning = {i: 10.0 if yes else 0.0 for i, yes in said.items() if yes is not None}
    checks_out = tuple(
        PolarityCheck(i, labels[i].value, 5 if (yes := said[i]) is None else 10 * yes, None, False)
        for i in sorted(labels)
    )
    return labels, leaning, checks_out


def _reference_by_short_answers(
    round_: Round, checks: Sequence[FactualReading], answers: LMAnswers
) -> tuple[tuple[ReferenceCheck, ...], list[SkippedCheck]]:
    """Each member's short answer against the reference's (a reference longer than a short answer was put in a
    few words by the LM, ``lm.evidence.ask_round``): 1.0 when it states the reference's answer, 0.0 when not."""

    said = {c.index: c.answer for c in checks if c.answer and c.stated is not False}
    silent = [c.index for c in checks if c.stated is False]  # its text states no answer: none agrees with the reference
    reference = (round_.reference or "").strip()
    if not said:
        return (), []
    if answers.reference_short is not None:
        reference = answers.reference_short.done.get(0) or ""
        if not reference:
            why = answers.reference_short.skipped.get(0) or "skipped: the LM gave no short answer for the reference"
            return (), [SkippedCheck("reference", None, why)]
    agrees = agrees_with_reference(said, reference, round_.prompt, yes_no=answers.kind.yes_no)
    agrees.update({i: False for i in silent})
    return tuple(ReferenceCheck(i, None, 1.0 if ok else 0.0, None) for i, ok in sorted(agrees.items())), []
