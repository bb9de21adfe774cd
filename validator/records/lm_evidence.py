"""The LM's evidence for one round, stored beside it, so a re-evaluation without the LM changes only what changed.

With the LM on, a round's signals come from LM calls: the polarity labels and their leaning,
each member's short answer and agreement, the members whose text does not state theirs, the
arbitration's verdicts, the judge's reference scores, what was skipped,
and the narrative. The NLI judge's verdicts (``judge.nli``: each answer's P(it follows from the reference)) are
kept here too, with or without the LM (``lm`` "none" when only the NLI judge was asked), under ``nli``, the model
that gave them. ``LMEvidence`` holds all of it as the round used it; ``RoundWriter``
stores it as ``rounds/<round>/lm-evidence.json`` before the record (``keys.lm_evidence``).

Store replay and what-if run without the LM: they read the evidence back
(``validator.records.reader.RoundReader.evidence``) and hand it to the round (``validator.round.stages.run_stages(evidence=)``), which
uses these signals instead of asking again. The same answers, embeddings and settings give the
same record, byte for byte; a changed setting changes only what it changes. The narrative is
reused only while the facts it was written from (``narrative.narrate.facts_digest``) are the
same; otherwise the template is written. What the evidence cannot know: an answer that the
original round's LM never checked (a changed config moved it into the dominant cluster) has no
LM signal offline, as when the budget did not reach it; ``validator replay --lm`` asks the LM.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from consensus.arbitration import ArbitrationCheck
from consensus.evidence import Collected, LMChecks, PolarityCheck, ReferenceCheck, SkippedCheck
from consensus.signals import Signals
from consensus.types import Polarity
from lm.factual import FactualCheck
from storage.codec import dumps

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
    lm: str  # the client's name: server and model (never a token); NO_LM when only the NLI judge was asked
    signals: Signals  # the LM's fields only (LM_SIGNALS: polarity, leaning, reference scores, SelectIT, factual, ...)
    checks: LMChecks = LMChecks()
    narrative: NarrativeEvidence | None = None  # None: no narrative asked of the LM (yet: the daemon adds it)
    nli: str | None = None  # the NLI judge's model when ``signals.reference_entailment`` holds its verdicts

    @classmethod
    def of(
        cls,
        round_id: str,
        lm: str,
        collected: Collected,
        signals: Signals,
        narrative: NarrativeEvidence | None = None,
        nli: str | None = None,
    ) -> LMEvidence:
        """The evidence of a round evaluated with the LM: ``signals`` are the ones the evaluation read."""
        kept = Signals(**{name: getattr(signals, name) for name in LM_SIGNALS})
        return cls(
            round_id, lm, kept, collected.checks, narrative, nli if kept.reference_entailment is not None else None
        )

    @classmethod
    def judged(cls, round_id: str, nli: str, entailment: Mapping[int, float]) -> LMEvidence:
        """The evidence of a round evaluated without the LM whose answers the NLI judge ``nli`` read."""
        return cls(round_id, NO_LM, Signals(reference_entailment=dict(entailment)), nli=nli)

    def collected(self, reference_cos: Mapping[int, float] | None, prompt_cos: Mapping[int, float] | None) -> Collected:
        """The round's ``Collected`` as if the LM had just answered: these signals and the embedding ones."""
        signals = replace(self.signals, reference_similarity=reference_cos, prompt_similarity=prompt_cos)
        return Collected(signals, self.checks)

    def with_narrative(self, narrative: NarrativeEvidence) -> LMEvidence:
        return replace(self, narrative=narrative)

    # ---- the stored form ---------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        checks = self.checks
        signals = {name: write(getattr(self.signals, name)) for name, (write, _) in LM_SIGNALS.items()}
        for name in OMITTED_WHEN_NONE:  # evidence without them is written as before they existed
            if signals[name] is None:
                del signals[name]
        return {
            "schema": SCHEMA,
            "round_id": self.round_id,
            "lm": self.lm,
            **({} if self.nli is None else {"nli": self.nli}),
            "signals": signals,
            "polarity_checks": [
                {
                    "index": p.index,
                    "label": p.label,
                    "score": p.score,
                    "expected": _float(p.expected),
                    "fallback": p.fallback,
                }
                for p in checks.polarity_checks
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
                for c in checks.factual_checks
            ],
            "arbitration": None
            if checks.arbitration is None
            else {
                "question": checks.arbitration.question,
                "answer": checks.arbitration.answer,
                "confidence": _float(checks.arbitration.confidence),
                "groups": checks.arbitration.groups,
                "agrees": _by_index(checks.arbitration.agrees, bool),
                "skipped": checks.arbitration.skipped,
                "from_text": list(checks.arbitration.from_text),
            },
            "reference_checks": [
                {"index": j.index, "quality": j.quality, "score": _float(j.score), "error": j.error}
                for j in checks.reference_checks
            ],
            "skipped": [{"stage": k.stage, "index": k.index, "reason": k.reason} for k in checks.skipped],
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
            # the signals added after the first evidence may be absent: read as None
            signals = Signals(
                **{name: read(s.get(name) if name in LATER else s[name]) for name, (_, read) in LM_SIGNALS.items()}
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
                checks=LMChecks(
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
                    skipped=tuple(
                        SkippedCheck(str(k["stage"]), _opt(k["index"], int), str(k["reason"])) for k in doc["skipped"]
                    ),
                ),
                narrative=None
                if n is None
                else NarrativeEvidence(str(n["kind"]), str(n["text"]), str(n["facts"]), _opt(n["skipped"], str)),
                nli=_opt(doc.get("nli"), str),
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


def _indexed(write: Callable[[Any], Any], read: Callable[[Any], Any]) -> tuple[Callable, Callable]:
    """A per-response signal's JSON form: each value through ``write``, read back through ``read``."""
    return (lambda values: _by_index(values, write)), (lambda doc: _read_index(doc, read))


def _unstated(values: Collection[int] | None) -> list[int] | None:
    return None if values is None else sorted(int(i) for i in values)


def _read_unstated(doc: Any) -> frozenset[int] | None:
    return None if doc is None else frozenset(int(i) for i in doc)


# The LM's fields of ``Signals``, in their stored order, each with (write, read) of its JSON form: the evidence
# keeps these and nothing else (the embedding similarities are computed again; entities are the round's own)
LM_SIGNALS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "polarity": _indexed(lambda p: p.value, Polarity),
    "polarity_leaning": _indexed(float, float),
    "reference_scores": _indexed(float, float),
    "factual_agreement": _indexed(float, float),
    "factual_unstated": (_unstated, _read_unstated),
    "arbitration": _indexed(bool, _bool),
    "lm_grade": _indexed(float, float),
    "figure_contradictions": _indexed(str, str),
    # the NLI judge's P(follows from the reference) per answer (judge.nli): not the LM's, stored beside its signals
    "reference_entailment": _indexed(float, float),
}
# absent in evidence stored before the grade (7cad62d), and before the NLI judge's verdicts were stored (2026-11-29)
LATER = frozenset({"lm_grade", "figure_contradictions", "reference_entailment"})
OMITTED_WHEN_NONE = ("reference_entailment",)  # not written when absent: older evidence reads back byte for byte
NO_LM = "none"  # ``LMEvidence.lm`` of a round evaluated without the LM (only the NLI judge was asked)
# Evidence stored before commit 663e260 (2026-11-26) also holds "selectit_confidences" and the signal
# "selectit_confidence" (SelectIT's confidence for answers that gave none, ``lm.selectit_confidence``, retired:
# issue 34), which nothing reads since.
# Evidence stored with the retired grade stage on (``lm.grade``, commits 7cad62d to 663e260) also holds "grade_checks": the
# checks behind ``lm_grade``, which nothing reads since (the lab rates answers itself, ``benchmarks.lm_grades``).


def encode_evidence(evidence: LMEvidence) -> bytes:

    return dumps(evidence.to_json())
