"""The LM's grade of a round's answers, within the round's LM budget (issue 38; ``lm.grade``).

Called by ``validator.signals.collect_signals`` after the other LM checks, with what is left of
the round's budget. Each answered response (not failed, empty or a copy: ``CheckPlan.answered``)
is graded once per (prompt, reference, answer, model, scorer): the process keeps its ratings
(``lm.ratings.RatingCache`` in memory, bounded), so a verbatim copy in the same round, a canary
asked again or the same answer in a later round costs no call. The answer reaches the LM as a
reader sees it (``consensus.text.visible``), fenced as data, with any text that addresses the
evaluator named in the prompt (``consensus.injection.evaluator_signals``).

What the budget did not reach is recorded (as ``SkippedCheck("grade", i, reason)`` by the caller) and never
guessed: the grades become the round's ``Signals.lm_grade`` only when every answered response
has one; otherwise the round is left ungraded, with a stage-level record saying how many were.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from consensus.injection import evaluator_signals
from consensus.text import visible
from consensus.types import Round
from lm.client import labelled
from lm.gating import Budget, run_bounded
from lm.grade import SCORER, Grade, grade
from lm.ratings import RatingCache, rating_key

MAX_KEPT = 200_000  # ratings the process keeps (about 20 MB); past it the cache starts over
_RATINGS = RatingCache()
_LOCK = threading.Lock()


@dataclass(frozen=True)
class GradeCheck:
    """The LM's grade of one answer (``lm.grade``): the expected rating 1..5, or None and why."""

    index: int
    rating: float | None
    reason: str | None = None
    cached: bool = False  # the rating of the same (prompt, reference, answer, model, scorer) given before


def _remember(key: str, rating: float | None, why: str | None) -> None:
    with _LOCK:
        if len(_RATINGS) >= MAX_KEPT:
            _RATINGS.ratings.clear()
            _RATINGS.reasons.clear()
        _RATINGS.put(key, rating, why)


def forget() -> None:
    """Drop the process's ratings (tests)."""
    with _LOCK:
        _RATINGS.ratings.clear()
        _RATINGS.reasons.clear()


def grade_round(
    round_: Round, todo: Sequence[int], lm, workers: int, budget: Budget
) -> tuple[dict[int, float] | None, tuple[GradeCheck, ...], list[tuple[int | None, str]]]:
    """(grades in [0, 1] for every index of ``todo`` or None, every check, what was skipped: (index or None
    for the whole stage, reason))."""
    model = str(getattr(lm.client, "name", "") or getattr(lm.client, "model", "") or "")
    texts = {i: visible(round_.responses[i].text) for i in todo}
    keys = {i: rating_key(round_.prompt, round_.reference, texts[i], model, SCORER) for i in todo}
    checks: dict[int, GradeCheck] = {}
    with _LOCK:
        for i in todo:
            if keys[i] in _RATINGS:
                checks[i] = GradeCheck(i, _RATINGS.get(keys[i]), _RATINGS.reasons.get(keys[i]), cached=True)
    # one call per distinct key: copies of one answer in a round share it
    first: dict[str, int] = {}
    for i in todo:
        if i not in checks:
            first.setdefault(keys[i], i)

    def one(i: int) -> Grade:
        text = texts[i]
        return grade(
            labelled(lm.client, "grade", round_.responses[i].miner),
            round_.prompt,
            text,
            reference=round_.reference,
            flagged=evaluator_signals(text),
        )

    out = run_bounded(one, list(first.values()), workers=workers, budget=budget)
    for key, i in first.items():
        if i not in out.done:
            continue
        g = out.done[i]
        if g.rating is not None or not (g.reason or "").startswith("call failed"):  # a failed call is asked again
            _remember(key, g.rating, g.reason)
    skipped: list[tuple[int | None, str]] = []
    for i in todo:
        if i in checks:
            continue
        source = first[keys[i]]
        if source in out.done:
            g = out.done[source]
            checks[i] = GradeCheck(i, g.rating, g.reason, cached=source != i)
        else:
            skipped.append((i, out.skipped.get(source, budget.reason)))
    graded = {i: c for i, c in checks.items() if c.rating is not None}
    ordered = tuple(checks[i] for i in sorted(checks))
    if len(graded) == len(todo):
        return {i: Grade(c.rating).score or 0.0 for i, c in graded.items()}, ordered, skipped
    skipped.append(
        (None, f"not applied: {len(graded)} of {len(todo)} answers graded (a partly graded round is not graded)")
    )
    return None, ordered, skipped
