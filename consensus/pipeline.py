"""One round through the pure core: filters -> clusters -> consensus -> composite scores.

``evaluate`` takes the round and its embedding vectors (the model is an edge
the caller owns) and returns an ``Evaluation``. It is deterministic: the same
round, vectors and config give the same result, bit for bit.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from consensus.agreement import consensus_score, polarity_agreement
from consensus.cluster import cluster_labels, dominant_cluster
from consensus.config import ConsensusConfig
from consensus.filters import find_copies, length_threshold, lof_outliers, too_short, word_count
from consensus.score import effective_weights, score_response, with_reference, zero_score
from consensus.similarity import cosine_matrix
from consensus.types import (ConsensusResult, Evaluation, Polarity, Reason, ResponseResult, Round,
                             ScoreParts)


def evaluate(round_: Round, vectors: np.ndarray, config: ConsensusConfig | None = None,
             polarity: Mapping[int, Polarity] | None = None, sim: np.ndarray | None = None,
             reference_scores: Mapping[int, float] | None = None,
             polarity_leaning: Mapping[int, float] | None = None) -> Evaluation:
    """Evaluate one round.

    round_: the round; responses in input order.
    vectors: (n, d) unit (or zero, for empty texts) embedding rows, one per response.
    polarity: optional label per response index (the LM layer's seam); when
        given and ``config.polarity_clustering`` is on, consensus also
        requires agreement and dissenters leave with reason "polarity".
    sim: the (n, n) similarity matrix if the caller already has it.
    polarity_leaning: optional 0..10 score behind each polarity label (see
        ``agreement.polarity_agreement``: unclear answers leaning against an
        agreed majority dissent).
    reference_scores: optional judged agreement in [0, 1] of responses with the
        round's reference answer (the judge's seam); blended into their
        composite with ``config.weight_reference`` (``score.with_reference``).
    """
    config = config or ConsensusConfig()
    responses = round_.responses
    n = len(responses)
    if vectors.shape[0] != n:
        raise ValueError(f"round {round_.round_id}: {vectors.shape[0]} vectors for {n} responses")
    sim = cosine_matrix(vectors) if sim is None else sim
    texts = [r.text for r in responses]
    counts = np.array([word_count(t) for t in texts], dtype=np.int64)
    latencies = np.array([r.latency_s for r in responses], dtype=np.float64)
    reason: list[Reason | None] = [None] * n
    detail = [""] * n
    copy_of: list[int | None] = [None] * n
    notes: list[str] = []

    for i, r in enumerate(responses):
        if r.error is not None:
            reason[i], detail[i] = Reason.ERROR, r.error
        elif not r.text.strip():
            reason[i], detail[i] = Reason.EMPTY, "no text"

    def alive() -> np.ndarray:
        return np.array([i for i in range(n) if reason[i] is None], dtype=np.intp)

    if config.copy_detection:
        groups = find_copies(texts, sim, latencies, alive(), cosine=config.copy_cosine,
                             text_ratio=config.copy_text_ratio)
        for i in np.flatnonzero(groups.copy_of >= 0):
            original = int(groups.copy_of[i])
            reason[i], copy_of[i] = Reason.COPY, original
            kind = "identical to" if " ".join(texts[i].split()) == " ".join(texts[original].split()) else "near-copy of"
            detail[i] = f"{kind} response {original} (miner {responses[original].miner!r}), which came first"

    threshold = 0.0
    if config.quality_filtering:
        cand = alive()
        threshold = length_threshold(counts, cand, config.quality_sensitivity, config.quality_max_threshold_words)
        for i in too_short(counts, cand, threshold):
            reason[i], detail[i] = Reason.TOO_SHORT, f"{counts[i]} words < threshold {threshold:.1f}"

    lof_state = "disabled"
    if config.outlier_detection:
        outliers, lof_state = lof_outliers(sim, alive(), neighbors=config.lof_neighbors,
                                           min_samples=config.lof_min_samples,
                                           contamination=config.lof_contamination)
        for i in outliers:
            reason[i], detail[i] = Reason.OUTLIER, "LocalOutlierFactor outlier"

    cand = alive()
    cluster = np.full(n, -1, dtype=np.intp)
    copies_of = np.zeros(n, dtype=np.int64)
    for original in copy_of:
        if original is not None:
            copies_of[original] += 1
    if len(cand):
        labels = cluster_labels(sim, cand, linkage=config.cluster_linkage, distance=config.cluster_distance) \
            if config.clustering else np.zeros(len(cand), dtype=np.intp)
        cluster[cand] = labels
        top, support = dominant_cluster(sim, cand, labels, 1 + copies_of[cand])
        if support < config.min_support:
            notes.append(f"no agreement: the largest group has {support} response(s), min_support is "
                         f"{config.min_support}; nobody is in consensus")
            for i in cand:
                reason[i], detail[i] = Reason.OTHER_CLUSTER, f"no agreement: no {config.min_support} responses agree"
        else:
            for i, label in zip(cand, labels):
                if label != top:
                    reason[i], detail[i] = Reason.OTHER_CLUSTER, f"cluster {label}, dominant is {top}"

    labels_given = polarity is not None and config.polarity_clustering
    polarity_agreed: bool | None = None
    majority: Polarity | None = None
    if labels_given:
        outcome = polarity_agreement(alive(), dict(polarity), config.polarity_quorum,
                                     None if polarity_leaning is None else dict(polarity_leaning))
        polarity_agreed, majority = outcome.agreed, outcome.majority
        if outcome.agreed:
            for i in outcome.dissenters:
                reason[i], detail[i] = Reason.POLARITY, f"{polarity[i].value}, majority is {majority.value}" + (
                    f" (leans {polarity_leaning[i]:.1f} of 10)" if polarity[i] is Polarity.UNCLEAR and polarity_leaning
                    else "")
        elif outcome.agreed is None:
            notes.append("polarity: no member gave a yes/no answer; not applied")
        else:
            notes.append("polarity: no agreement (tie, or majority below quorum)")

    members = alive()
    for i in members:
        reason[i] = Reason.IN_CONSENSUS
    # measured over distinct answers only: copies count as support for the dominant cluster, but
    # they must not inflate the agreement score (and with it the pool)
    score, mu, sigma, pairs = consensus_score(sim, members, config.lambda_factor)
    reached = pairs > 0 and score >= config.consensus_threshold and polarity_agreed is not False
    if pairs == 0:
        note = f"{len(members)} response(s) in consensus: no pair to measure agreement"
    else:
        note = f"mu={mu:.4f} sigma={sigma:.4f} lambda={config.lambda_factor:g} over {pairs} pairs"

    any_confidence = any(r.confidence is not None for r in responses)
    weights = effective_weights(config, any_confidence)
    # quality saturates at the typical length of the agreeing answers, copies included (as for support):
    # one long junk answer in a small cluster must not make the answer many miners gave look short
    agreeing = [int(i) for i in members] + [i for i, o in enumerate(copy_of) if o is not None and o in set(members.tolist())]
    ref_words = float(np.median(counts[agreeing])) if len(members) else 0.0
    results = []
    for i, r in enumerate(responses):
        why = reason[i]
        assert why is not None
        parts: ScoreParts
        if why in (Reason.ERROR, Reason.EMPTY, Reason.COPY):
            parts = zero_score(weights)
        else:
            parts = score_response(sim_row=sim[i], index=i, members=members, words=int(counts[i]),
                                   reference_words=ref_words,
                                   confidence=r.confidence if config.weighted_scoring else None,
                                   in_consensus=why is Reason.IN_CONSENSUS, weights=weights,
                                   penalty=config.out_of_consensus_penalty)
            if reference_scores is not None and i in reference_scores:
                parts = with_reference(parts, reference_scores[i], config.weight_reference)
        results.append(ResponseResult(
            index=i, miner=r.miner, reason=why, detail=detail[i], words=int(counts[i]),
            cluster=int(cluster[i]), score=parts, copy_of=copy_of[i],
            polarity=None if polarity is None else polarity.get(i)))

    consensus = ConsensusResult(score=score, mean=mu, std=sigma, pairs=pairs, reached=bool(reached),
                                polarity_agreed=polarity_agreed, majority_polarity=majority, note=note)
    return Evaluation(round_id=round_.round_id, results=tuple(results), consensus=consensus,
                      members=tuple(int(i) for i in members), lof=lof_state,
                      quality_threshold_words=threshold, notes=tuple(notes))
