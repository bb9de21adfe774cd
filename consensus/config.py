"""Configuration of the consensus evaluation: every step can be switched and tuned.

Defaults are the seed's (docs/consensus.md explains each choice the seed left open).
``ConsensusConfig`` holds the stages' settings (declared in ``consensus.stage_config``,
inherited, so they come first and in their order) and the composite score's below, and
checks all of them at construction.
"""

from __future__ import annotations

from dataclasses import dataclass

from consensus.params import check_fields, param
from consensus.stage_config import StageConfig


@dataclass(frozen=True)
class ConsensusConfig(StageConfig):
    # Composite score
    weighted_scoring: bool = param(True, "Factor miner confidence into the composite score.")
    weight_alignment: float = param(
        0.1,
        "Weight of consensus alignment (legacy 0.5). Kept as a graded part: on the development set it tracks quality weakly (0.44), on a held-out set of other models it was the strongest part (0.77); docs/validity.md.",
        lo=0.0,
        hi=1.0,
    )
    quality_measure: str = param(
        "coverage",
        "The quality part: 'coverage' = share of the other surviving answers' words (idf-weighted) "
        "this answer also uses (mean over peers: how much of what the agreeing "
        "answers say it covers); 'length' (legacy) = words / median member words, "
        "capped at 1.",
        choices=("coverage", "length"),
    )
    coverage_excludes_prompt: bool = param(
        True,
        "Coverage gives the prompt's words no weight: restating the question "
        "(as a prompt injection quoting it does) covers nothing.",
    )
    coverage_pooled: bool = param(
        True,
        "Coverage is the share of everything the peers said (their idf word weights "
        "pooled, a sybil group counting as one peer) rather than the mean of "
        "per-peer shares (false, legacy): a detailed peer counts for what it holds, "
        "a terse one for little.",
    )
    coverage_min_df: int = param(
        2,
        "Coverage: a word fewer than this many of the peers use weighs 0 (2: a word "
        "only one answer says is nobody's agreement and no other answer can cover it; "
        "1 = every word, legacy). Peers count by voice: a group cannot make its own "
        "words shared.",
        lo=1,
    )
    coverage_peers: str = param(
        "members",
        "Whose words coverage measures: 'members' = the dominant cluster's (what "
        "the agreeing answers say); 'surviving' (legacy) = every answer the "
        "filters kept, whatever its cluster.",
        choices=("surviving", "members"),
    )
    coverage_semantic: float = param(
        0.0,
        "Share of the coverage quality part measured sentence by sentence (the peers' "
        "sentences this answer also says, by embedding; consensus/semantic.py) "
        "instead of by words; 0 = words only (legacy). Needs the edge's sentence "
        "vectors (Signals.sentence_vectors); without them the words decide.",
        lo=0.0,
        hi=1.0,
    )
    semantic_threshold: float = param(
        0.0,
        "Sentence coverage: 0 = soft recall (each peer sentence counts its best "
        "cosine in this answer); above 0, it counts 1 when that cosine reaches "
        "this, else 0.",
        lo=0.0,
        hi=1.0,
    )
    semantic_floor: float = param(
        0.0,
        "Soft sentence coverage: cosines rescaled by (c - floor) / (1 - floor), so "
        "the likeness of any two sentences on one topic counts as nothing.",
        lo=0.0,
        hi=0.95,
    )
    coverage_length_control: float = param(
        0.4,
        "Share of coverage's length effect removed (consensus.quality."
        "length_controlled): the quality part is coverage * (median member "
        "words / words) ** (control * the round's elasticity of coverage in "
        "length). 0 = raw coverage (legacy): padding paid; 1 = fully "
        "length-neutral.",
        lo=0.0,
        hi=1.0,
    )
    quality_specificity: float = param(
        0.5,
        "The quality part is multiplied by (specificity / the members' median) ** "
        "this: specificity is an answer's share of content words that are not "
        "generic English (consensus/_common_words.py) and that another voice "
        "says too (consensus.grading.specificity). 0 = off (legacy): vague answers "
        "and padded essays were graded like concrete ones.",
        lo=0.0,
        hi=2.0,
    )
    specificity_floor: float = param(
        0.0,
        "This share of the members' median specificity is added to an answer's and "
        "to the median before their ratio: an answer with no specific agreed word keeps "
        "(floor / (1 + floor)) ** quality_specificity of its quality instead of 0.",
        lo=0.0,
        hi=10.0,
    )
    specificity_cap: float = param(
        0.0,
        "Upper bound of the specificity factor (0 = only quality's own cap at 1).",
        lo=0.0,
        hi=10.0,
    )
    specificity_mean_when_none: bool = param(
        True,
        "When most members have no specific agreed word (the members' median specificity is 0), the "
        "specificity factor compares with their mean instead of switching off: a vague majority cannot "
        "disable it (false: off, legacy).",
    )
    quality_prose: float = param(
        0.5,
        "An answer of at least copy_min_words content words whose share of English function words (outside "
        "fenced code; consensus.grading.prose_share) is under this fraction of the members' median loses "
        "quality in proportion: a list of terms states no relation between them. Off where the median is "
        "under 0.1 (another language, code). 0 = off (legacy).",
        lo=0.0,
        hi=1.0,
    )
    quality_glossary: float = param(
        0.0,
        "An answer of at least copy_min_words content words with more than this share of its words in short "
        "definition lines ('- Antigen: a molecule the immune system recognises.'; consensus.grading."
        "glossary_shares) keeps ((1 - share) / (1 - this)) ** 2 of its quality, unless a quarter or more of the "
        "members' median words are in definitions or list items (the prompt asks for them): a glossary names "
        "the agreed terms and explains nothing. 0 = off: measured, not shipped (it costs honest answers written as "
        "short labelled bullets; docs/validity.md).",
        lo=0.0,
        hi=0.99,
    )
    quality_numbers: float = param(
        0.0,
        "An answer of at least copy_min_words content words stating n distinct numbers (consensus.grading."
        "numbers_stated) keeps min(1, (n + 1) / (ref + 1)) ** this of its quality, ref the upper quartile of the "
        "members' counts, where ref is 2 or more: where the detailed answers give figures, one with none says "
        "less. 0 = off: measured, not shipped (answers stuffed with figures raise the reference and take "
        "pay from honest ones; docs/validity.md).",
        lo=0.0,
        hi=4.0,
    )
    own_detail_min_count: int = param(
        0,
        "An answer with at least copy_min_words content words but fewer than this many details of its own "
        "(specific words no other voice says) has its quality part multiplied by ((own + 1) / (this + 1)) "
        "** own_detail_count_weight: a list of the agreed keywords says nothing of its own. 0 = off.",
        lo=0,
    )
    own_detail_count_weight: float = param(1.0, "The exponent of the own_detail_min_count factor.", lo=0.0, hi=4.0)
    quality_own_detail: float = param(
        0.0,
        "The quality part is multiplied by min(1, (own + floor) / (the members' "
        "median own + floor)) ** this: own detail is an answer's share of content "
        "words that are specific and that no other voice says "
        "(consensus.grading.own_detail). A penalty only: an answer with fewer "
        "details of its own than the typical member loses quality; more buys "
        "nothing. 0 = off.",
        lo=0.0,
        hi=2.0,
    )
    own_detail_floor: float = param(
        0.02,
        "Added to own detail and its median before their ratio (quality_own_detail).",
        lo=0.0,
        hi=1.0,
    )
    own_detail_fraction: float = param(
        1.0,
        "quality_own_detail compares with this fraction of the members' median own detail.",
        lo=0.0,
        hi=1.0,
        lo_open=True,
    )
    quality_stems: bool = param(
        True,
        "The quality part (coverage, specificity, own detail) compares word stems (Snowball English, "
        "consensus.text.stems): 'antibodies' covers 'antibody', 'vaccinated' covers 'vaccines' "
        "(false: the words as written, legacy).",
    )
    alignment_by_voice: bool = param(
        True,
        "Alignment leaves out the answer's own sybil group (entity, rewordings, "
        "tied copy): a copy at cosine 1 must not raise its source's alignment "
        "(legacy false).",
    )
    weight_quality: float = param(0.7, "Weight of the quality part (quality_measure; legacy 0.2).", lo=0.0, hi=1.0)
    weight_confidence: float = param(0.2, "Weight of the confidence part.", lo=0.0, hi=1.0)
    weight_bonus: float = param(
        0.0, "Weight of the in-consensus bonus (legacy 0.1: a flat step between in and out).", lo=0.0, hi=1.0
    )
    weight_reference: float = param(
        0.3,
        "With a reference answer: share of the composite taken by the judged agreement "
        "with it (the consensus composite keeps the rest).",
        lo=0.0,
        hi=1.0,
    )
    weight_reference_similarity: float = param(
        0.3,
        "With a reference answer and no LM judge: share of the composite "
        "taken by the embedding similarity to it, relative to the round's "
        "answers (legacy 0: the reference was ignored without the LM).",
        lo=0.0,
        hi=1.0,
    )
    out_of_consensus_penalty: float = param(
        0.5, "Multiplier cut for responses outside consensus: score *= 1 - penalty.", lo=0.0, hi=1.0
    )
    # -- the LM's grade (issue 38, items 2-3: consensus.grade; measured in docs/validity.md, "LM grades") --
    weight_lm_grade: float = param(
        0.0,
        "With the LM's grades (lm.grade: SelectIT k = 1, against the reference when there is one): share of "
        "the composite taken by each answer's grade, placed within its round (lm_grade_scale); 0 = off.",
        lo=0.0,
        hi=1.0,
    )
    lm_grade_scale: str = param(
        "minmax",
        "How a grade is placed within its round: 'minmax' (the round's best grade 1, its worst 0, linearly "
        "between), 'rank' (the round's order of grades, 0..1) or 'raw' ((rating - 1) / 4).",
        choices=("minmax", "rank", "raw"),
    )
    # -- end of the LM's grade --
    # Heatmap
    heatmap: bool = param(True, "Render the similarity heatmap PNG.")

    def __post_init__(self) -> None:
        check_fields(self, "consensus")
        total = self.weight_alignment + self.weight_quality + self.weight_confidence + self.weight_bonus
        if abs(total - 1.0) > 1e-9:
            from consensus.errors import ConfigError

            raise ConfigError("consensus.weight_*", f"the four weights must sum to 1, got {total:g}")
