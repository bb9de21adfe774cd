"""Composite score per response: alignment, quality, confidence, consensus bonus.

All parts are in [0, 1]; the composite is ``100 * sum(weight * part)``, times
``1 - penalty`` outside consensus. docs/consensus.md gives the rules and why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from consensus._common_words import COMMON
from consensus.config import ConsensusConfig
from consensus.semantic import sentence_coverage_matrix
from consensus.types import Reason, ResponseResult, ScoreParts

if TYPE_CHECKING:
    from consensus.signals import Signals
    from consensus.stages import Context

ZERO_WEIGHTS = (0.0, 0.0, 0.0, 0.0)


def effective_weights(config: ConsensusConfig, any_confidence: bool) -> tuple[float, float, float, float]:
    """(alignment, quality, confidence, bonus) weights actually applied; they sum to 1.

    When weighted scoring is off, or no response in the round reports a confidence, the confidence weight
    is shared among the other three in proportion to their weights, so the remaining parts keep their
    relative meaning and a composite still spans 0..100.
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


def coverage_matrix(
    word_sets: list[frozenset[str]],
    peers: np.ndarray,
    idf: bool = True,
    prompt_words: frozenset[str] = frozenset(),
    with_mass: bool = False,
    min_df: int = 1,
    groups: Sequence[Sequence[int]] = (),
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """(n, n) share[i, j] = idf(W_i & W_j) / idf(W_j): how much of answer j answer i also says.

    Words of the prompt weigh 0 (``prompt_words``): restating the question says nothing, and an
    answer made of the question's words (a prompt injection that quotes it) must not cover the
    answers that use them.

    Words count by their inverse document frequency over the ``peers`` (``round_idf``; 1 each
    with ``idf`` off): "the" and "and", which every answer uses, weigh little; the content words
    weigh most. One sparse product over a sorted vocabulary, so the sums run in the same order in
    every process (no dependence on the hash-seeded order of a set). share[i, j] is 0 where W_j
    has no weight. ``with_mass`` also returns each answer's total word weight (n,).

    ``min_df``: a word fewer than this many peers use weighs 0. With 2, a word only one answer
    says is nobody's agreement: no other answer can cover it, so it only dilutes the measure (a
    long off-topic or injected answer is made of such words). Peers count by voice (``groups``:
    one sybil group, entity or tied copy is one peer), so a group cannot make its own words shared.
    """
    from scipy.sparse import csr_matrix

    n = len(word_sets)
    vocab = {t: k for k, t in enumerate(sorted(set().union(*word_sets)))} if n else {}
    weight = np.ones(len(vocab), dtype=np.float64)
    if idf:
        for t, w in round_idf(word_sets, peers, groups).items():
            weight[vocab[t]] = w
        seen = np.zeros(len(vocab), dtype=bool)
        seen[[vocab[t] for j in peers for t in word_sets[int(j)]]] = True
        weight[~seen] = 0.0  # a word no peer used: nobody's agreement to cover
    if min_df > 1:
        voice = {i: min(g) for g in groups for i in g}
        used: dict[int, set[int]] = {}
        for j in (int(p) for p in peers):
            for t in word_sets[j]:
                used.setdefault(vocab[t], set()).add(voice.get(j, j))
        df = np.zeros(len(vocab), dtype=np.int64)
        for k, who in used.items():
            df[k] = len(who)
        weight[df < min_df] = 0.0  # df by voice: a group cannot make its own words shared
    for t in prompt_words:
        if t in vocab:
            weight[vocab[t]] = 0.0
    rows = [i for i, ws in enumerate(word_sets) for _ in ws]
    cols = [vocab[t] for ws in word_sets for t in sorted(ws)]
    x = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, max(len(vocab), 1)))
    inter = (x.multiply(weight[None, : len(vocab)] if len(vocab) else 1.0).tocsr() @ x.T).toarray()
    mass = np.diag(inter).copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(mass[None, :] > 0, inter / mass[None, :], 0.0)
    return (share, mass) if with_mass else share


def coverage(index: int, members: np.ndarray, share: np.ndarray, mass: np.ndarray | None = None) -> float:
    """Mean over the other members j (with words of weight) of share[index, j]; 1 alone.

    What the agreeing answers say, this answer covers: a terse answer covers little of a
    detailed consensus, a detailed one covers much; an answer alone has nothing to cover (1).
    With ``mass`` (n,) the mean is weighted by it (``coverage_pooled``: the share of everything
    the others said, so a detailed peer counts for what it holds, not as one vote).
    """
    others = [int(j) for j in members if int(j) != index and share[int(j), int(j)] > 0]
    if not others:
        return 1.0
    if mass is None:
        return float(np.mean(share[index, others]))
    return float(np.average(share[index, others], weights=mass[others]))


def sentence_share(config: ConsensusConfig, signals: Signals) -> np.ndarray | None:
    """The (n, n) sentence coverage (consensus.semantic) when the config asks for it and the edge sent the vectors."""
    if config.coverage_semantic <= 0 or signals.sentence_vectors is None:
        return None
    return sentence_coverage_matrix(
        signals.sentence_vectors, threshold=config.semantic_threshold, floor=config.semantic_floor
    )


def blended_coverage(
    index: int,
    peers: np.ndarray,
    words_share: np.ndarray,
    sentence_share: np.ndarray | None,
    semantic: float,
    mass: np.ndarray | None = None,
) -> float:
    """(1 - semantic) * word coverage + semantic * sentence coverage (words alone without sentence vectors).

    mass: the peers' word weights when coverage is pooled (``coverage_pooled``), else None.
    """
    by_words = coverage(index, peers, words_share, mass)
    if sentence_share is None:
        return by_words
    return (1.0 - semantic) * by_words + semantic * coverage(index, peers, sentence_share)


def round_idf(
    word_sets: list[frozenset[str]], peers: np.ndarray, groups: Sequence[Sequence[int]] = ()
) -> dict[str, float]:
    """log(1 + n / df(t)) over the ``peers``' word sets: the round's own inverse document frequency.

    With ``groups`` n and df count voices (a group's answers are one document), so copies and
    rewordings change no one's weights.
    """
    voice = {i: min(g) for g in groups for i in g}
    users: dict[str, set[int]] = {}
    for j in (int(p) for p in peers):
        for t in word_sets[j]:
            users.setdefault(t, set()).add(voice.get(j, j))
    n = max(len({voice.get(int(j), int(j)) for j in peers}), 1)
    return {t: float(np.log1p(n / len(who))) for t, who in users.items()}


def length_elasticity(coverages: np.ndarray, counts: np.ndarray) -> float:
    """The round's elasticity of coverage in length: the Theil-Sen slope of log coverage on log words, in [0, 1].

    Coverage grows with length whatever an answer's quality (a longer answer uses more of the
    words the others use); this is how fast it grows in this round. Theil-Sen (the median of the
    pairwise slopes) so that one padded essay cannot set it. 0 with fewer than 4 usable answers
    (answers with coverage and words) or no two lengths apart.
    """
    ok = (coverages > 0) & (counts > 0)
    if int(ok.sum()) < 4:
        return 0.0
    x, y = np.log(counts[ok].astype(np.float64)), np.log(coverages[ok])
    a, b = np.triu_indices(len(x), 1)
    dx = x[b] - x[a]
    apart = np.abs(dx) > 1e-9
    if not apart.any():
        return 0.0
    return float(np.clip(np.median((y[b] - y[a])[apart] / dx[apart]), 0.0, 1.0))


def length_controlled(
    coverages: Mapping[int, float], counts: np.ndarray, members: np.ndarray, control: float
) -> dict[int, float]:
    """Coverage with ``control`` of its length effect removed (AlpacaEval's length-controlled win rate, in kind).

    ``quality_i = coverage_i * (m / words_i) ** (control * g)``, capped at 1, where ``m`` is the
    median word count of the members and ``g`` the round's ``length_elasticity`` over the members.
    With control 1 an answer is graded against what an answer of its length covers in this
    round (padding buys nothing, brevity costs nothing); 0 is raw coverage (legacy), which pays
    length for its own sake. The default 0.5 keeps half of the length effect: a detailed answer
    still says more. docs/validity.md has the measurements.
    """
    out = {i: float(v) for i, v in coverages.items()}
    inside = [int(i) for i in members if int(i) in out]
    if control <= 0 or not inside:
        return out
    g = length_elasticity(np.array([out[i] for i in inside]), counts[inside])
    if g <= 0:
        return out
    median = float(np.median(counts[inside]))
    if median <= 0:
        return out
    return {i: float(min(1.0, v * (median / max(int(counts[i]), 1)) ** (control * g))) for i, v in out.items()}


def specificity(
    word_sets: Mapping[int, frozenset[str]],
    prompt_words: frozenset[str] = frozenset(),
    groups: Sequence[Sequence[int]] = (),
) -> dict[int, float]:
    """Each answer's share of its content words that are specific and agreed, in [0, 1].

    Content words: not the prompt's, three letters or more, or a number. Specific: not among the
    most frequent English words (``consensus._common_words``: "important", "check", "make", "sure"
    are generic; "odometer", "antigen", "perihelion", "1927" are not). Agreed: another voice (a group
    counts once) says it too, so a string of rare words nobody else uses buys nothing. A vague answer
    ("take your time, check the condition, trust your instincts") has almost none; a padded essay
    dilutes what it has. Words of other languages are all "specific": the share is compared within
    the round (``with_specificity``), so a round in one language is graded on its own terms.
    """
    content = {
        i: frozenset(w for w in ws if w not in prompt_words and (len(w) >= 3 or w.isdigit()))
        for i, ws in word_sets.items()
    }
    voice = {i: min(g) for g in groups for i in g}
    users: dict[str, set[int]] = {}
    for i, ws in content.items():
        for w in ws:
            if w not in COMMON:
                users.setdefault(w, set()).add(voice.get(i, i))
    return {
        i: (sum(1 for w in ws if w not in COMMON and len(users[w] - {voice.get(i, i)}) > 0) / len(ws) if ws else 0.0)
        for i, ws in content.items()
    }


def with_specificity(
    qualities: Mapping[int, float], spec: Mapping[int, float], members: np.ndarray, weight: float
) -> dict[int, float]:
    """``quality * (specificity / the members' median specificity) ** weight``, capped at 1.

    Relative to the round: an answer as specific as the typical member keeps its quality; one with
    half the specific words loses ``1 - 0.5 ** weight`` of it. No member with a specific word: unchanged.
    """
    inside = [spec[int(i)] for i in members if int(i) in spec]
    median = float(np.median(inside)) if inside else 0.0
    if weight <= 0 or median <= 0:
        return dict(qualities)
    return {i: float(min(1.0, q * (spec.get(i, median) / median) ** weight)) for i, q in qualities.items()}


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
) -> ScoreParts:
    """Composite score of one response against the consensus members.

    sim_row: (n,) similarities of this response to every response.
    members: indices of the in-consensus responses.
    reference_words: median word count of the members (the length quality saturates there).
    quality: the quality part when measured otherwise (``coverage``); default: the length ratio.
    """
    others = members[members != index]
    if len(others):
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


def reference_similarity_scores(similarity: Mapping[int, float], scored: list[int]) -> dict[int, float]:
    """Embedding similarity to the reference answer, relative to this round's answers, in [0, 1].

    Raw cosines to a short reference ("100 °C") are all similar; what tells answers apart is
    their order: the closest of the round's scored answers gets 1, the farthest 0, linearly
    between. With one scored answer (or all equally close) everyone gets 1.
    """
    values = {i: float(similarity[i]) for i in scored if i in similarity}
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if hi - lo <= 1e-12:
        return {i: 1.0 for i in values}
    return {i: (v - lo) / (hi - lo) for i, v in values.items()}


def coverage_inputs(
    ctx: Context,
    verdict: Mapping[int, tuple[Reason, str]],
    members: np.ndarray,
    groups: tuple[tuple[int, ...], ...],
    residual: Mapping[int, frozenset[str]] | None = None,
) -> tuple[np.ndarray, dict[int, list[int]], np.ndarray | None, np.ndarray | None]:
    """(peers, each grouped answer's group-mates, share matrix, peer weights) for the coverage part.

    share is None unless ``quality_measure`` is coverage; the weights are None unless
    ``coverage_pooled`` (then each peer weighs its word mass, a group's answers sharing one peer's).
    """
    config, responses = ctx.config, ctx.round.responses
    # legacy: every answer that survived the filters (whatever its cluster); now the dominant cluster's
    # members: what the agreeing answers say, not what an off-topic answer says
    peers = np.array(
        [i for i in range(len(responses)) if not verdict.get(i, (Reason.IN_CONSENSUS, ""))[0].filtered], dtype=np.intp
    )
    if config.coverage_peers == "members" and len(members):
        peers = np.asarray(members, dtype=np.intp)
    # a sybil group must not vouch for itself: its members are no peers of each other
    own = {i: [j for j in g if j != i] for g in groups for i in g}
    if config.quality_measure != "coverage":
        return peers, own, None, None
    # an answer that restates earlier ones counts only its own words, as a grade and as a peer
    word_sets = [(residual or {}).get(i, frozenset(w)) for i, w in enumerate(ctx.text_words)]
    prompt_words = ctx.prompt_words if config.coverage_excludes_prompt else frozenset()
    share, mass = coverage_matrix(
        word_sets,
        peers,
        prompt_words=prompt_words,
        with_mass=True,
        min_df=config.coverage_min_df,
        groups=groups if config.coverage_pooled else (),
    )
    if not config.coverage_pooled:
        return peers, own, share, None
    # one voice, one peer: a group's answers share one peer's weight (a copied or reworded answer
    # must not count twice in what the others are measured against)
    return peers, own, share, mass / np.array([len(own.get(j, ())) + 1 for j in range(len(responses))])


def score_all(
    ctx: Context,
    verdict: Mapping[int, tuple[Reason, str]],
    members: np.ndarray,
    copy_of: tuple[int | None, ...],
    labels: Mapping[int, int],
    groups: tuple[tuple[int, ...], ...] = (),
    residual: Mapping[int, frozenset[str]] | None = None,
) -> tuple[ResponseResult, ...]:
    """The ``ResponseResult`` of every response: its reason, detail and composite score parts.

    residual: for answers that restate earlier ones (consensus.derivation), the words that are new
    in them: their quality part grades those words alone.
    """
    config, signals, responses = ctx.config, ctx.signals, ctx.round.responses
    weights = effective_weights(
        config, any(r.confidence is not None for r in responses) or bool(signals.selectit_confidence)
    )
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
        if config.weight_reference_similarity > 0
        else {}
    )
    if config.weight_reference_similarity > 0 and config.reference_decides and ctx.reference_agreement:
        # the reference's facts, not the embedding's topic: "Lyon" and "Paris" are equally close to it
        by_similarity = {i: ctx.reference_agreement[i] for i in scored}
    peers, own, share, mass = coverage_inputs(ctx, verdict, members, groups, residual)
    semantic = sentence_share(config, signals) if share is not None else None
    earns = [
        i
        for i in range(len(responses))
        if verdict.get(i, (Reason.IN_CONSENSUS, ""))[0]
        not in (Reason.ERROR, Reason.EMPTY, Reason.COPY, Reason.INJECTION)
    ]
    qualities: dict[int, float] = {}
    if share is not None:
        covered = {
            i: blended_coverage(
                i, peers[~np.isin(peers, own.get(i, ()))], share, semantic, config.coverage_semantic, mass
            )
            for i in earns
        }
        qualities = length_controlled(covered, ctx.counts, members, config.coverage_length_control)
        if config.quality_specificity > 0:
            sets = {i: (residual or {}).get(i, frozenset(ctx.text_words[i])) for i in earns}
            spec = specificity(sets, ctx.prompt_words, groups)
            qualities = with_specificity(qualities, spec, members, config.quality_specificity)
    results = []
    for i, r in enumerate(responses):
        why, detail = verdict.get(i, (Reason.IN_CONSENSUS, ""))
        confidence = r.confidence if r.confidence is not None else (signals.selectit_confidence or {}).get(i)
        if why in (Reason.ERROR, Reason.EMPTY, Reason.COPY, Reason.INJECTION):
            parts = zero_score(weights)
        else:
            # with alignment_by_voice a group's answers are not aligned to each other (one voice)
            aligned = members[~np.isin(members, own.get(i, ()))] if config.alignment_by_voice else members
            parts = score_response(
                sim_row=ctx.sim[i],
                index=i,
                members=aligned,
                words=int(ctx.counts[i]),
                reference_words=ref_words,
                confidence=confidence if config.weighted_scoring else None,
                in_consensus=why is Reason.IN_CONSENSUS,
                weights=weights,
                penalty=config.out_of_consensus_penalty,
                quality=qualities.get(i) if share is not None else None,
            )
            if i in judged:
                parts = with_reference(parts, judged[i], config.weight_reference)
            elif i in by_similarity:
                parts = with_reference(parts, by_similarity[i], config.weight_reference_similarity)
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
    return tuple(results)
