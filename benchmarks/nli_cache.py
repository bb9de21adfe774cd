"""The NLI judge's verdicts on the TruthfulQA rounds, cached on disk (``benchmarks.nli_judge``,
``benchmarks.truthfulqa_rounds --nli``): P(follows) by model + prompt version and the SHA-256 of the pair, one JSON
file per version under ``benchmarks/results/nli/``, so a variant of the scoring re-reads them without the model."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from consensus.types import Round
from judge.nli import MODEL, NliJudge, denial, load_judge, verdict

__all__ = ["CACHE", "COMBINED", "PRODUCT", "PROMPTS", "VerdictCache", "verdicts"]

CACHE = Path(__file__).resolve().parent / "results" / "nli"  # committed: a variant re-reads them without the model

# prompt version -> (question, reference, answer) -> (premise, hypothesis)
PROMPTS: dict[str, Callable[[str, str, str], tuple[str, str]]] = {
    "ref-ans-v1": lambda q, r, a: (r, a),
    "qref-qans-v1": lambda q, r, a: (f"{q} {r}", f"{q} {a}"),
    "ans-ref-v1": lambda q, r, a: (a, r),
    "qans-qref-v1": lambda q, r, a: (f"{q} {a}", f"{q} {r}"),
    # the question as context, labelled: "Question: Q Answer: reference" against "Question: Q Answer: answer"
    "qa-ref-ans-v1": lambda q, r, a: (f"Question: {q} Answer: {r}", f"Question: {q} Answer: {a}"),
    "qa-ans-ref-v1": lambda q, r, a: (f"Question: {q} Answer: {a}", f"Question: {q} Answer: {r}"),
    # a two-output judge has no "contradicts": does the answer's denial follow from the reference? (judge.nli.denial)
    "ref-notans-v1": lambda q, r, a: (r, denial(a)),
    "ans-notref-v1": lambda q, r, a: (a, denial(r)),  # does the reference's denial follow from the answer?
}
# verdicts combined from cached ones: name -> (prompt versions, how one answer's verdicts combine); "deny-v2" is what
# the product reads (judge.nli.reference_entailment), "both-v1" what it read before (the mean of both directions),
# "deny-v1" a variant measured (the answer's denial only, at 0.25)
COMBINED: dict[str, tuple[tuple[str, ...], Callable[..., float]]] = {
    "both-v1": (("ref-ans-v1", "ans-ref-v1"), lambda f, b: (f + b) / 2),
    "deny-v1": (("ref-ans-v1", "ans-ref-v1", "ref-notans-v1"), lambda f, b, d: max(0.0, (f + b) / 2 - 0.25 * d)),
    "deny-v2": (("ref-ans-v1", "ans-ref-v1", "ref-notans-v1", "ans-notref-v1"), verdict),
    "qboth-v1": (("qref-qans-v1", "qans-qref-v1"), lambda f, b: (f + b) / 2),
    "qa-both-v1": (("qa-ref-ans-v1", "qa-ans-ref-v1"), lambda f, b: (f + b) / 2),
}
PRODUCT = "deny-v2"


class VerdictCache:
    """P(follows) by model + prompt version and the SHA-256 of the pair, one JSON file per version."""

    def __init__(self, prompt: str, directory: Path = CACHE) -> None:
        self.path = directory / f"{MODEL}-pairwise--{prompt}.json"  # judge.nli: one pair a run
        self.values: dict[str, float] = json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}

    @staticmethod
    def key(premise: str, hypothesis: str) -> str:
        return hashlib.sha256(json.dumps([premise, hypothesis]).encode("utf-8", "surrogatepass")).hexdigest()[:24]

    def get(self, pairs: Sequence[tuple[str, str]], judge: Callable[[], NliJudge]) -> list[float]:
        missing = list(dict.fromkeys(p for p in pairs if self.key(*p) not in self.values))
        if missing:
            for p, v in zip(missing, judge().follows(missing)):
                self.values[self.key(*p)] = round(float(v), 5)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.values, sort_keys=True, indent=0), encoding="utf-8")
            os.replace(tmp, self.path)
        return [self.values[self.key(*p)] for p in pairs]


def verdicts(rounds: Sequence[Round], prompt: str) -> dict[str, dict[str, float]]:
    """Round id -> miner -> P(follows) for every answer of ``rounds`` against their reference, under ``prompt`` (a
    ``COMBINED`` one: its versions' verdicts combined, ``PRODUCT`` as the product combines them)."""
    if prompt in COMBINED:
        versions, combine = COMBINED[prompt]
        parts = [verdicts(rounds, p) for p in versions]
        return {rid: {m: combine(*(p[rid][m] for p in parts)) for m in by} for rid, by in parts[0].items()}
    build = PROMPTS[prompt]
    pairs = [build(r.prompt, r.reference or "", x.text) for r in rounds for x in r.responses]
    values = iter(VerdictCache(prompt).get(pairs, load_judge))
    return {r.round_id: {x.miner: next(values) for x in r.responses} for r in rounds}
