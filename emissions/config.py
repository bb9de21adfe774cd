"""Configuration of the emissions split (docs/emissions.md has the full formula)."""

from __future__ import annotations

from dataclasses import dataclass

from consensus._params import check_fields, param


@dataclass(frozen=True)
class EmissionsConfig:
    pool_units: int = param(1_000_000_000, "Units emitted per round at full consensus (integers, so a round sums exactly).", lo=0)
    pool_floor: float = param(0.5, "Share of the pool emitted at consensus score 0; it grows linearly to 1 at score >= 1.", lo=0.0, hi=1.0)
    consensus_multiplier: float = param(1.2, "Weight multiplier for responses in the consensus cluster.", lo=1.0, hi=10.0)
    speed_weight: float = param(0.2, "Speed modifier is (1 - w) + w * t_fastest / t: between 1 - w and 1.", lo=0.0, hi=0.5)
    latency_floor_s: float = param(0.05, "Latencies below this count as this (no gain from reporting ~0 s).", lo=0.0, lo_open=True)
    min_alignment: float = param(0.3, "Out-of-consensus responses earn only with alignment (mean cosine to the consensus) at least this.", lo=0.0, hi=1.0)
    top_bonus_max: float = param(0.5, "Highest-score bonus is 1 + max * tanh(scale * diff), diff in points (0..100).", lo=0.0, hi=1.0)
    top_bonus_scale: float = param(0.1, "tanh scale per point of score difference.", lo=0.0)

    def __post_init__(self) -> None:
        check_fields(self, "emissions")
