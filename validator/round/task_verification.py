"""A task round's verification (the edge between ``tasks`` and the pure ``consensus.verified``).

``verify_round`` asks the task's verifier about every answer (``tasks.verify``); ``consensus.verified`` then lets
the verdicts decide who is paid; ``task_record`` is the record's ``task`` section and ``task_line`` its words in
the daemon's line. Nothing here raises on a miner's text: an answer that cannot be read is a verdict with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from consensus.types import Evaluation, Round
from consensus.verified import KEPT, Verdicts, verified_evaluation
from tasks.source import Task
from tasks.verify import Verdict, verify
from validator.records import evaluation_record as rec


@dataclass(frozen=True)
class TaskOutcome:
    """A task round's verdicts (input order; None for a failed request) and the agreement's members before the
    verifier decided (whether the headcount would have been right)."""

    task: Task
    verdicts: tuple[Verdict | None, ...]
    agreed: tuple[int, ...]


def verify_round(round_: Round, task: Task, evaluation: Evaluation) -> tuple[Evaluation, TaskOutcome]:
    """The evaluation with the verifier deciding (``consensus.verified``) and the verdicts behind it."""
    verdicts = tuple(None if r.error is not None else verify(task, r.text) for r in round_.responses)
    decided = verified_evaluation(
        evaluation,
        Verdicts(
            right=tuple(v is not None and v.right for v in verdicts),
            readable=tuple(v is None or v.answer is not None for v in verdicts),
            details=tuple(_detail(v) for v in verdicts),
            answers=tuple(None if v is None else v.answer for v in verdicts),
        ),
    )
    return decided, TaskOutcome(task, verdicts, tuple(evaluation.members))


def _detail(v: Verdict | None) -> str:
    if v is None:
        return "failed"
    if v.answer is None:
        return v.reason
    said = " ".join(v.answer.split())[:80]
    return f"{'right' if v.right else v.reason}: read {said!r} ({v.how}), verifier score {v.score:.2f}"


def _right(outcome: TaskOutcome, evaluation: Evaluation) -> list[bool]:
    """Right and an answer of its own (a copy or an injection of a right answer is not)."""
    return [
        v is not None and v.right and r.reason not in KEPT
        for v, r in zip(outcome.verdicts, evaluation.results, strict=True)
    ]


def task_record(outcome: TaskOutcome, evaluation: Evaluation) -> rec.TaskRecord:
    """The record's ``task`` section."""
    right = _right(outcome, evaluation)
    answers = []
    for v, r, ok in zip(outcome.verdicts, evaluation.results, right, strict=True):
        reason = "" if ok else ("failed" if v is None else (r.reason.value if r.reason in KEPT else v.reason))
        answers.append(
            rec.TaskAnswerRecord(
                index=r.index,
                miner=r.miner,
                right=ok,
                score=0.0 if v is None else float(v.score),
                answer=None if v is None else v.answer,
                how="" if v is None else v.how,
                reason=reason,
            )
        )
    spec = outcome.task.spec
    return rec.TaskRecord(
        family=spec.family,
        version=spec.version,
        seed=spec.seed,
        expected=outcome.task.answer,
        right=sum(right),
        answers=tuple(answers),
    )


def task_line(task: rec.TaskRecord) -> str:
    """A task round in the daemon's line: the family and how many answers (not failed) were right."""
    answered = sum(1 for a in task.answers if a.reason != "failed")
    return f"task {task.family}: {task.right} of {answered} right"
