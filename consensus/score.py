"""Composite score per response: alignment, quality, confidence, consensus bonus.

All parts are in [0, 1]; the composite is ``100 * sum(weight * part)``, times
``1 - penalty`` outside consensus. docs/consensus.md gives the rules and why.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from consensus.config import ConsensusConfig
from consensus.types import ScoreParts

ZERO_WEIGHTS = (0.0, 0.0, 0.0, 0.0)


def effective_weights(config: ConsensusConfig, any_confidence: bool) -> tuple[float, float, float, float]:
    """(alignment, quality, confidence, bonus) weights actually applied; they sum to 1.

    When weighted scoring is off, or no response in the round reports a
    confidence, the confidence weight is shared among the other three in
    proportion to their weights, so the remaining parts keep their relative
    meaning and a composite still spans 0..100.
    """
    wa, wq, wc, wb = config.weight_alignment, config.weight_quality, config.weight_confidence, config.weight_bonus
    if config.weighted_scoring and any_confidence:
        return (wa, wq, wc, wb)
    rest = wa + wq + wb
    if rest == 0:
        return (0.0, 0.0, 0.0, 0.0)
    return (wa / rest, wq / rest, 0.0, wb / rest)


def confidence_part(confidence: float | None, in_consensus: bool) -> float:
    """1 - (c - y)^2 with y = 1 in consensus, else 0; a missing confidence counts as 0.5.

    Raw self-reported confidence would pay every miner who always says 1.0.
    This quadratic (Brier) rule pays confidence only when it turns out right:
    an in-consensus miner at 1.0 gets 1, an out-of-consensus miner at 1.0 gets
    0, and saying nothing gets 0.75 either way.
    """
    c = 0.5 if confidence is None else float(confidence)
    y = 1.0 if in_consensus else 0.0
    return 1.0 - (c - y) ** 2


def score_response(*, sim_row: np.ndarray, index: int, members: np.ndarray, words: int, reference_words: float,
                   confidence: float | None, in_consensus: bool, weights: tuple[float, float, float, float],
                   penalty: float) -> ScoreParts:
    """Composite score of one response against the consensus members.

    sim_row: (n,) similarities of this response to every response.
    members: indices of the in-consensus responses.
    reference_words: median word count of the members (quality saturates there).
    """
    others = members[members != index]
    if len(others):
        alignment = float(np.clip(sim_row[others].mean(), 0.0, 1.0))
    else:
        # A lone consensus member agrees with all its (zero) peers; outside
        # consensus with no members there is nothing to align to.
        alignment = 1.0 if in_consensus else 0.0
    quality = min(1.0, words / reference_words) if reference_words > 0 else 0.0
    conf = confidence_part(confidence, in_consensus)
    bonus = 1.0 if in_consensus else 0.0
    applied_penalty = 0.0 if in_consensus else penalty
    wa, wq, wc, wb = weights
    composite = 100.0 * (wa * alignment + wq * quality + wc * conf + wb * bonus) * (1.0 - applied_penalty)
    return ScoreParts(alignment=alignment, quality=quality, confidence=conf, bonus=bonus,
                      penalty=applied_penalty, weights=weights, composite=composite)


def with_reference(parts: ScoreParts, reference: float, weight: float) -> ScoreParts:
    """Blend a judged reference agreement (in [0, 1]) into a composite.

    ``composite = (1 - w) * consensus composite + w * 100 * reference * (1 - penalty)``:
    the reference can lift a right answer the crowd missed, but the
    out-of-consensus penalty still applies to it, and an answer that earns
    nothing (empty, failed, copy) is not judged at all.
    """
    reference = float(np.clip(reference, 0.0, 1.0))
    composite = (1.0 - weight) * parts.composite + weight * 100.0 * reference * (1.0 - parts.penalty)
    return dataclasses.replace(parts, composite=composite, reference=reference)


def zero_score(weights: tuple[float, float, float, float]) -> ScoreParts:
    """The score of a response that earns nothing (empty, failed, copy)."""
    return ScoreParts(alignment=0.0, quality=0.0, confidence=0.0, bonus=0.0, penalty=1.0, weights=weights,
                      composite=0.0)
