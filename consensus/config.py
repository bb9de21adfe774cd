"""Configuration of the consensus evaluation: every setting that ships, declared once with its limits.

``ConsensusConfig`` holds the settings of the stages in their order (outliers, length, copies, identity
over rounds, clusters, the consensus score, polarity and factual checks), then the composite score's, each
declared with ``consensus.params.param`` (default, one-line doc, limits) and all checked at construction.
Defaults are the ones that ship; the seed's value of each changed default is in tests/golden/legacy.toml
(docs/consensus.md explains each choice). Rules measured and not shipped are not here: they live in
``benchmarks/lab/`` (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from consensus.params import check_fields, param


@dataclass(frozen=True)
class ConsensusConfig:
    # Outliers (LocalOutlierFactor on cosine distances)
    outlier_detection: bool = param(
        False,
        "Remove LocalOutlierFactor outliers before clustering (legacy true: it flagged the best, most detailed answer of the validity set in 25 of 100 rounds; clustering and min_alignment judge agreement).",
    )
    lof_neighbors: int = param(
        10, "LOF n_neighbors upper bound; the used value is max(2, min(this, (candidates - 1) // 2)).", lo=1
    )
    lof_min_samples: int = param(5, "LOF runs only with at least this many candidates; below it no LOF outliers.", lo=3)
    lof_contamination: float = param(
        0.0, "Share of outliers LOF expects; 0 means sklearn's 'auto' threshold.", lo=0.0, hi=0.5
    )
    lof_keep_central: bool = param(
        True,
        "Keep an LOF outlier whose mean similarity to the other candidates is at least the candidates' median: a detailed answer in a sparse region is not off-topic (legacy false).",
    )
    # Quality (length) filter
    quality_filtering: bool = param(True, "Filter responses shorter than the length threshold.")
    quality_sensitivity: float = param(
        0.7, "0..1, lower = stricter: threshold = (1 - sensitivity) * median word count.", lo=0.0, hi=1.0
    )
    quality_max_threshold_words: float = param(
        3.0,
        "The length threshold never exceeds this many words: a concise answer is not junk because its peers are verbose.",
        lo=0.0,
    )
    length_keeps_agreed_short: bool = param(
        True,
        'A short answer every word of which (not the prompt\'s, not a reply such as "yes") at least half of the other answers say is the round\'s answer in one word ("408", "The skin."), not junk: the length filter keeps it (issue 38; legacy false).',
    )
    count_math_symbols: bool = param(
        True,
        "A run of math symbols (=, +, √, ×, ≤) counts as a word in the word count the "
        'length filter and the length part read: "√144 = 12" states as much as "the square root of 144 is 12" (legacy false).',
    )
    normalise_text: bool = param(
        True,
        "Every stage reads one normalised text (consensus/text.py): markup comments and invisible characters removed, look-alike letters folded, so a copy with zero-width characters or homoglyphs is a copy (legacy false: NFKC and case only).",
    )
    # Copies
    copy_rule: str = param(
        "derivation",
        "How copies are found: 'derivation' (consensus/derivation.py: a later answer that restates earlier ones, in any disguise, is paid only for what is new in it; short answers are agreement, never copies); 'legacy': identical or near-identical texts, the earliest paid.",
        choices=("derivation", "legacy"),
    )
    copy_min_words: int = param(
        12,
        "derivation: an answer needs this many distinct words that are not the prompt's "
        'to be a copy or a source; shorter answers are agreement ("Au", one sentence).',
        lo=1,
    )
    copy_containment: float = param(
        0.85,
        "derivation: a later answer whose content words (idf-weighted, not the prompt's) are this much in one earlier answer restates it.",
        lo=0.0,
        hi=1.0,
        lo_open=True,
    )
    copy_holds: float = param(
        0.5,
        "derivation: a later answer holding this share of an earlier answer's five-word runs restates it (a copy padded with more text).",
        lo=0.0,
        hi=1.0,
        lo_open=True,
    )
    copy_phrasing: float = param(
        0.5,
        "derivation: a later answer with this share of its five-word runs in earlier answers restates them (unions and blends of other answers).",
        lo=0.0,
        hi=1.0,
        lo_open=True,
    )
    copy_novelty: float = param(
        0.15,
        "derivation: a derived answer whose own content (idf share not in its sources) is at most this is a copy and earns nothing; above it, it is graded on what is new in it.",
        lo=0.0,
        hi=1.0,
    )
    copy_detection: bool = param(True, "Identical / near-identical responses from different miners pay once.")
    copy_cosine: float = param(
        0.95, "Cosine similarity at or above which two responses are copy candidates.", lo=0.0, hi=1.0
    )
    copy_text_ratio: float = param(
        0.85, "Word-level match ratio at or above which a candidate pair is a near-copy.", lo=0.0, hi=1.0
    )
    copy_bag_ratio: float = param(
        0.9,
        "A candidate pair whose word multisets overlap at least this much (difflib's quick_ratio) is a near-copy too: order-free, so shuffled or lightly edited long copies are caught where the sequence ratio breaks down (0 = off, legacy).",
        lo=0.0,
        hi=1.0,
    )
    copy_tie_window_s: float = param(
        0.05,
        "Copies whose latencies are within this of the earliest one's have no original: they share one payout (legacy 0: the fastest, by any margin, is the original).",
        lo=0.0,
        hi=10.0,
    )
    copy_support: bool = param(
        False, "Copies count as support for their original's cluster (legacy true); off, a copied answer is one voice."
    )
    # Identity over rounds (consensus.identity; the ledger keeps the evidence)
    identity_persistence: bool = param(
        True,
        "Record each round's pairs of miners far more alike than the round (cosine at least 0.6 of the way from the round's median pair to identical, and at least 0.85: consensus.identity) for the ledger; a pair close in identity_min_rounds rounds and identity_share of the rounds both answered is linked (legacy false).",
    )
    identity_min_rounds: int = param(5, "Persistence: rounds a pair must have been close before it is linked.", lo=1)
    identity_share: float = param(
        0.5,
        "Persistence: share of the rounds both answered in which a pair was close (honest pairs: at most 0.13 on the development set, 0.26 on the wide set; five rewording identities: 0.70-0.74; docs/validity.md).",
        lo=0.0,
        hi=1.0,
        lo_open=True,
    )
    identity_lead: float = param(
        0.8,
        "Persistence: a linked miner that arrived later in this share of the close rounds follows the other (its answers are copies); otherwise the pair is one entity (one voice, one payout).",
        lo=0.5,
        hi=1.0,
    )
    # Clustering
    clustering: bool = param(True, "Agglomerative clustering; only the dominant cluster can be in consensus.")
    min_support: int = param(
        2,
        "Responses (copies count) the dominant cluster needs to be a consensus set; below it nobody is in consensus and nobody is paid.",
        lo=1,
    )
    cluster_linkage: str = param(
        "average", "Agglomerative linkage on cosine distances.", choices=("average", "complete", "single")
    )
    cluster_distance: float = param(
        0.6, "Distance threshold (1 - cosine) at which clusters stop merging.", lo=0.0, hi=2.0, lo_open=True
    )
    cluster_tiebreak: str = param(
        "relevance",
        "Between clusters of equal support: 'relevance' prefers the one closer to the reference answer (or the prompt), then the tighter; 'tightness' (legacy) only the tighter.",
        choices=("relevance", "tightness"),
    )
    relevance_gate: bool = param(
        True,
        "A cluster whose answers do not address the prompt cannot be dominant, whatever its voices: its median embedding similarity to the prompt (or the reference) must reach relevance_floor and relevance_ratio of the most relevant cluster's (legacy false).",
    )
    relevance_floor: float = param(
        0.15,
        "relevance_gate: the least median prompt similarity of a dominant cluster (honest answers' round medians on the validity sets: 0.32 and up; answers to other prompts: 0.03).",
        lo=0.0,
        hi=1.0,
    )
    relevance_ratio: float = param(
        0.5,
        "relevance_gate: a dominant cluster's median prompt similarity is at least this share of the most relevant cluster's.",
        lo=0.0,
        hi=1.0,
    )
    reference_decides: bool = param(
        True,
        "With a reference answer, clusters are ranked by how many of the reference's facts (numbers, content words not in the prompt; consensus/reference.py) their answers state before voices are counted, and a member stating none while others state them leaves (reason 'reference'); the reference part of the composite reads the same facts (legacy false: embedding similarity only).",
    )
    injection_min_signals: int = param(
        2,
        "An answer with at least this many different kinds of text addressed to the evaluator ('ignore previous instructions', 'to the evaluator', '10 out of 10', 'the full emission', system markers; consensus/injection.py) leaves with reason 'injection' and earns nothing, unless the prompt itself speaks of injections; 0 = off (legacy).",
        lo=0,
    )
    # Consensus score
    consensus_threshold: float = param(
        0.7, "Consensus is reached when mu + lambda*sigma is at least this.", lo=-1.0, hi=3.0
    )
    lambda_factor: float = param(
        1.0, "lambda in mu + lambda*sigma (negative values give a conservative score).", lo=-10.0, hi=10.0
    )
    # Polarity
    polarity_clustering: bool = param(
        True, "When polarity labels are given, consensus also requires agreement on them."
    )
    polarity_quorum: float = param(
        0.5, "Share of labelled members the majority label needs (strictly more than).", lo=0.5, hi=1.0
    )
    factual_check: bool = param(
        True,
        "With the LM's factual signal (each member's short answer): a short answer no other member states leaves consensus when the round has a common answer (consensus/factual.py).",
    )
    factual_min_agreement: float = param(
        0.5,
        "Quorum of the common answer: the median checked member's short answer must be shared by at least this share of the other checked members before lone answers leave (docs/validity.md).",
        lo=0.0,
        hi=1.0,
    )
    factual_requires_stated: bool = param(
        True,
        "The factual check counts a member whose text does not state the short answer the LM wrote for it (an injection or a non-answer, answered by the LM from its own knowledge) as a lone answer: no vote, and it leaves under the same quorum (legacy false).",
    )
    factual_arbitration: bool = param(
        True,
        "With the LM's arbitration signal (the LM's own short answer to a prompt with one answer, compared with the members' short answers by rule): when the members' short answers disagree and the LM is confident, the members whose short answer is not the LM's leave consensus, however many they are (consensus/factual.py); on a yes/no prompt whose members split, the LM's own yes or no is the polarity majority (consensus.stages.polarity; legacy false).",
    )
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
        "The quality part: 'coverage' = share of the other surviving answers' words (idf-weighted) this answer also uses (mean over peers: how much of what the agreeing answers say it covers); 'length' (legacy) = words / median member words, capped at 1.",
        choices=("coverage", "length"),
    )
    coverage_excludes_prompt: bool = param(
        True,
        "Coverage gives the prompt's words no weight: restating the question (as a prompt injection quoting it does) covers nothing.",
    )
    coverage_pooled: bool = param(
        True,
        "Coverage is the share of everything the peers said (their idf word weights pooled, a sybil group counting as one peer) rather than the mean of per-peer shares (false, legacy): a detailed peer counts for what it holds, a terse one for little.",
    )
    coverage_min_df: int = param(
        2,
        "Coverage: a word fewer than this many of the peers use weighs 0 (2: a word only one answer says is nobody's agreement and no other answer can cover it; 1 = every word, legacy). Peers count by voice: a group cannot make its own words shared.",
        lo=1,
    )
    coverage_peers: str = param(
        "members",
        "Whose words coverage measures: 'members' = the dominant cluster's (what the agreeing answers say); 'surviving' (legacy) = every answer the filters kept, whatever its cluster.",
        choices=("surviving", "members"),
    )
    coverage_length_control: float = param(
        0.4,
        "Share of coverage's length effect removed (consensus.quality.length_controlled): the quality part is coverage * (median member words / words) ** (control * the round's elasticity of coverage in length). 0 = raw coverage (legacy): padding paid; 1 = fully length-neutral.",
        lo=0.0,
        hi=1.0,
    )
    quality_specificity: float = param(
        0.5,
        "The quality part is multiplied by (specificity / the members' median) ** this: specificity is an answer's share of content words that are not generic English (consensus/_common_words.py) and that another voice says too (consensus.grading.specificity). 0 = off (legacy): vague answers and padded essays were graded like concrete ones.",
        lo=0.0,
        hi=2.0,
    )
    specificity_mean_when_none: bool = param(
        True,
        "When most members have no specific agreed word (the members' median specificity is 0), the specificity factor compares with their mean instead of switching off: a vague majority cannot disable it (false: off, legacy).",
    )
    quality_prose: float = param(
        0.5,
        "An answer of at least copy_min_words content words whose share of English function words (outside fenced code; consensus.grading.prose_share) is under this fraction of the members' median loses quality in proportion: a list of terms states no relation between them. Off where the median is under 0.1 (another language, code). 0 = off (legacy).",
        lo=0.0,
        hi=1.0,
    )
    quality_stems: bool = param(
        True,
        "The quality part (coverage, specificity) compares word stems (Snowball English, consensus.text.stems): 'antibodies' covers 'antibody', 'vaccinated' covers 'vaccines' (false: the words as written, legacy).",
    )
    alignment_by_voice: bool = param(
        True,
        "Alignment leaves out the answer's own sybil group (entity, rewordings, tied copy): a copy at cosine 1 must not raise its source's alignment (legacy false).",
    )
    weight_quality: float = param(0.7, "Weight of the quality part (quality_measure; legacy 0.2).", lo=0.0, hi=1.0)
    weight_confidence: float = param(0.2, "Weight of the confidence part.", lo=0.0, hi=1.0)
    weight_bonus: float = param(
        0.0, "Weight of the in-consensus bonus (legacy 0.1: a flat step between in and out).", lo=0.0, hi=1.0
    )
    weight_reference: float = param(
        0.3,
        "With a reference answer: share of the composite taken by the judged agreement with it (the consensus composite keeps the rest).",
        lo=0.0,
        hi=1.0,
    )
    weight_reference_similarity: float = param(
        0.3,
        "With a reference answer and no LM judge: share of the composite taken by the embedding similarity to it, relative to the round's answers (legacy 0: the reference was ignored without the LM).",
        lo=0.0,
        hi=1.0,
    )
    out_of_consensus_penalty: float = param(
        0.5, "Multiplier cut for responses outside consensus: score *= 1 - penalty.", lo=0.0, hi=1.0
    )
    # Heatmap
    heatmap: bool = param(True, "Render the similarity heatmap PNG.")

    # --- Judgment rules (issue 38, session 16; branch i38a): the authority the LM's own answer earns ---
    lm_overrule_share: float = param(
        2 / 3,
        "The LM's own answer (arbitration, yes/no or short) removes the members it disagrees with only while they hold at most this share of the arbitrated members: it decides between two real sides (5 against 3), not against a clear majority. Where it decides (its confidence bars) the embedded LM was right on 75 of 75 plain facts but on about half of TruthfulQA's myths (benchmarks.lm_authority, docs/validity.md 'Judgment rules'). 1 = it overrules any majority (before session 16); 0.5 = it only breaks ties.",
        lo=0.0,
        hi=1.0,
    )

    def __post_init__(self) -> None:
        check_fields(self, "consensus")
        total = self.weight_alignment + self.weight_quality + self.weight_confidence + self.weight_bonus
        if abs(total - 1.0) > 1e-9:
            from consensus.errors import ConfigError

            raise ConfigError("consensus.weight_*", f"the four weights must sum to 1, got {total:g}")
