"""Configuration of the consensus evaluation: the settings that ship, one section per stage, each declared once.

``ConsensusConfig`` is made of frozen sections in the order the stages run (consensus/stages.py): ``text``
(what every stage reads), ``filters`` (outliers, length, injections), ``copies``, ``identity`` (over rounds),
``clusters`` (and when consensus is reached), ``checks`` (the polarity and factual checks), ``quality`` and
``weights`` (the composite score). Each field is declared once: its type, its default (with its constraint
when it has one: ``consensus.params.param``) and its doc, the docstring under it; every field is checked at
construction (``consensus.params.check_fields``). A settings file names it ``[consensus.SECTION] field``
and code ``config.SECTION.field``; scripts/gen_config_docs.py writes docs/configuration.md from it. Defaults are the ones that ship; the seed's value of each changed default is the seed
profile (``--profile seed``: validator/settings/profiles/seed.toml) (docs/consensus.md explains each choice). A tuning constant nobody sets is a named
constant next to the rule that uses it; rules measured and not shipped live in ``benchmarks/lab/``
(docs/architecture.md). ``DEPRECATED`` says where every key that left the config went.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from consensus.errors import ConfigError
from consensus.params import SHARE, Deprecated, build, check_fields, param, section


class _Section:
    """A section's check at construction: every field against its declared constraint (the section is named
    after its class: ``consensus.quality``)."""

    def __post_init__(self) -> None:
        check_fields(self, f"consensus.{type(self).__name__.lower()}")


@dataclass(frozen=True)
class Text(_Section):
    """What every stage reads of an answer."""

    normalise_text: bool = True
    """Every stage reads one normalised text (consensus/text.py): markup comments and invisible characters removed, look-alike letters folded, so a copy with zero-width characters or homoglyphs is a copy (seed profile false: NFKC and case only)."""
    count_math_symbols: bool = True
    """A run of math symbols (=, +, √, ×, ≤) counts as a word in the word count the length filter and the length part read: "√144 = 12" states as much as "the square root of 144 is 12" (seed profile false)."""


@dataclass(frozen=True)
class Filters(_Section):
    """Answers removed before clustering: outliers, too short, addressed to the evaluator."""

    outlier_detection: bool = False
    """Remove LocalOutlierFactor outliers before clustering (seed profile true: it flagged the best, most detailed answer of the validity set in 25 of 100 rounds; clustering and emissions.min_alignment judge agreement)."""
    lof_keep_central: bool = True
    """Keep an LOF outlier whose mean similarity to the other candidates is at least the candidates' median: a detailed answer in a sparse region is not off-topic (seed profile false)."""
    length_filter: bool = True
    """Remove answers shorter than the round's length threshold (was quality_filtering)."""
    length_tolerance: float = param(0.7, within=SHARE)
    """How far below the median word count an answer may fall, 0..1 (lower = stricter): the threshold is (1 - tolerance) * the median word count, at most 3 words (consensus.stages.MAX_THRESHOLD_WORDS); was quality_sensitivity."""
    length_keeps_agreed_short: bool = True
    """A short answer every word of which (not the prompt's, not a reply such as "yes") at least half of the other answers say is the round's answer in one word ("408", "The skin."), not junk: the length filter keeps it (issue 38; seed profile false)."""
    injection_min_signals: int = param(2, lo=0)
    """An answer with at least this many different kinds of text addressed to the evaluator ('ignore previous instructions', 'to the evaluator', '10 out of 10', system markers; consensus/injection.py) leaves with reason 'injection' and earns nothing, unless the prompt itself speaks of injections; 0 = off (the seed profile's)."""


@dataclass(frozen=True)
class Copies(_Section):
    """Copies: a later answer that restates earlier ones is paid once (consensus/restatements.py)."""

    copy_detection: bool = True
    """Identical / near-identical responses from different miners pay once."""
    copy_rule: str = param("derivation", choices=("derivation", "legacy"))
    """How copies are found: 'derivation' (consensus/restatements.py: a later answer that restates earlier ones, in any disguise, is paid only for what is new in it; short answers are agreement, never copies); 'legacy': identical or near-identical texts, the earliest paid."""
    copy_min_words: int = param(12, lo=1)
    """derivation: an answer needs this many distinct words that are not the prompt's to be a copy or a source; shorter answers are agreement ("Au", one sentence)."""
    copy_bag_ratio: float = param(0.9, within=SHARE)
    """legacy: a candidate pair whose word multisets overlap at least this much (difflib's quick_ratio) is a near-copy too: order-free, so shuffled or lightly edited long copies are caught (0 = off, the seed profile's)."""
    copy_tie_window_s: float = param(0.05, lo=0.0, hi=10.0)
    """Copies whose latencies are within this of the earliest one's have no original: they share one payout (seed profile 0: the fastest, by any margin, is the original)."""
    copy_support: bool = False
    """Copies count as support for their original's cluster (seed profile true); off, a copied answer is one voice."""


@dataclass(frozen=True)
class Identity(_Section):
    """Identity over rounds (consensus.identity; the ledger keeps the evidence)."""

    identity_persistence: bool = True
    """Record each round's pairs of miners far more alike than the round (consensus.identity) for the ledger; a pair close in enough of the rounds both answered is linked (consensus.identity.MIN_ROUNDS, SHARE, LEAD; seed profile false). A link steers the committees' draw and is shown; it never removes or lowers an answer's pay."""


@dataclass(frozen=True)
class Clusters(_Section):
    """Clustering, the dominant cluster and when consensus is reached."""

    clustering: bool = True
    """Agglomerative clustering; only the dominant cluster can be in consensus."""
    min_support: int = param(2, lo=1)
    """Responses (copies count) the dominant cluster needs to be a consensus set; below it nobody is in consensus and nobody is paid."""
    cluster_tiebreak: str = param("relevance", choices=("relevance", "tightness"))
    """Between clusters of equal support: 'relevance' prefers the one closer to the reference answer (or the prompt), then the tighter; 'tightness' (the seed profile's) only the tighter."""
    relevance_gate: bool = True
    """A cluster whose answers do not address the prompt cannot be dominant, whatever its voices (consensus.stages.RELEVANCE_FLOOR and RELEVANCE_RATIO; seed profile false)."""
    reference_decides: bool = True
    """With a reference answer, clusters are ranked by how many of the reference's facts (consensus/reference.py) their answers state before voices are counted, and a member stating none while others state them leaves (reason 'reference'); the reference part of the composite reads the same facts (seed profile false: embedding similarity only)."""
    consensus_threshold: float = param(0.7, lo=-1.0, hi=3.0)
    """Consensus is reached when mu + lambda*sigma is at least this."""
    lambda_factor: float = param(1.0, lo=-10.0, hi=10.0)
    """lambda in mu + lambda*sigma (negative values give a conservative score)."""


@dataclass(frozen=True)
class Checks(_Section):
    """The polarity and factual checks on the dominant cluster (with the LM's signals)."""

    polarity_clustering: bool = True
    """When polarity labels are given, consensus also requires agreement on them (a majority above consensus.stages.POLARITY_QUORUM)."""
    factual_check: bool = True
    """With the LM's factual signal (each member's short answer): a short answer no other member states leaves consensus when the round has a common answer (consensus/factual_stage.py)."""
    factual_min_agreement: float = param(0.5, within=SHARE)
    """Quorum of the common answer: the median checked member's short answer must be shared by at least this share of the other checked members before lone answers leave (docs/validity.md)."""
    factual_requires_stated: bool = True
    """The factual check counts a member whose text does not state the short answer the LM wrote for it (an injection or a non-answer) as a lone answer: no vote, and it leaves under the same quorum (seed profile false)."""
    factual_arbitration: bool = True
    """With the LM's arbitration signal (the LM's own short answer to a prompt with one answer): when the members' short answers disagree and the LM is confident, the members whose short answer is not the LM's leave consensus (consensus/factual_stage.py); on a yes/no prompt whose members split, the LM's own yes or no is the polarity majority (seed profile false)."""
    lm_overrule_share: float = param(2 / 3, within=SHARE)
    """The LM's own answer (arbitration, yes/no or short) removes the members it disagrees with only while they hold at most this share of the arbitrated members: it decides between two real sides, not against a clear majority (benchmarks.lm_authority, docs/validity.md 'Judgment rules'). 1 = it overrules any majority; 0.5 = it only breaks ties."""


@dataclass(frozen=True)
class Quality(_Section):
    """The quality part of the composite (consensus/quality.py, consensus/grading.py)."""

    quality_measure: str = param("coverage", choices=("coverage", "length"))
    """The quality part: 'coverage' = share of the other surviving answers' words (idf-weighted, not the prompt's) this answer also uses; 'length' (the seed profile's) = words / median member words, capped at 1."""
    coverage_pooled: bool = True
    """Coverage is the share of everything the peers said (their idf word weights pooled, a sybil group counting as one peer) rather than the mean of per-peer shares (false, the seed profile's)."""
    coverage_min_df: int = param(2, lo=1)
    """Coverage: a word fewer than this many of the peers use weighs 0 (2: a word only one answer says is nobody's agreement; 1 = every word, the seed profile's). Peers count by voice."""
    coverage_peers: str = param("members", choices=("surviving", "members"))
    """Whose words coverage measures: 'members' = the dominant cluster's; 'surviving' (the seed profile's) = every answer the filters kept, whatever its cluster."""
    coverage_length_control: float = param(0.4, within=SHARE)
    """Share of coverage's length effect removed (consensus.quality.length_controlled): coverage * (median member words / words) ** (control * the round's elasticity of coverage in length). 0 = raw coverage (the seed profile's); 1 = fully length-neutral."""
    quality_specificity: float = param(0.5, lo=0.0, hi=2.0)
    """The quality part is multiplied by (specificity / the members' median) ** this: specificity is an answer's share of content words that are not generic English and that another voice says too (consensus.grading.specificity). 0 = off (the seed profile's)."""
    specificity_mean_when_none: bool = True
    """When the members' median specificity is 0, the specificity factor compares with their mean instead of switching off: a vague majority cannot disable it (false: off, the seed profile's)."""
    quality_prose: float = param(0.5, within=SHARE)
    """An answer of at least copies.copy_min_words content words whose share of English function words (consensus.grading.prose_share) is under this fraction of the members' median loses quality in proportion (a list of terms states no relation). Off where the median is under 0.1. 0 = off (the seed profile's)."""
    quality_stems: bool = True
    """The quality part compares word stems (Snowball English, consensus.text.stems): 'antibodies' covers 'antibody' (false: the words as written, the seed profile's)."""


@dataclass(frozen=True)
class Weights(_Section):
    """The composite score's parts and the cut outside consensus (consensus/score.py)."""

    weighted_scoring: bool = True
    """Factor miner confidence into the composite score."""
    weight_alignment: float = param(0.1, within=SHARE)
    """Weight of consensus alignment (seed profile 0.5): on the development set it tracks quality weakly (0.44), on a held-out set of other models it was the strongest part (0.77); docs/validity.md."""
    alignment_by_voice: bool = True
    """Alignment leaves out the answer's own sybil group (entity, rewordings, tied copy): a copy at cosine 1 must not raise its source's alignment (seed profile false)."""
    weight_quality: float = param(0.7, within=SHARE)
    """Weight of the quality part (quality.quality_measure; seed profile 0.2)."""
    weight_confidence: float = param(0.2, within=SHARE)
    """Weight of the confidence part."""
    weight_bonus: float = param(0.0, within=SHARE)
    """Weight of the in-consensus bonus (seed profile 0.1: a flat step between in and out)."""
    weight_reference: float = param(0.3, within=SHARE)
    """With a reference answer: share of the composite taken by the judged agreement with it (the consensus composite keeps the rest)."""
    weight_reference_similarity: float = param(0.3, within=SHARE)
    """With a reference answer and no LM judge: share of the composite taken by the embedding similarity to it, relative to the round's answers (seed profile 0)."""
    out_of_consensus_penalty: float = param(0.5, within=SHARE)
    """Multiplier cut for responses outside consensus: score *= 1 - penalty."""

    def __post_init__(self) -> None:
        super().__post_init__()
        total = self.weight_alignment + self.weight_quality + self.weight_confidence + self.weight_bonus
        if abs(total - 1.0) > 1e-9:
            raise ConfigError("consensus.weights.weight_*", f"the four weights must sum to 1, got {total:g}")


def _constant(where: str, value: object) -> Deprecated:
    """A setting nobody set, retired into the named constant (its comment says where it was measured)."""
    return Deprecated(None, where, value)


@dataclass(frozen=True)
class ConsensusConfig:
    """The consensus evaluation's settings, one section per stage (module docstring)."""

    text: Text = section(Text)
    filters: Filters = section(Filters)
    copies: Copies = section(Copies)
    identity: Identity = section(Identity)
    clusters: Clusters = section(Clusters)
    checks: Checks = section(Checks)
    quality: Quality = section(Quality)
    weights: Weights = section(Weights)

    def changed(self, values: Mapping[str, Any]) -> ConsensusConfig:
        """This config with some settings changed, by dotted name: ``{"quality.quality_stems": False}``."""
        result: ConsensusConfig = build(ConsensusConfig, values, "consensus", base=self)
        return result

    # Keys that left the config (issue 34): an old settings file or record holding one still reads.
    DEPRECATED: ClassVar[dict[str, Deprecated]] = {
        "quality_filtering": Deprecated("filters.length_filter", "a length filter"),
        "quality_sensitivity": Deprecated("filters.length_tolerance", "lower is stricter, as before"),
        "heatmap": Deprecated("output.heatmap", "not a consensus rule: what a round draws"),
        "lof_neighbors": _constant("consensus.stages.LOF_NEIGHBORS", 10),
        "lof_min_samples": _constant("consensus.stages.LOF_MIN_SAMPLES", 5),
        "lof_contamination": _constant("consensus.stages.LOF_CONTAMINATION", 0.0),
        "quality_max_threshold_words": _constant("consensus.stages.MAX_THRESHOLD_WORDS", 3.0),
        "copy_cosine": _constant("consensus.stages.COPY_COSINE", 0.95),
        "copy_text_ratio": _constant("consensus.stages.COPY_TEXT_RATIO", 0.85),
        "cluster_linkage": _constant("consensus.stages.CLUSTER_LINKAGE", "average"),
        "cluster_distance": _constant("consensus.stages.CLUSTER_DISTANCE", 0.6),
        "copy_containment": _constant("consensus.restatements.CONTAINMENT", 0.85),
        "copy_holds": _constant("consensus.restatements.HOLDS", 0.5),
        "copy_phrasing": _constant("consensus.restatements.PHRASING", 0.5),
        "copy_novelty": _constant("consensus.restatements.NOVELTY", 0.15),
        "identity_min_rounds": _constant("consensus.identity.MIN_ROUNDS", 5),
        "identity_share": _constant("consensus.identity.SHARE", 0.5),
        "identity_lead": _constant("consensus.identity.LEAD", 0.8),
        "relevance_floor": _constant("consensus.stages.RELEVANCE_FLOOR", 0.15),
        "relevance_ratio": _constant("consensus.stages.RELEVANCE_RATIO", 0.5),
        "polarity_quorum": _constant("consensus.stages.POLARITY_QUORUM", 0.5),
        "coverage_excludes_prompt": _constant("consensus.quality.coverage_inputs (the prompt's words weigh 0)", True),
        "weight_lm_grade": _constant("benchmarks/lab/lm_grade.py (the LM grade's blend: measured, not shipped)", 0.0),
        "lm_grade_scale": _constant(
            "benchmarks/lab/lm_grade.py (the LM grade's blend: measured, not shipped)", "minmax"
        ),
    }
