"""Configuration of the emissions split (docs/emissions.md has the full formula).

Each field is declared once, as in consensus/config.py: its type, its default (with its constraint when it
has one: ``consensus.params.param``) and its doc, the docstring under it.
"""

from __future__ import annotations

from dataclasses import dataclass

from consensus.params import SHARE, check_fields, param

NOTHING_RETIRED = (
    "was retired in commit 663e260 (2026-11-26) (issue 34: neither the default nor the legacy rule; measured at commit 46996aa, "
    "docs/emissions.md): a round stored with it reads as not recording unreached_pays"
)

THROUGHPUT_RETIRED = (
    "was retired on 2026-11-29 (issue 48: neither the default nor the seed profile's rule; words per second stays "
    "for_length's own fallback below 4 answers, docs/emissions.md): a round stored with it reads as not recording "
    "speed_mode"
)


@dataclass(frozen=True)
class EmissionsConfig:
    pool_units: int = param(1_000_000_000, lo=0)
    """Units emitted per round at full consensus (integers, so a round sums exactly)."""
    pool_floor: float = param(0.5, within=SHARE)
    """Share of the pool emitted at consensus score 0; it grows linearly to 1 at score >= 1."""
    consensus_multiplier: float = param(1.0, lo=1.0, hi=10.0)
    """Weight multiplier for responses in the consensus cluster (seed profile 1.2: a cliff at the cluster edge)."""
    speed_weight: float = param(0.1, lo=0.0, hi=0.5)
    """Speed modifier is (1 - w) + w * speed / fastest: between 1 - w and 1 (seed profile 0.2)."""
    speed_mode: str = param("for_length", choices=("for_length", "latency"), retired={"throughput": THROUGHPUT_RETIRED})
    """What speed rewards: 'for_length' = this answer's latency against the round's latency for an answer of its length (a robust line of latency on characters): a faster server, whatever it wrote (below 4 answers, with no line to fit: words per second relative to the fastest); 'latency' (the seed's) = t_fastest / t (pays short answers). ('throughput', words per second in every round, was retired on 2026-11-29: docs/emissions.md.)"""
    quality_exponent: float = param(2.0, lo=1.0, hi=8.0)
    """Weights grow as composite ** exponent: 1 (the seed profile's) splits the pool in proportion to the composite, which the round's spread of composites compresses (answers at 40 and 60 points earn 2:3); 2 pays 4:9. docs/emissions.md."""
    latency_floor_s: float = param(0.05, lo=0.0, lo_open=True)
    """Latencies below this count as this (no gain from reporting ~0 s)."""
    min_alignment: float = param(0.5, within=SHARE)
    """Out-of-consensus responses earn only with alignment (mean cosine to the consensus) at least this (seed profile 0.3: a prompt injection at 0.30 was paid once LOF stopped removing it)."""
    top_bonus_max: float = param(0.0, within=SHARE)
    """Highest-score bonus is 1 + max * tanh(scale * diff), diff in points (0..100) (seed profile 0.5: paid the noise between close answers)."""
    top_bonus_scale: float = param(0.1, lo=0.0)
    """tanh scale per point of score difference."""
    unreached_pays: str = param("floor", choices=("floor", "scaled"), retired={"nothing": NOTHING_RETIRED})
    """What a round whose consensus is not reached pays: 'floor' = pool_floor of the pool (the evidence is weak, so less is emitted, but the answers that made the best group still earn); 'scaled' (the seed profile's) = like any round. ('nothing', 0, was retired in commit 663e260 (2026-11-26): docs/emissions.md.)"""

    def __post_init__(self) -> None:
        check_fields(self, "emissions")
