"""The evaluation record's ``task`` section (``validator.records.evaluation_record``, schema 1.7): a task round's task and verdicts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class TaskAnswerRecord:
    """One response to a task, as its verifier judged it (``tasks.verify``); ``answer`` is the miner's text read."""

    index: int
    miner: str
    right: bool  # the verifier's full score and an answer of its own (not a copy, not failed)
    score: float  # the verifier's best score over the readings, 0..1
    answer: str | None  # what was read and verified (untrusted text, at most 200 characters); None: nothing
    how: str  # where the answer was found ("answer line", "boxed", ...); "" when unreadable or not asked
    reason: str  # "" when right; "wrong", "unreadable: ...", "verifier error: ...", "failed", "copy", ...


@dataclass(frozen=True, kw_only=True)
class TaskRecord:
    """A task round (docs/daemon.md "Tasks"): the task and every answer's verdict; pay follows ``right``."""

    family: str
    version: str  # the generator library's version (reasoning-gym)
    seed: int
    expected: str  # the generator's answer
    right: int  # answers right
    answers: tuple[TaskAnswerRecord, ...]
