"""The deterministic narrative: the seed's five parts, from numbers alone.

Used when no LM narrative is configured (and, with the LM layer, when the LM
fails). It is marked as a template in the record. Miner ids are quoted with
``repr`` and no response text is copied in, so nothing a miner wrote can
speak in the narrative's voice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from consensus.types import Evaluation, Reason, Round

SECTIONS = (
    "Original prompt analysis",
    "Response comparison",
    "Evaluation methodology",
    "Consensus classification",
    "Final consensus determination",
)


YES_NO_STARTS = frozenset(
    {"is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "will", "would", "has", "have"}
)
# the method, as the validator runs it; the LM narrative is given this text and checked against it
METHOD = (
    "Responses were embedded with all-MiniLM-L6-v2 and compared by cosine similarity. Empty and failed "
    "answers were set aside, copies paid once, answers below the length threshold filtered, outliers found "
    "with LocalOutlierFactor, the rest clustered agglomeratively, and the dominant cluster scored as "
    "mu + lambda*sigma."
)


def prompt_kind(prompt: str) -> str:
    """'a yes/no question', 'an open question' or 'an instruction', from the prompt's form alone."""
    words = prompt.split()
    if not prompt.rstrip().endswith("?"):
        return "an instruction"
    return "a yes/no question" if words and words[0].lower() in YES_NO_STARTS else "an open question"


def _article(word: str) -> str:
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _miner(name: str, limit: int = 24) -> str:
    short = name if len(name) <= limit else name[: limit - 1] + "\u2026"
    return repr(short)


@dataclass(frozen=True)
class NarrativeInput:
    """What a round's narrative is written from (the template, the LM's facts, the fact check, the digest that
    says when a stored narrative still holds): the round, its evaluation, the units paid to each response (by
    index), the pool and the heatmap's key (None: no heatmap). Numbers and ids only: no answer's text is read."""

    round: Round
    evaluation: Evaluation
    amounts: tuple[int, ...]
    pool: int
    heatmap_key: str | None = None


def template_narrative(told: NarrativeInput) -> str:
    """Plain-text narrative with one heading per part of the seed's structure."""
    round_, evaluation, heatmap_key = told.round, told.evaluation, told.heatmap_key
    results = evaluation.results
    c = evaluation.consensus
    n = len(results)
    reasons = Counter(r.reason for r in results)
    members = [results[i] for i in evaluation.members]
    words = sorted(r.words for r in results)
    prompt_words = len(round_.prompt.split())
    parts: list[str] = []

    kind = prompt_kind(round_.prompt)
    ref = " A reference answer was supplied." if round_.reference else ""
    parts.append(f"The prompt ({prompt_words} words) reads as {kind}; {n} miners answered.{ref}")

    median_words = words[len(words) // 2] if words else 0
    best = max(results, key=lambda r: (r.score.composite, -r.index)) if results else None
    comparison = (
        f"Answers ranged from {words[0] if words else 0} to {words[-1] if words else 0} words (median {median_words}). "
    )
    if best is not None and best.score.composite > 0:
        comparison += f"The highest composite score, {best.score.composite:.1f}, went to miner {_miner(best.miner)}. "
    comparison += (
        f"Across the {c.pairs} pairs inside the consensus set the mean cosine similarity is "
        f"{c.mean:.3f} (standard deviation {c.std:.3f})."
    )
    if heatmap_key:
        comparison += f" The pairwise similarities are shown in the heatmap {heatmap_key}."
    parts.append(comparison)

    parts.append(
        "Responses were embedded with all-MiniLM-L6-v2 and compared by cosine similarity. Empty and failed "
        "answers were set aside, copies paid once, answers below the length threshold "
        f"({evaluation.quality_threshold_words:.1f} words) filtered, outliers found with LocalOutlierFactor "
        f"({evaluation.lof}), the rest clustered agglomeratively, and the dominant cluster scored as "
        f"mu + lambda*sigma. {c.note}."
    )

    out_lines = []
    for reason in Reason:
        if reason is Reason.IN_CONSENSUS or not reasons.get(reason):
            continue
        who = ", ".join(_miner(r.miner) for r in results if r.reason is reason)
        out_lines.append(f"{reason.value} ({reasons[reason]}): {who}")
    classification = (
        f"In consensus ({len(members)} of {n}): " + (", ".join(_miner(r.miner) for r in members) or "none") + "."
    )
    if out_lines:
        classification += " Out of consensus: " + "; ".join(out_lines) + "."
    parts.append(classification)

    verdict = "reached" if c.reached else "not reached"
    final = f"Consensus was {verdict} with a score of {c.score:.3f}."
    if c.polarity_agreed is not None:
        final += (
            f" The members agreed on {_article(c.majority_polarity.value)} answer."
            if c.polarity_agreed and c.majority_polarity
            else " The members did not agree on a yes/no answer."
        )
    paid = sum(1 for a in told.amounts if a > 0)
    final += f" {told.pool:,} units were emitted to {paid} miner(s)."
    parts.append(final)

    return "\n\n".join(f"{title}\n{body}" for title, body in zip(SECTIONS, parts)) + "\n"
