"""One round through the pure core, in one pass: stages -> consensus score -> composite scores.

``decide`` takes the round, its embedding vectors (the model is an edge the caller owns) and
the ``Signals`` the edges collected beforehand (polarity, reference, entities, ...), runs the
stages of ``consensus.stages`` in order, each removing responses with a reason, and returns an
``Evaluation``. It is deterministic: the same inputs and config give the same result, bit for bit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from consensus import stages
from consensus.agreement import consensus_score
from consensus.config import ConsensusConfig
from consensus.errors import RoundError
from consensus.extensions import NONE, Extensions
from consensus.factual_stage import factual as factual_stage
from consensus.filters import word_count
from consensus.identity import ClosePair
from consensus.injection import injection as injection_stage
from consensus.score import score_all
from consensus.signals import Signals
from consensus.similarity import cosine_matrix
from consensus.types import ConsensusResult, Evaluation, Reason, Round


def decide(
    round_: Round,
    vectors: np.ndarray,
    config: ConsensusConfig | None = None,
    signals: Signals | None = None,
    sim: np.ndarray | None = None,
    plan: CheckPlan | None = None,
    extensions: Extensions = NONE,
) -> Evaluation:
    """Evaluate one round.

    round_: the round; responses in input order.
    vectors: (n, d) unit (or zero, for empty texts) embedding rows, one per response.
    signals: what the edges measured beforehand (consensus.signals); none by default.
    sim: the (n, n) similarity matrix if the caller already has it.
    plan: the ``plan_checks`` of this round, when the edge made one: its stages up to clustering are reused
        (not run twice), provided the signals those stages read are the plan's (``FRONT_SIGNALS``).
    extensions: rules from outside the product (``consensus.extensions``, benchmarks/lab); none by default.
    """
    config, signals = config or ConsensusConfig(), signals or Signals()
    front = _reuse(plan, round_, config, signals, extensions) or _front(
        round_, vectors, config, signals, sim, extensions
    )
    ctx, verdict, notes = front.ctx, front.verdict, front.notes
    config, groups, copies, length, outliers, clusters = (
        ctx.config,
        front.groups,
        front.copies,
        front.length,
        front.outliers,
        front.clusters,
    )
    n = len(round_.responses)

    def apply(stage: stages.Stage) -> None:
        _apply(stage, verdict, notes)

    def alive() -> np.ndarray:
        return _alive(n, verdict)

    polarity = stages.polarity(ctx, alive())
    apply(polarity)
    apply(factual_stage(ctx, alive()))
    members = alive()
    # measured over distinct answers only: copies count as support for the dominant cluster, but
    # they must not inflate the agreement score (and with it the pool)
    score, mu, sigma, pairs = consensus_score(ctx.sim, members, config.clusters.lambda_factor)
    reached = pairs > 0 and score >= config.clusters.consensus_threshold and polarity.agreed is not False
    note = (
        f"mu={mu:.4f} sigma={sigma:.4f} lambda={config.clusters.lambda_factor:g} over {pairs} pairs"
        if pairs
        else f"{len(members)} response(s) in consensus: no pair to measure agreement"
    )
    if groups:
        notes.append("one voice, one shared payout: " + "; ".join(str(list(g)) for g in groups))
    found = copies.derivation
    # a derived answer always has its residual (None is an original's)
    residual = {} if found is None else {i: cast("frozenset[str]", found.residual[i]) for i in found.derived}
    results = score_all(ctx, verdict, members, copies.copy_of, clusters.labels, groups, residual, front.extensions)
    consensus = ConsensusResult(
        score=score,
        mean=mu,
        std=sigma,
        pairs=pairs,
        reached=bool(reached),
        polarity_agreed=polarity.agreed,
        majority_polarity=polarity.majority,
        note=note,
    )
    return Evaluation(
        round_id=round_.round_id,
        results=results,
        consensus=consensus,
        members=tuple(int(i) for i in members),
        lof=outliers.state,
        quality_threshold_words=length.threshold,
        notes=tuple(notes),
        groups=groups,
        close_pairs=front.close,
        comparable=front.comparable,
    )


@dataclass
class _Front:
    """The stages up to the dominant cluster: what the checks of the LM are planned from."""

    ctx: stages.Context
    verdict: dict[int, tuple[Reason, str]]
    notes: list[str]
    copies: stages.CopiesStage
    length: stages.Length
    outliers: stages.Outliers
    groups: tuple[tuple[int, ...], ...]
    clusters: stages.ClustersStage
    close: tuple[ClosePair, ...] = ()
    comparable: tuple[str, ...] = ()
    extensions: Extensions = NONE


def _front(
    round_: Round,
    vectors: np.ndarray,
    config: ConsensusConfig,
    signals: Signals,
    sim: np.ndarray | None,
    extensions: Extensions = NONE,
) -> _Front:
    n = len(round_.responses)
    if vectors.shape[0] != n:
        raise RoundError(f"round {round_.round_id}", "vectors", f"{vectors.shape[0]} vectors for {n} responses")
    ctx = stages.Context(
        round_,
        cosine_matrix(vectors) if sim is None else sim,
        np.array([word_count(r.text, config.text.count_math_symbols) for r in round_.responses], dtype=np.int64),
        arrivals(round_),
        config,
        signals,
    )
    verdict: dict[int, tuple[Reason, str]] = {}
    notes: list[str] = []

    def apply(stage: stages.Stage) -> None:
        _apply(stage, verdict, notes)

    def alive() -> np.ndarray:
        return _alive(n, verdict)

    apply(stages.invalid(ctx))
    answered = alive()
    copies = stages.copies(ctx, answered)
    apply(copies)
    # the persistence evidence reads every answer with text, copies included: a linked follower stays close
    close, comparable = stages.close(ctx, answered, copies.copy_of)
    apply(injection_stage(ctx, alive()))
    length = stages.length(ctx, alive())
    apply(length)
    outliers = stages.outliers(ctx, alive())
    apply(outliers)
    groups = stages.groups(ctx, alive(), copies.tied, extensions.voice_pairs)
    support: dict[int, int] = {}
    if config.copies.copy_support or config.copies.copy_rule == "legacy":
        for original in copies.copy_of:
            if original is not None:
                support[original] = support.get(original, 0) + 1
    # an answer that restates earlier ones is no voice of its own (it is graded on what is new in it)
    silent = frozenset(copies.derivation.derived) if copies.derivation is not None else frozenset()
    clusters = stages.clusters(ctx, alive(), support, groups, silent, extensions.weights(ctx))
    apply(clusters)
    return _Front(ctx, verdict, notes, copies, length, outliers, groups, clusters, close, comparable, extensions)


def arrivals(round_: Round) -> np.ndarray:
    """(n,) when each answer reached the validator, by its own clock: ``Response.received_s`` when every response
    has it, else ``latency_s`` (a rounds file: each answer timed from its own request). Which of two answers came
    first (a copy and its source, docs/consensus.md "Copies") is read here and nowhere else."""
    if round_.responses and all(r.received_s is not None for r in round_.responses):
        return np.array([r.received_s for r in round_.responses], dtype=np.float64)
    return np.array([r.latency_s for r in round_.responses], dtype=np.float64)


# the signals the stages up to clustering read; the LM's (polarity, factual, arbitration, judge) come after
FRONT_SIGNALS = ("reference_similarity", "prompt_similarity", "entities")


@dataclass(frozen=True)
class CheckPlan:
    """Whom the edge's LM checks ask about, from the stages before them.

    members: the dominant cluster before polarity and factual checks (the only answers whose
        membership those checks can change).
    answered: every answer with text of its own (not failed, empty or a copy): what a judge
        against a reference answer can score.
    front: those stages' results, which ``decide(..., plan=)`` reuses.
    """

    members: tuple[int, ...]
    answered: tuple[int, ...]
    front: _Front | None = field(default=None, repr=False, compare=False)


def _reuse(
    plan: CheckPlan | None, round_: Round, config: ConsensusConfig, signals: Signals, extensions: Extensions
) -> _Front | None:
    """The plan's front stages with the final signals, when nothing they read has changed; else None."""
    if plan is None or plan.front is None:
        return None
    ctx = plan.front.ctx
    if (
        ctx.round is not round_
        or ctx.config != config
        or plan.front.extensions is not extensions
        or any(getattr(ctx.signals, k) is not getattr(signals, k) for k in FRONT_SIGNALS)
    ):
        return None
    fresh = dataclasses.replace(ctx, signals=signals)  # the same RoundReading: words and matrices read once
    return dataclasses.replace(plan.front, ctx=fresh, verdict=dict(plan.front.verdict), notes=list(plan.front.notes))


def plan_checks(
    round_: Round,
    vectors: np.ndarray,
    config: ConsensusConfig | None = None,
    signals: Signals | None = None,
    sim: np.ndarray | None = None,
    extensions: Extensions = NONE,
) -> CheckPlan:
    """The same stages, in the same order, as ``decide`` up to clustering; ``decide`` then
    runs once with every signal the checks produced."""
    front = _front(round_, vectors, config or ConsensusConfig(), signals or Signals(), sim, extensions)
    no_text = (Reason.ERROR, Reason.EMPTY, Reason.COPY)
    n = len(round_.responses)
    return CheckPlan(
        members=tuple(int(i) for i in _alive(n, front.verdict)),
        answered=tuple(i for i in range(n) if front.verdict.get(i, (None,))[0] not in no_text),
        front=front,
    )


def _apply(stage: stages.Stage, verdict: dict[int, tuple[Reason, str]], notes: list[str]) -> None:
    verdict.update(stage.removed)
    notes.extend(stage.notes)


def _alive(n: int, verdict: dict[int, tuple[Reason, str]]) -> np.ndarray:
    return np.array([i for i in range(n) if i not in verdict], dtype=np.intp)
