"""Everything the edges learn about a round before it is evaluated, as one frozen value.

The round is evaluated ONCE: the validator collects its signals first (the embedding model's
similarities to the prompt and the reference answer, the LM's polarity labels and their leaning,
the judge's reference scores, SelectIT confidences, operator entities, and, from the LM's factual
check, each member's factual agreement with the other members and, when the members disagree, whether
its short answer is the one the LM itself gives), then hands them to
``consensus.decide``. Every field is optional: a missing signal changes nothing, so a round
without an LM is judged by the embeddings alone. Keys are response indices (input order).
docs/consensus.md ("Signals") says which stage reads which field.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from consensus.types import Polarity


@dataclass(frozen=True)
class Signals:
    """Per-response evidence from the edges; the mappings are read, never modified."""

    polarity: Mapping[int, Polarity] | None = None  # the LM's yes / no / unclear label
    polarity_leaning: Mapping[int, float] | None = None  # the 0..10 score behind each label (5 = undecided)
    reference_scores: Mapping[int, float] | None = None  # the LM judge's agreement with the reference, in [0, 1]
    reference_similarity: Mapping[int, float] | None = None  # embedding cosine of each answer to the reference
    # the NLI judge's verdict, in [0, 1]: the mean of P(the answer follows from the reference) and the converse
    # (judge.nli); read by consensus.reference.support, which it can lower or raise short of a removal
    reference_entailment: Mapping[int, float] | None = None
    prompt_similarity: Mapping[int, float] | None = None  # embedding cosine of each answer to the prompt
    # embedding cosine of the prompt to the reference: how close the question alone comes (consensus.score)
    prompt_reference_similarity: float | None = None
    entities: Mapping[int, str] | None = None  # operator / coldkey / address per response (adds to Response.entity)
    factual_agreement: Mapping[int, float] | None = None  # share of the other members stating its short answer, [0, 1]
    factual_unstated: Collection[int] | None = None  # members whose text does not state their short answer
    # per checked member: does its short answer agree with the LM's own answer to the prompt (lm.arbitrate)?
    # Given only when the LM arbitrated (short answers that disagree, a confident LM); absent = abstained
    arbitration: Mapping[int, bool] | None = None
    # the LM's grade of every scored answer, in [0, 1] (benchmarks.lm_grade_scorer): the lab's cached ratings (benchmarks.lm_grades)
    # handed in as stored evidence, read only by the lab's blend (the product's stage was retired in commit 663e260 (2026-11-26));
    # given only when every answer the round scores was graded: a partly graded round has none
    lm_grade: Mapping[int, float] | None = None
    # members whose figure on a quantity most members agree on is another value, the LM having confirmed it
    # (lm.figures, consensus.figures): index -> why
    figure_contradictions: Mapping[int, str] | None = None

    @staticmethod
    def cosines(vectors: np.ndarray, target: np.ndarray) -> dict[int, float]:
        """Cosine of each unit (or zero) row of ``vectors`` (n, d) to the unit ``target`` (d,)."""
        x = np.asarray(vectors, dtype=np.float64) @ np.asarray(target, dtype=np.float64)
        return {i: float(np.clip(v, -1.0, 1.0)) for i, v in enumerate(x)}

    @classmethod
    def from_reference_vector(cls, vectors: np.ndarray, reference: np.ndarray, **others: Any) -> Signals:
        """Signals carrying the embedding similarity of every answer to the reference answer."""
        return cls(reference_similarity=cls.cosines(vectors, reference), **others)
