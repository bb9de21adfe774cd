"""Verifying miners' answers to a task with the task's own verifier (pure).

``verify(task, reply)``: ``tasks.extract`` reads the reply, the generator's ``score_answer`` scores each reading
of the one span, the best counts. An answer is right only at the verifier's full score (``RIGHT_AT``): the
library's verifiers give partial credit to near misses and to strings that merely contain the answer
(``"2660 or 2661"`` scores 0.5 against ``2660``), so partial credit pays nothing. A reply nothing can be read
from, or one the verifier raises on, is wrong with its reason; nothing here raises on a miner's text.
"""

from __future__ import annotations

from dataclasses import dataclass

from tasks.extract import extract
from tasks.source import Task, dataset

RIGHT_AT = 1.0


@dataclass(frozen=True)
class Verdict:
    """One reply judged: the verifier's best score over the readings, the reading it scored, why when wrong."""

    score: float  # the verifier's score in [0, 1]
    answer: str | None  # the reading verified (the best scoring); None when nothing was read
    how: str  # where the answer was found (tasks.extract.Extracted.how); "" when unreadable
    reason: str = ""  # "" when right; else "wrong", "unreadable: ..." or "verifier error: ..."

    @property
    def right(self) -> bool:
        return self.score >= RIGHT_AT


def verify(task: Task, reply: str) -> Verdict:
    """The verdict on ``reply`` (module docstring)."""
    read = extract(reply, task.question)
    if not read.readings:
        return Verdict(0.0, None, "", f"unreadable: {read.reason}")
    ds = dataset(task.spec)
    best, best_answer, error = 0.0, read.readings[0], ""
    for reading in read.readings:
        try:
            score = float(ds.score_answer(reading, dict(task.entry)))
        except Exception as exc:  # noqa: BLE001 - a verifier raising on a miner's text is a wrong answer, not a crash
            error = f"verifier error: {type(exc).__name__}: {str(exc)[:120]}"
            continue
        score = min(1.0, max(0.0, score)) if score == score else 0.0
        if score > best:
            best, best_answer = score, reading
    if best >= RIGHT_AT:
        return Verdict(1.0, best_answer, read.how)
    return Verdict(best, best_answer, read.how, error if error and best == 0.0 else "wrong")
