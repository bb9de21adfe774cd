"""The LM's evidence for one round, stored beside it, so a re-evaluation without the LM changes only what changed.

With the LM on, a round's signals come from LM calls: the polarity labels and their leaning,
each member's short answer and agreement, the members whose text does not state theirs, the
arbitration's verdicts, the judge's reference scores, SelectIT confidences, what was skipped,
and the narrative. ``LMEvidence`` holds all of it as the round used it; ``RoundWriter``
stores it as ``rounds/<round>/lm-evidence.json`` before the record (``keys.lm_evidence``).

Store replay and what-if run without the LM: they read the evidence back
(``validator.reader.RoundReader.evidence``) and hand it to the round (``validator.round_stages.run_round(evidence=)``), which
uses these signals instead of asking again. The same answers, embeddings and settings give the
same record, byte for byte; a changed setting changes only what it changes. The narrative is
reused only while the facts it was written from (``narrative.narrate.facts_digest``) are the
same; otherwise the template is written. What the evidence cannot know: an answer that the
original round's LM never checked (a changed config moved it into the dominant cluster) has no
LM signal offline, as when the budget did not reach it; ``validator replay --lm`` asks the LM.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from consensus.signals import Signals
from consensus.types import Polarity
from lm.arbitrate import ArbitrationCheck
from lm.factual import FactualCheck
from validator.signals import Collected, GradeCheck, PolarityCheck, ReferenceCheck, SkippedCheck

SCHEMA = "consensus-validator/lm-evidence/1"


class EvidenceError(ValueError):
    """A stored evidence document that cannot be read; the message names the key and the field."""


@dataclass(frozen=True)
class NarrativeEvidence:
    """The narrative the LM wrote (or the template it fell back to) and the digest of what it was written from."""

    kind: str  # "lm" or "template"
    text: str
    facts: str  # narrative.narrate.facts_digest of the round it describes
    skipped: str | None = None  # the narrative's LM budget was spent (recorded in the record's lm_skipped)


@dataclass(frozen=True)
class LMEvidence:
    """What the LM said about one round, as the round used it (module docstring)."""

    round_id: str
    lm: str  # the client's name: server and model (never a token)
    signals: Signals  # the LM's fields only (polarity, leaning, reference scores, SelectIT, factual, arbitration)
    polarity_checks: tuple[PolarityCheck, ...] = ()
    factual_checks: tuple[FactualCheck, ...] = ()
    arbitration: ArbitrationCheck | None = None
    reference_checks: tuple[ReferenceCheck, ...] = ()
    selectit_confidences: Mapping[int, float] = field(default_factory=dict)
    skipped: tuple[SkippedCheck, ...] = ()
    narrative: NarrativeEvidence | None = None  # None: no narrative asked of the LM (yet: the daemon adds it)
    grade_checks: tuple[GradeCheck, ...] = ()  # the LM's grade of each answer (lm.grade)

    @classmethod
    def of(
        cls, round_id: str, lm: str, collected: Collected, signals: Signals, narrative: NarrativeEvidence | None = None
    ) -> LMEvidence:
        """The evidence of a round evaluated with the LM: ``signals`` are the ones the evaluation read."""
        kept = Signals(
            polarity=signals.polarity,
            polarity_leaning=signals.polarity_leaning,
            reference_scores=signals.reference_scores,
            selectit_confidence=signals.selectit_confidence,
            factual_agreement=signals.factual_agreement,
            factual_unstated=signals.factual_unstated,
            arbitration=signals.arbitration,
            lm_grade=signals.lm_grade,
            figure_contradictions=signals.figure_contradictions,
        )
        return cls(
            round_id,
            lm,
            kept,
            tuple(collected.polarity_checks),
            tuple(collected.factual_checks),
            collected.arbitration,
            tuple(collected.reference_checks),
            dict(collected.selectit_confidences),
            tuple(collected.skipped),
            narrative,
            tuple(collected.grade_checks),
        )

    def collected(self, reference_cos: Mapping[int, float] | None, prompt_cos: Mapping[int, float] | None) -> Collected:
        """The round's ``Collected`` as if the LM had just answered: these signals and the embedding ones."""
        signals = replace(self.signals, reference_similarity=reference_cos, prompt_similarity=prompt_cos)
        return Collected(
            signals,
            self.polarity_checks,
            self.factual_checks,
            self.arbitration,
            self.reference_checks,
            dict(self.selectit_confidences),
            self.skipped,
            grade_checks=self.grade_checks,
        )

    def with_narrative(self, narrative: NarrativeEvidence) -> LMEvidence:
        return replace(self, narrative=narrative)

    # ---- the stored form ---------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        s = self.signals
        return {
            "schema": SCHEMA,
            "round_id": self.round_id,
            "lm": self.lm,
            "signals": {
                "polarity": _by_index(s.polarity, lambda v: v.value),
                "polarity_leaning": _by_index(s.polarity_leaning, float),
                "reference_scores": _by_index(s.reference_scores, float),
                "selectit_confidence": _by_index(s.selectit_confidence, float),
                "factual_agreement": _by_index(s.factual_agreement, float),
                "factual_unstated": None if s.factual_unstated is None else sorted(int(i) for i in s.factual_unstated),
                "arbitration": _by_index(s.arbitration, bool),
                "lm_grade": _by_index(s.lm_grade, float),
                "figure_contradictions": _by_index(s.figure_contradictions, str),
            },
            "polarity_checks": [
                {
                    "index": p.index,
                    "label": p.label,
                    "score": p.score,
                    "expected": _float(p.expected),
                    "fallback": p.fallback,
                }
                for p in self.polarity_checks
            ],
            "factual_checks": [
                {
                    "index": c.index,
                    "anchors": list(c.anchors),
                    "agreement": _float(c.agreement),
                    "score": c.score,
                    "skipped": c.skipped,
                    "answer": c.answer,
                    "stated": c.stated,
                }
                for c in self.factual_checks
            ],
            "arbitration": None
            if self.arbitration is None
            else {
                "question": self.arbitration.question,
                "answer": self.arbitration.answer,
                "confidence": _float(self.arbitration.confidence),
                "groups": self.arbitration.groups,
                "agrees": _by_index(self.arbitration.agrees, bool),
                "skipped": self.arbitration.skipped,
                "from_text": list(self.arbitration.from_text),
            },
            "reference_checks": [
                {"index": j.index, "quality": j.quality, "score": _float(j.score), "error": j.error}
                for j in self.reference_checks
            ],
            "selectit_confidences": _by_index(self.selectit_confidences, float) or {},
            "grade_checks": [
                {"index": g.index, "rating": _float(g.rating), "reason": g.reason, "cached": g.cached}
                for g in self.grade_checks
            ],
            "skipped": [{"stage": k.stage, "index": k.index, "reason": k.reason} for k in self.skipped],
            "narrative": None
            if self.narrative is None
            else {
                "kind": self.narrative.kind,
                "text": self.narrative.text,
                "facts": self.narrative.facts,
                "skipped": self.narrative.skipped,
            },
        }

    @classmethod
    def from_json(cls, doc: Any, source: str) -> LMEvidence:
        """A stored evidence document; ``EvidenceError`` names ``source`` and what is wrong."""
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            schema = doc.get("schema") if isinstance(doc, dict) else None
            raise EvidenceError(f"{source}: not LM evidence (schema {schema!r}, expected {SCHEMA!r})")
        try:
            s = doc["signals"]
            signals = Signals(
                polarity=_read_index(s["polarity"], Polarity),
                polarity_leaning=_read_index(s["polarity_leaning"], float),
                reference_scores=_read_index(s["reference_scores"], float),
                selectit_confidence=_read_index(s["selectit_confidence"], float),
                factual_agreement=_read_index(s["factual_agreement"], float),
                factual_unstated=None
                if s["factual_unstated"] is None
                else frozenset(int(i) for i in s["factual_unstated"]),
                arbitration=_read_index(s["arbitration"], _bool),
                lm_grade=_read_index(s.get("lm_grade"), float),  # absent in evidence stored before the grade
                figure_contradictions=_read_index(s.get("figure_contradictions"), str),  # absent before session 17
            )
            a = doc["arbitration"]
            arbitration = (
                None
                if a is None
                else ArbitrationCheck(
                    question=str(a["question"]),
                    answer=_opt(a["answer"], str),
                    confidence=_opt(a["confidence"], float),
                    groups=int(a["groups"]),
                    agrees=_read_index(a["agrees"], _bool) or {},
                    skipped=_opt(a["skipped"], str),
                    from_text=tuple(int(i) for i in a["from_text"]),
                )
            )
            n = doc["narrative"]
            return cls(
                round_id=str(doc["round_id"]),
                lm=str(doc["lm"]),
                signals=signals,
                polarity_checks=tuple(
                    PolarityCheck(
                        int(p["index"]),
                        str(p["label"]),
                        int(p["score"]),
                        _opt(p["expected"], float),
                        _bool(p["fallback"]),
                    )
                    for p in doc["polarity_checks"]
                ),
                factual_checks=tuple(
                    FactualCheck(
                        index=int(c["index"]),
                        anchors=tuple(int(i) for i in c["anchors"]),
                        agreement=_opt(c["agreement"], float),
                        score=_opt(c["score"], int),
                        skipped=_opt(c["skipped"], str),
                        answer=_opt(c["answer"], str),
                        stated=_opt(c["stated"], _bool),
                    )
                    for c in doc["factual_checks"]
                ),
                arbitration=arbitration,
                reference_checks=tuple(
                    ReferenceCheck(
                        int(j["index"]), _opt(j["quality"], int), _opt(j["score"], float), _opt(j["error"], str)
                    )
                    for j in doc["reference_checks"]
                ),
                selectit_confidences=_read_index(doc["selectit_confidences"], float) or {},
                skipped=tuple(
                    SkippedCheck(str(k["stage"]), _opt(k["index"], int), str(k["reason"])) for k in doc["skipped"]
                ),
                narrative=None
                if n is None
                else NarrativeEvidence(str(n["kind"]), str(n["text"]), str(n["facts"]), _opt(n["skipped"], str)),
                grade_checks=tuple(
                    GradeCheck(int(g["index"]), _opt(g["rating"], float), _opt(g["reason"], str), _bool(g["cached"]))
                    for g in doc.get("grade_checks", ())
                ),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise EvidenceError(f"{source}: malformed LM evidence ({type(exc).__name__}: {exc})") from None


def _float(x: float | None) -> float | None:
    return None if x is None else float(x)


def _bool(x: Any) -> bool:
    if not isinstance(x, bool):
        raise TypeError(f"expected true or false, got {x!r}")
    return x


def _opt(x: Any, cast) -> Any:
    return None if x is None else cast(x)


def _by_index(values: Mapping[int, Any] | None, cast) -> dict[str, Any] | None:
    """A per-response mapping as JSON: index keys as strings, in index order."""
    return None if values is None else {str(int(i)): cast(v) for i, v in sorted(values.items())}


def _read_index(values: Any, cast) -> dict[int, Any] | None:
    if values is None:
        return None
    if not isinstance(values, dict):
        raise TypeError(f"expected an object of response indices, got {type(values).__name__}")
    return {int(k): cast(v) for k, v in values.items()}


def encode_evidence(evidence: LMEvidence) -> bytes:
    from storage.codec import dumps

    return dumps(evidence.to_json())
