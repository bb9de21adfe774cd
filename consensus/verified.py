"""A task round's evaluation: the verifier's verdict decides who is paid, not agreement (pure).

On a round that asks a verifiable task (``tasks``, docs/daemon.md "Tasks") the answers have a known truth. The
one pass (``consensus.pipeline.decide``) runs as on every round, so copies, injections, empty and failed
answers and the one-voice groups (entities, linked identities) are what they are everywhere; then
``verified_evaluation`` lets the verifier decide the rest:

- a response removed for having no answer of its own (``KEPT``: error, empty, copy, injection) keeps its reason,
  except a copy whose answer is not its source's (``Verdicts.answers``): a reply that gives another answer than
  the text it restates gave is not that text's copy (two honest miners of one model wrote "The GCD of 6 and 20
  is 4. The GCD is the largest positive integer that divides both ..." and "... is 20 ...": the default daemon's
  records, 2026-11-29), so the verifier judges it as any other reply; a copy that keeps its source's answer
  stays a copy;
- every other response is in consensus with composite 100 when the verifier said right, and out with
  ``Reason.WRONG`` or ``Reason.UNREADABLE`` (composite 0) otherwise, whatever the clusters said: a wrong answer
  shared by a majority earns nothing and a lone right answer is paid;
- the consensus is reached when anyone is right, with score 1 (the pool is not scaled by agreement: the truth
  is known); the agreement the pass measured stays in the note.

The allocation then splits the pool among the right answers as it splits any round's (speed, one-voice groups).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from consensus.types import ConsensusResult, Evaluation, Reason

KEPT = frozenset({Reason.ERROR, Reason.EMPTY, Reason.COPY, Reason.INJECTION})


@dataclass(frozen=True)
class Verdicts:
    """The verifier's word on each response of a round (input order): right or not, and why not."""

    right: tuple[bool, ...]
    readable: tuple[bool, ...]  # False: nothing could be read as an answer
    details: tuple[str, ...]  # what was read and the verifier's score, or why nothing was read
    answers: tuple[str | None, ...] | None = None  # the reading each verdict judged (None: nothing read); None: unknown

    def __post_init__(self) -> None:
        if not len(self.right) == len(self.readable) == len(self.details):
            raise ValueError("verdicts: right, readable and details differ in length")
        if self.answers is not None and len(self.answers) != len(self.right):
            raise ValueError("verdicts: answers and right differ in length")

    def same_answer(self, i: int, j: int) -> bool:
        """Whether replies ``i`` and ``j`` gave one answer (True when the readings are unknown)."""
        if self.answers is None:
            return True
        a, b = self.answers[i], self.answers[j]
        if a is None or b is None:
            return a is None and b is None
        return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def verified_evaluation(evaluation: Evaluation, verdicts: Verdicts) -> Evaluation:
    """``evaluation`` with the verifier's verdicts deciding membership and composites (module docstring)."""
    if len(verdicts.right) != len(evaluation.results):
        raise ValueError(f"{len(verdicts.right)} verdicts for {len(evaluation.results)} responses")
    results = []
    for r in evaluation.results:
        if r.reason in KEPT and not (
            r.reason is Reason.COPY and r.copy_of is not None and not verdicts.same_answer(r.index, r.copy_of)
        ):
            results.append(r)
            continue
        i = r.index
        right = verdicts.right[i]
        reason = Reason.IN_CONSENSUS if right else (Reason.WRONG if verdicts.readable[i] else Reason.UNREADABLE)
        score = dataclasses.replace(r.score, composite=100.0 if right else 0.0)
        detail = verdicts.details[i]
        if r.reason is Reason.COPY:  # re-judged above: it restates another reply's text, not its answer
            detail += f"; restates response {r.copy_of}'s text with another answer: not its copy"
        results.append(dataclasses.replace(r, reason=reason, detail=detail, score=score, copy_of=None))
    members = tuple(r.index for r in results if r.reason is Reason.IN_CONSENSUS)
    answered = sum(1 for r in results if r.reason not in KEPT)
    c = evaluation.consensus
    consensus = ConsensusResult(
        score=1.0 if members else 0.0,
        mean=c.mean,
        std=c.std,
        pairs=c.pairs,
        reached=bool(members),
        polarity_agreed=None,
        majority_polarity=None,
        note=f"verified task: {len(members)} of {answered} answers right (agreement score {c.score:.3f})",
    )
    return dataclasses.replace(evaluation, results=tuple(results), members=members, consensus=consensus)
