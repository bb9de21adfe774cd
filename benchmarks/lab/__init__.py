"""The lab: rules measured and not shipped, handed to the product's evaluation from outside.

The product (``consensus``) ships only the rules that won; every rule that was measured and not shipped
lives here with the settings it had, so that its figures in docs/validity.md still reproduce:

    python -m benchmarks.validity --lab quality_glossary=0.3
    python -m benchmarks.validity ROUNDS TRUTH --lab sybil_detection=true

``LabConfig`` declares those settings as the product's are (``consensus.params.param``, a docstring each);
``extensions`` turns a ``LabConfig`` into the ``consensus.extensions.Extensions`` the product's
``evaluate`` (through ``validator.round.stages.run_stages``) takes, and the consensus config to run it with (a
floor or cap on specificity replaces the product's specificity factor). The default ``LabConfig`` hands
nothing: the evaluation is the product's alone. A rule that ships moves into ``consensus`` with its setting
and tests (docs/architecture.md, "Where a new rule goes").
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from consensus.config import ConsensusConfig
from consensus.extensions import NONE, Composite, Extensions, Factor, Graded, PairRule
from consensus.grading import specificity
from consensus.params import SHARE, check_fields, param
from consensus.quality import coverage

SentenceLookup = Callable[[Sequence[str]], Sequence[np.ndarray]]


@dataclass(frozen=True)
class LabConfig:
    """The settings of the rules measured and not shipped; every default is off."""

    coverage_semantic: float = param(0.0, within=SHARE)
    """Share of the coverage quality part measured sentence by sentence (the peers' sentences this answer also says, by embedding; benchmarks/lab/semantic.py) instead of by words; 0 = words only (legacy). The lab embeds the sentences (benchmarks.validity's cache)."""
    semantic_threshold: float = param(0.0, within=SHARE)
    """Sentence coverage: 0 = soft recall (each peer sentence counts its best cosine in this answer); above 0, it counts 1 when that cosine reaches this, else 0."""
    semantic_floor: float = param(0.0, lo=0.0, hi=0.95)
    """Soft sentence coverage: cosines rescaled by (c - floor) / (1 - floor), so the likeness of any two sentences on one topic counts as nothing."""
    specificity_floor: float = param(0.0, lo=0.0, hi=10.0)
    """This share of the members' median specificity is added to an answer's and to the median before their ratio: an answer with no specific agreed word keeps (floor / (1 + floor)) ** quality_specificity of its quality instead of 0."""
    specificity_cap: float = param(0.0, lo=0.0, hi=10.0)
    """Upper bound of the specificity factor (0 = only quality's own cap at 1)."""
    quality_glossary: float = param(0.0, lo=0.0, hi=0.99)
    """An answer of at least copy_min_words content words with more than this share of its words in short definition lines ('- Antigen: a molecule the immune system recognises.'; benchmarks.lab.quality_rules.glossary_shares) keeps ((1 - share) / (1 - this)) ** 2 of its quality, unless a quarter or more of the members' median words are in definitions or list items (the prompt asks for them): a glossary names the agreed terms and explains nothing. 0 = off: measured, not shipped (it costs honest answers written as short labelled bullets; docs/validity.md)."""
    quality_numbers: float = param(0.0, lo=0.0, hi=4.0)
    """An answer of at least copy_min_words content words stating n distinct numbers (benchmarks.lab.quality_rules.numbers_stated) keeps min(1, (n + 1) / (ref + 1)) ** this of its quality, ref the upper quartile of the members' counts, where ref is 2 or more: where the detailed answers give figures, one with none says less. 0 = off: measured, not shipped (answers stuffed with figures raise the reference and take pay from honest ones; docs/validity.md)."""
    own_detail_min_count: int = param(0, lo=0)
    """An answer with at least copy_min_words content words but fewer than this many details of its own (specific words no other voice says) has its quality part multiplied by ((own + 1) / (this + 1)) ** own_detail_count_weight: a list of the agreed keywords says nothing of its own. 0 = off."""
    own_detail_count_weight: float = param(1.0, lo=0.0, hi=4.0)
    """The exponent of the own_detail_min_count factor."""
    quality_own_detail: float = param(0.0, lo=0.0, hi=2.0)
    """The quality part is multiplied by min(1, (own + floor) / (the members' median own + floor)) ** this: own detail is an answer's share of content words that are specific and that no other voice says (benchmarks.lab.quality_rules.own_specific). A penalty only: an answer with fewer details of its own than the typical member loses quality; more buys nothing. 0 = off."""
    own_detail_floor: float = param(0.02, within=SHARE)
    """Added to own detail and its median before their ratio (quality_own_detail)."""
    own_detail_fraction: float = param(1.0, lo=0.0, hi=1.0, lo_open=True)
    """quality_own_detail compares with this fraction of the members' median own detail."""
    sybil_detection: bool = False
    """Group answers far more similar to each other than this round's answers usually are (and entities): one vote for the cluster, one shared payout (legacy false)."""
    sybil_headroom: float = param(0.5, within=SHARE)
    """A pair is a sybil pair when its cosine is at least median + h * (1 - median) of the round's pair cosines (a per-round baseline: h of the way from how alike this round's answers usually are to identical) ..."""
    sybil_min_cosine: float = param(0.8, within=SHARE)
    """... and at least this cosine ..."""
    sybil_jaccard: float = param(0.5, within=SHARE)
    """... and its word-set Jaccard similarity is at least this (rewording keeps most words; independent answers share few)."""
    sybil_min_shared_words: int = param(5, lo=0)
    """... and the pair shares at least this many distinct words that are not the prompt's: independent right answers to a short factual prompt share only the question's words and its one fact (0 = no such bar, legacy)."""

    # -- the LM's grade (issue 38; benchmarks/lab/lm_grade.py; in the product until commit 7cad62d, 2026-11-26) --
    lm_grade_weight: float = param(
        0.0,
        "With the LM's grades (benchmarks.lm_grade_scorer: SelectIT k = 1, against the reference when there is one; benchmarks.validity "
        "reads the cached ones, benchmarks/lm_grades/): share of the composite taken by each answer's grade, placed "
        "within its round (lm_grade_placing); 0 = off.",
        lo=0.0,
        hi=1.0,
    )
    lm_grade_placing: str = param(
        "minmax",
        "How a grade is placed within its round: 'minmax' (the round's best grade 1, its worst 0, linearly between), "
        "'rank' (the round's order of grades, 0..1) or 'raw' ((rating - 1) / 4).",
        choices=("minmax", "rank", "raw"),
    )

    def __post_init__(self) -> None:
        check_fields(self, "lab")

    @classmethod
    def from_pairs(cls, pairs: Sequence[str]) -> LabConfig:
        """``name=value`` pairs (values parsed as JSON, else kept as text), as ``--lab`` gives them."""
        values = {}
        known = {f.name for f in dataclasses.fields(cls)}
        for pair in pairs:
            name, _, raw = pair.partition("=")
            if name not in known:
                raise SystemExit(f"--lab {name}: unknown lab rule (known: {', '.join(sorted(known))})")
            try:
                values[name] = json.loads(raw)
            except json.JSONDecodeError:
                values[name] = raw
        return cls(**values)


def extensions(
    lab: LabConfig, config: ConsensusConfig, sentences: SentenceLookup | None = None
) -> tuple[Extensions, ConsensusConfig]:
    """The product's hooks for the rules ``lab`` turns on, and the consensus config to evaluate with.

    sentences: texts -> one (k_i, d) array of unit sentence vectors per text (``coverage_semantic`` needs it).
    """
    from benchmarks.lab import quality_rules as rules

    coverage_factors: list[Factor] = []
    quality: list[Factor] = []
    pairs: list[PairRule] = []
    if lab.coverage_semantic > 0 and config.quality.quality_measure == "coverage":
        if sentences is None:
            raise ValueError("lab.coverage_semantic needs the sentence vectors (benchmarks.validity embeds them)")
        coverage_factors.append(_sentence_coverage(lab, sentences))
    if (lab.specificity_floor > 0 or lab.specificity_cap > 0) and config.quality.quality_specificity > 0:
        weight, mean_when_none = config.quality.quality_specificity, config.quality.specificity_mean_when_none
        config = config.changed({"quality.quality_specificity": 0.0})  # the lab's factor replaces the product's

        def bounded(view: Graded, q: dict[int, float]) -> dict[int, float]:
            spec = specificity(view.word_sets, view.prompt_words, view.groups, common=view.common)
            return rules.with_bounded_specificity(
                q, spec, view.members, weight, lab.specificity_cap, lab.specificity_floor, mean_when_none
            )

        quality.append(bounded)
    if lab.quality_glossary > 0:

        def glossary(view: Graded, q: dict[int, float]) -> dict[int, float]:
            texts = view.ctx.round.responses
            defined = {i: rules.glossary_shares(texts[i].text) for i in view.graded}
            return rules.with_glossary(q, defined, view.members, view.graded, lab.quality_glossary)

        quality.append(glossary)
    if lab.quality_numbers > 0:

        def figures(view: Graded, q: dict[int, float]) -> dict[int, float]:
            r = view.ctx.round
            stated = {i: rules.numbers_stated(r.responses[i].text, r.prompt) for i in view.graded}
            return rules.with_numbers(q, stated, view.members, view.graded, lab.quality_numbers)

        quality.append(figures)
    if lab.own_detail_min_count > 0:

        def own_count(view: Graded, q: dict[int, float]) -> dict[int, float]:
            counts = rules.own_specific(view.word_sets, view.prompt_words, view.groups, view.common, count=True)
            return rules.with_own_detail_count(
                q, counts, view.graded, lab.own_detail_min_count, lab.own_detail_count_weight
            )

        quality.append(own_count)
    if lab.quality_own_detail > 0:

        def own_share(view: Graded, q: dict[int, float]) -> dict[int, float]:
            own = rules.own_specific(view.word_sets, view.prompt_words, view.groups, view.common)
            return rules.with_own_detail(
                q,
                own,
                view.members,
                lab.quality_own_detail,
                lab.own_detail_floor,
                view.graded,
                lab.own_detail_fraction,
            )

        quality.append(own_share)
    if lab.sybil_detection:
        pairs.append(_similar_voices(lab))
    composite: list[Composite] = []
    if lab.lm_grade_weight > 0:
        from benchmarks.lab.lm_grade import grade_rule

        composite.append(grade_rule(lab.lm_grade_weight, lab.lm_grade_placing))
    if not (coverage_factors or quality or pairs or composite):
        return NONE, config
    return Extensions(tuple(coverage_factors), tuple(quality), tuple(pairs), tuple(composite)), config


def _sentence_coverage(lab: LabConfig, sentences: SentenceLookup) -> Factor:
    from benchmarks.lab.semantic import sentence_coverage_matrix
    from consensus.text import visible

    def blend(view: Graded, covered: dict[int, float]) -> dict[int, float]:
        texts = [visible(r.text) if r.error is None else "" for r in view.ctx.round.responses]
        share = sentence_coverage_matrix(sentences(texts), threshold=lab.semantic_threshold, floor=lab.semantic_floor)
        w = lab.coverage_semantic
        return {
            i: (1.0 - w) * c + w * coverage(i, view.peers[~np.isin(view.peers, view.own.get(i, ()))], share)
            for i, c in covered.items()
        }

    return blend


def _similar_voices(lab: LabConfig) -> PairRule:
    from benchmarks.lab.sybil import similar_pairs

    def rule(ctx, alive: np.ndarray) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
        return similar_pairs(
            ctx.texts,
            ctx.sim,
            alive,
            headroom=lab.sybil_headroom,
            min_cosine=lab.sybil_min_cosine,
            jaccard=lab.sybil_jaccard,
            min_shared=lab.sybil_min_shared_words,
            prompt=ctx.round.prompt,
            text_words=ctx.text_words,
            lexical=ctx.jaccard,
        )

    return rule
