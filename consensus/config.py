"""Configuration of the consensus evaluation: every step can be switched and tuned.

Defaults are the seed's (docs/consensus.md explains each choice the seed left open).
"""

from __future__ import annotations

from dataclasses import dataclass

from consensus._params import check_fields, param


@dataclass(frozen=True)
class ConsensusConfig:
    # Outliers (LocalOutlierFactor on cosine distances)
    outlier_detection: bool = param(True, "Remove LocalOutlierFactor outliers before clustering.")
    lof_neighbors: int = param(10, "LOF n_neighbors upper bound; the used value is max(2, min(this, (candidates - 1) // 2)).", lo=1)
    lof_min_samples: int = param(5, "LOF runs only with at least this many candidates; below it no LOF outliers.", lo=3)
    lof_contamination: float = param(0.0, "Share of outliers LOF expects; 0 means sklearn's 'auto' threshold.", lo=0.0, hi=0.5)
    # Quality (length) filter
    quality_filtering: bool = param(True, "Filter responses shorter than the length threshold.")
    quality_sensitivity: float = param(0.7, "0..1, lower = stricter: threshold = (1 - sensitivity) * median word count.", lo=0.0, hi=1.0)
    quality_max_threshold_words: float = param(3.0, "The length threshold never exceeds this many words: a concise answer "
                                                    "is not junk because its peers are verbose.", lo=0.0)
    # Copies
    copy_detection: bool = param(True, "Identical / near-identical responses from different miners pay once.")
    copy_cosine: float = param(0.95, "Cosine similarity at or above which two responses are copy candidates.", lo=0.0, hi=1.0)
    copy_text_ratio: float = param(0.85, "Word-level match ratio at or above which a candidate pair is a near-copy.", lo=0.0, hi=1.0)
    # Clustering
    clustering: bool = param(True, "Agglomerative clustering; only the dominant cluster can be in consensus.")
    min_support: int = param(2, "Responses (copies count) the dominant cluster needs to be a consensus set; below it "
                                "nobody is in consensus and nobody is paid.", lo=1)
    cluster_linkage: str = param("average", "Agglomerative linkage on cosine distances.", choices=("average", "complete", "single"))
    cluster_distance: float = param(0.6, "Distance threshold (1 - cosine) at which clusters stop merging.", lo=0.0, hi=2.0, lo_open=True)
    # Consensus score
    consensus_threshold: float = param(0.7, "Consensus is reached when mu + lambda*sigma is at least this.", lo=-1.0, hi=3.0)
    lambda_factor: float = param(1.0, "lambda in mu + lambda*sigma (negative values give a conservative score).", lo=-10.0, hi=10.0)
    # Polarity
    polarity_clustering: bool = param(True, "When polarity labels are given, consensus also requires agreement on them.")
    polarity_quorum: float = param(0.5, "Share of labelled members the majority label needs (strictly more than).", lo=0.5, hi=1.0)
    # Composite score
    weighted_scoring: bool = param(True, "Factor miner confidence into the composite score.")
    weight_alignment: float = param(0.5, "Weight of consensus alignment.", lo=0.0, hi=1.0)
    weight_quality: float = param(0.2, "Weight of the length-based quality part.", lo=0.0, hi=1.0)
    weight_confidence: float = param(0.2, "Weight of the confidence part.", lo=0.0, hi=1.0)
    weight_bonus: float = param(0.1, "Weight of the in-consensus bonus.", lo=0.0, hi=1.0)
    weight_reference: float = param(0.3, "With a reference answer: share of the composite taken by the judged agreement "
                                         "with it (the consensus composite keeps the rest).", lo=0.0, hi=1.0)
    out_of_consensus_penalty: float = param(0.5, "Multiplier cut for responses outside consensus: score *= 1 - penalty.", lo=0.0, hi=1.0)
    # Heatmap
    heatmap: bool = param(True, "Render the similarity heatmap PNG.")

    def __post_init__(self) -> None:
        check_fields(self, "consensus")
        total = self.weight_alignment + self.weight_quality + self.weight_confidence + self.weight_bonus
        if abs(total - 1.0) > 1e-9:
            from consensus.errors import ConfigError

            raise ConfigError("consensus.weight_*", f"the four weights must sum to 1, got {total:g}")
