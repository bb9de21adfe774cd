"""Composite score per response: alignment, quality, confidence, consensus bonus.

All parts are in [0, 1]; the composite is ``100 * sum(weight * part)``, times
``1 - penalty`` outside consensus. docs/consensus.md gives the rules and why.
The quality part (coverage, length control) is measured in ``consensus.quality``, its
factors (specificity, prose) in ``consensus.grading``; rules from outside the product
(``consensus.extensions``) reach it through its hook points (coverage, quality, the finished composite), none
by default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from consensus.config import ConsensusConfig
from consensus.extensions import NONE, Extensions, Graded
from consensus.grading import (
    prose_share,
    quality_common,
    quality_prompt_words,
    quality_words,
    specificity,
    with_prose,
    with_specificity,
)
from consensus.quality import coverage, coverage_inputs, length_controlled
from consensus.reference import AGREES, support_factor
from consensus.types import Reason, ResponseResult, ScoreParts

if TYPE_CHECKING:
    from consensus.context import Context

ZERO_WEIGHTS = (0.0, 0.0, 0.0, 0.0)


def effective_weights(config: ConsensusConfig, any_confidence: bool) -> tuple[float, float, float, float]:
    """(alignment, quality, confidence, bonus) weights actually applied; they sum to 1.

    When weighted scoring is off, or no response in the round reports a confidence, the confidence weight
    is shared among the other three in proportion to their weights, so the remaining parts keep their
    relative meaning and a composite still spans 0..100.
    """
    wa, wq, wc, wb = (
        config.weights.weight_alignment,
        config.weights.weight_quality,
        config.weights.weight_confidence,
        config.weights.weight_bonus,
    )
    if config.weights.weighted_scoring and any_confidence:
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


def score_response(
    *,
    sim_row: np.ndarray,
    index: int,
    members: np.ndarray,
    words: int,
    reference_words: float,
    confidence: float | None,
    in_consensus: bool,
    weights: tuple[float, float, float, float],
    penalty: float,
    quality: float | None = None,
    member_weights: Mapping[int, float] | None = None,
) -> ScoreParts:
    """Composite score of one response against the consensus members.

    sim_row: (n,) similarities of this response to every response.
    members: indices of the in-consensus responses.
    reference_words: median word count of the members (the length quality saturates there).
    quality: the quality part when measured otherwise (``coverage``); default: the length ratio.
    """
    others = members[members != index]
    if len(others) and member_weights is not None:  # voice weights (consensus.extensions): a weighted mean
        w = np.array([member_weights.get(int(i), 1.0) for i in others], dtype=float)
        mean = float(sim_row[others] @ w / w.sum()) if w.sum() > 0 else float(sim_row[others].mean())
        alignment = float(np.clip(mean, 0.0, 1.0))
    elif len(others):
        alignment = float(np.clip(sim_row[others].mean(), 0.0, 1.0))
    else:
        # A lone consensus member agrees with all its (zero) peers; outside
        # consensus with no members there is nothing to align to.
        alignment = 1.0 if in_consensus else 0.0
    if quality is None:
        quality = min(1.0, words / reference_words) if reference_words > 0 else 0.0
    conf = confidence_part(confidence, in_consensus)
    bonus = 1.0 if in_consensus else 0.0
    applied_penalty = 0.0 if in_consensus else penalty
    wa, wq, wc, wb = weights
    composite = 100.0 * (wa * alignment + wq * quality + wc * conf + wb * bonus) * (1.0 - applied_penalty)
    return ScoreParts(
        alignment=alignment,
        quality=quality,
        confidence=conf,
        bonus=bonus,
        penalty=applied_penalty,
        weights=weights,
        composite=composite,
    )


REFERENCE_COPY = 0.9  # Jaccard of word sets from which an answer is the reference answer copied


def _no_more_than_honest(results: list[ResponseResult], ctx: Context, scored: list[int]) -> list[ResponseResult]:
    """An answer that is the round's (public) reference copied (word sets' Jaccard >= ``REFERENCE_COPY``) scores no
    more than the mean composite of the other answers the reference supports (none: no cap): it is scored as the reference's best statement by every rule that reads the
    reference, and states no more than honest answers stating the same facts (issue 45: it earned 2.4x the lowest
    honest answer)."""
    ref = set(ctx.words(ctx.round.reference or ""))
    if not ref:
        return results
    copied = {i for i in scored if _jaccard(set(ctx.text_words[i]), ref) >= REFERENCE_COPY}
    support = ctx.reference_support
    others = [  # answers stating the reference's facts as far as the rules read them: not lowered by its support
        results[i].score.composite
        for i in scored
        if i not in copied and results[i].score.composite > 0 and support.get(i, AGREES) >= AGREES
    ]
    if not copied or not others:
        return results
    cap = float(np.mean(others))  # below the best honest answer, which keeps its lead (and the top bonus)
    return [
        dataclasses.replace(x, score=dataclasses.replace(x.score, composite=cap))
        if x.index in copied and x.score.composite > cap
        else x
        for x in results
    ]


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def restates_prompt(words: tuple[str, ...], prompt: tuple[str, ...], text: str) -> bool:
    """Is an answer (its ``words``, as the stages read them) the prompt back: the same words in the same order, or a
    question of the prompt's words only? Such an answer states nothing; an answer that turns the question into a
    statement ("Water is wet." to "Is water wet?") is not one."""
    if not words or not prompt:
        return False
    return words == prompt or (text.rstrip().endswith("?") and set(words) <= set(prompt))


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
    """The score of a response that earns nothing (empty, failed, copy, addressed to the evaluator)."""
    return ScoreParts(
        alignment=0.0, quality=0.0, confidence=0.0, bonus=0.0, penalty=1.0, weights=weights, composite=0.0
    )


def reference_similarity_scores(
    similarity: Mapping[int, float], scored: list[int], floor: float | None = None
) -> dict[int, float]:
    """Embedding similarity to the reference answer, relative to this round's answers, in [0, 1].

    Raw cosines to a short reference ("100 °C") are all similar; what tells answers apart is
    their order: the closest of the round's scored answers gets 1, the farthest 0, linearly
    between. With one scored answer (or all equally close) everyone gets 1. ``floor`` (the prompt's
    own cosine to the reference) replaces the farthest answer as the 0 when it is lower: an answer
    gets 0 for coming no closer to the reference than the question itself, not for being the farthest.
    """
    values = {i: float(similarity[i]) for i in scored if i in similarity}
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if floor is not None and floor < lo:
        lo = floor
        values = {i: max(v, lo) for i, v in values.items()}
    if hi - lo <= 1e-12:
        return {i: 1.0 for i in values}
    return {i: (v - lo) / (hi - lo) for i, v in values.items()}


def score_all(
    ctx: Context,
    verdict: Mapping[int, tuple[Reason, str]],
    members: np.ndarray,
    copy_of: tuple[int | None, ...],
    labels: Mapping[int, int],
    groups: tuple[tuple[int, ...], ...] = (),
    residual: Mapping[int, frozenset[str]] | None = None,
    extensions: Extensions = NONE,
) -> tuple[ResponseResult, ...]:
    """The ``ResponseResult`` of every response: its reason, detail and composite score parts.

    residual: for answers that restate earlier ones (consensus.restatements), the words that are new
    in them: their quality part grades those words alone. extensions: factors from outside the product
    (``consensus.extensions``: the lab's), applied at their hook points; none by default.
    """
    config, signals, responses = ctx.config, ctx.signals, ctx.round.responses
    weights = effective_weights(config, any(r.confidence is not None for r in responses))
    voice_weights = extensions.weights(ctx)  # a rule from outside (consensus.extensions); None: every voice alike
    # quality saturates at the typical length of the agreeing answers, copies included (as for support):
    # one long junk answer in a small cluster must not make the answer many miners gave look short
    member_set = set(members.tolist())
    agreeing = [int(i) for i in members] + [i for i, o in enumerate(copy_of) if o is not None and o in member_set]
    ref_words = float(np.median(ctx.counts[agreeing])) if len(members) else 0.0
    judged = signals.reference_scores or {}
    scored = [
        i
        for i in range(len(responses))
        if verdict.get(i, (Reason.IN_CONSENSUS, ""))[0]
        not in (Reason.ERROR, Reason.EMPTY, Reason.COPY, Reason.INJECTION)
    ]
    by_similarity = (
        reference_similarity_scores(signals.reference_similarity or {}, scored)
        if config.weights.weight_reference_similarity > 0
        else {}
    )
    if config.weights.weight_reference_similarity > 0 and config.clusters.reference_decides:
        # the reference's facts, not the embedding's topic: "Lyon" and "Paris" are equally close to it
        if ctx.reference_claims:
            # a long reference's claims, and not its overall similarity alone: half of the best answer reworded is
            # as close to it as the whole, and states fewer of its claims (consensus.reference.claim_shares)
            beyond = reference_similarity_scores(
                signals.reference_similarity or {}, scored, signals.prompt_reference_similarity
            )
            by_similarity = {i: min(ctx.reference_claims[i], beyond.get(i, 0.0)) for i in scored}
        elif ctx.reference_agreement:
            by_similarity = {i: ctx.reference_agreement[i] for i in scored}
    peers, own, share, mass = coverage_inputs(ctx, verdict, members, groups, residual)
    qualities: dict[int, float] = {}
    if share is not None:
        # an answer that restates earlier ones is graded on its own words
        all_sets, prompt_words, common = quality_words(ctx, residual), quality_prompt_words(ctx), quality_common(ctx)
        sets = {i: all_sets[i] for i in scored}
        # long enough to be graded by what it says of its own (shorter answers are agreement)
        graded = frozenset(i for i, ws in sets.items() if len(ws - prompt_words) >= config.copies.copy_min_words)
        view = Graded(ctx, members, peers, own, graded, sets, prompt_words, common, groups, share, mass)
        covered = {i: coverage(i, peers[~np.isin(peers, own.get(i, ()))], share, mass) for i in scored}
        for factor in extensions.coverage:
            covered = factor(view, covered)
        qualities = length_controlled(covered, ctx.counts, members, config.quality.coverage_length_control)
        if config.quality.quality_specificity > 0:
            spec = specificity(sets, prompt_words, groups, common=common)
            qualities = with_specificity(
                qualities, spec, members, config.quality.quality_specificity, config.quality.specificity_mean_when_none
            )
        for factor in extensions.quality:
            qualities = factor(view, qualities)
        if config.quality.quality_prose > 0:
            shares = {i: prose_share(responses[i].text) for i in graded}
            qualities = with_prose(qualities, shares, members, graded, config.quality.quality_prose)
    if qualities and ctx.reference_claims and config.clusters.reference_decides:
        # what an answer explains, read by the reference's claims as much as by the other answers' words
        qualities = {i: (q + ctx.reference_claims.get(i, 0.0)) / 2 for i, q in qualities.items()}
    elif qualities and ctx.reference_support and config.clusters.reference_decides:
        # against a reference of one sentence, its support as much as the other answers' words (issue 45: the
        # words a falsehood majority shares are no quality)
        read = ctx.reference_support
        qualities = {i: (q + max(0.0, read[i])) / 2 if i in read else q for i, q in qualities.items()}
    # with a reference, the reference decides how much an answer can earn (consensus.reference.support_factor)
    support = ctx.reference_support if config.clusters.reference_decides else {}
    prompt_seq = tuple(ctx.words(ctx.round.prompt))
    results = []
    for i, r in enumerate(responses):
        why, detail = verdict.get(i, (Reason.IN_CONSENSUS, ""))
        confidence = r.confidence
        if why in (Reason.ERROR, Reason.EMPTY, Reason.COPY, Reason.INJECTION):
            parts = zero_score(weights)
        else:
            # with alignment_by_voice a group's answers are not aligned to each other (one voice)
            aligned = members[~np.isin(members, own.get(i, ()))] if config.weights.alignment_by_voice else members
            parts = score_response(
                sim_row=ctx.sim[i],
                index=i,
                members=aligned,
                words=int(ctx.counts[i]),
                reference_words=ref_words,
                confidence=confidence if config.weights.weighted_scoring else None,
                in_consensus=why is Reason.IN_CONSENSUS,
                weights=weights,
                penalty=config.weights.out_of_consensus_penalty,
                quality=qualities.get(i) if share is not None else None,
                member_weights=voice_weights,
            )
            if i in judged:
                parts = with_reference(parts, judged[i], config.weights.weight_reference)
            elif i in by_similarity:
                parts = with_reference(parts, by_similarity[i], config.weights.weight_reference_similarity)
            if i in support:
                parts = dataclasses.replace(parts, composite=parts.composite * support_factor(support[i]))
            if restates_prompt(ctx.text_words[i], prompt_seq, r.text):
                parts = dataclasses.replace(parts, composite=0.0)  # issue 45: the question back earns nothing
        results.append(
            ResponseResult(
                index=i,
                miner=r.miner,
                reason=why,
                detail=detail,
                words=int(ctx.counts[i]),
                cluster=labels.get(i, -1),
                score=parts,
                copy_of=copy_of[i] if copy_of else None,
                polarity=None if signals.polarity is None else signals.polarity.get(i),
            )
        )
    if ctx.round.reference:
        results = _no_more_than_honest(results, ctx, scored)
    if extensions.composite:
        finished = {i: results[i].score for i in scored}
        for rule in extensions.composite:
            finished = rule(ctx, finished)
        results = [dataclasses.replace(x, score=finished[x.index]) if x.index in finished else x for x in results]
    return tuple(results)
