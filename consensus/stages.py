"""The stages of one evaluation, in order; each says which responses it removes and why.

``evaluate`` (consensus.pipeline) runs them one after the other on the responses the previous
stages left ("alive"): invalid (error / empty) -> copies -> length -> outliers -> groups (sybil
and entity groups: no removal, one voice each) -> clusters (the dominant cluster is chosen by
distinct voices) -> polarity. Every stage is a pure function of a ``Context`` (the round and what
was measured on it once) and the alive indices, and returns a ``Removed`` (index -> reason and
detail) with whatever else it found. docs/consensus.md describes each stage. ``Context``,
``Stage`` and ``Removed`` are defined in ``consensus.context`` and re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from consensus.agreement import polarity_agreement
from consensus.cluster import cluster_labels
from consensus.context import Context as Context
from consensus.context import Removed as Removed
from consensus.context import Stage as Stage
from consensus.factual_stage import overrules_majority
from consensus.filters import agreed_short, find_copies, length_threshold, lof_outliers, too_short
from consensus.groups import components, entity_pairs, voices, weighted_voices
from consensus.identity import ClosePair, close_pairs
from consensus.language import also_members
from consensus.reference import claims_of, judged_by_reference, why_contradicting
from consensus.restatements import Derivation, find_derivations, quoted_runs
from consensus.similarity import pair_values
from consensus.types import Polarity, Reason

if TYPE_CHECKING:
    from consensus.extensions import PairRule

# Constants of the stages below (settings nobody set until issue 34), the seed's where not said: the legacy copy
# rule's candidate cosine and near-copy word match ratio; clustering stops merging at distance 0.6 (cosine 0.4)
COPY_COSINE, COPY_TEXT_RATIO, CLUSTER_LINKAGE, CLUSTER_DISTANCE = 0.95, 0.85, "average", 0.6
MAX_THRESHOLD_WORDS = 3.0  # the length threshold never exceeds this: a concise answer among verbose ones is kept
# LOF (legacy): n_neighbors bound (used: max(2, min(10, (n - 1) // 2))), fewest candidates, contamination (0: auto)
LOF_NEIGHBORS, LOF_MIN_SAMPLES, LOF_CONTAMINATION = 10, 5, 0.0
# relevance gate: a dominant cluster's median prompt similarity reaches 0.15 (honest rounds' medians on the validity
# sets: 0.32 and up; answers to other prompts: 0.03) and half the most relevant cluster's
RELEVANCE_FLOOR, RELEVANCE_RATIO = 0.15, 0.5
# On a reference round an off-topic answer whose similarity to the prompt and to the reference is below this, and
# which the reference supports below ``consensus.reference.OFF_TOPIC_SUPPORT``, is removed (spam is not paid the
# support floor); TruthfulQA's honest answers removed this way: 0.6% without the NLI judge, 0.2% with it.
OFF_TOPIC_FAR = 0.10
POLARITY_QUORUM = 0.5  # the majority yes/no label holds strictly more than this share of the labelled members


def invalid(ctx: Context) -> Stage:
    """Failed and empty answers."""
    out: dict[int, tuple[Reason, str]] = {}
    for i, r in enumerate(ctx.round.responses):
        if r.error is not None:
            out[i] = (Reason.ERROR, r.error)
        elif not r.text.strip():
            out[i] = (Reason.EMPTY, "no text")
    return Stage(out)


@dataclass(frozen=True)
class CopiesStage(Stage):
    copy_of: tuple[int | None, ...] = ()
    tied: tuple[tuple[int, ...], ...] = ()
    derivation: Derivation | None = None  # with copy_rule "derivation": sources, novelty and residual words


def copies(ctx: Context, alive: np.ndarray) -> CopiesStage:
    """Copies pay once: restated answers (consensus.restatements), or identical ones (legacy: filters.find_copies).
    Only this round's texts and arrivals are evidence: identity links (consensus.identity) never make a copy."""
    n = len(ctx.round.responses)
    if not ctx.config.copies.copy_detection:
        return CopiesStage(copy_of=(None,) * n)
    if ctx.config.copies.copy_rule == "derivation":
        return _derived(ctx, alive)
    texts = ctx.texts
    found = find_copies(
        texts,
        ctx.sim,
        ctx.latencies,
        alive,
        cosine=COPY_COSINE,
        text_ratio=COPY_TEXT_RATIO,
        tie_window_s=ctx.config.copies.copy_tie_window_s,
        bag_ratio=ctx.config.copies.copy_bag_ratio,
        text_words=ctx.text_words,
        jaccard=ctx.jaccard,
    )
    out: dict[int, tuple[Reason, str]] = {}
    copy_of: list[int | None] = [None] * n
    for i in np.flatnonzero(found.copy_of >= 0):
        original = int(found.copy_of[i])
        copy_of[i] = original
        kind = "identical to" if " ".join(texts[i].split()) == " ".join(texts[original].split()) else "near-copy of"
        out[int(i)] = (
            Reason.COPY,
            f"{kind} response {original} (miner {ctx.round.responses[original].miner!r}), which came first",
        )
    notes = tuple(_tie_note(ctx, g) for g in found.tied)
    return CopiesStage(out, notes, tuple(copy_of), found.tied)


def _derived(ctx: Context, alive: np.ndarray) -> CopiesStage:
    c = ctx.config
    found = find_derivations(
        ctx.text_words,
        ctx.latencies,
        alive,
        prompt_words=ctx.prompt_words,
        min_words=c.copies.copy_min_words,
        tie_window_s=c.copies.copy_tie_window_s,
        quoted=[quoted_runs(r.text, ctx.words) for r in ctx.round.responses],
    )
    out: dict[int, tuple[Reason, str]] = {}
    copy_of: list[int | None] = [None] * len(ctx.round.responses)
    for i in np.flatnonzero(found.copy_of >= 0):
        original = int(found.copy_of[i])
        copy_of[int(i)] = original
        out[int(i)] = (
            Reason.COPY,
            f"restates earlier answers ({found.evidence[int(i)]}); "
            f"{found.novelty[int(i)]:.0%} of it is new; first source response {original} "
            f"(miner {ctx.round.responses[original].miner!r}), which arrived "
            f"{(float(ctx.latencies[i]) - float(ctx.latencies[original])) * 1000:.0f} ms earlier",
        )
    notes = tuple(
        f"response {i} restates responses {list(found.sources[i])} ({found.evidence[i]}): graded on the "
        f"{found.novelty[i]:.0%} of its content that is new"
        for i in found.derived
    )
    notes += tuple(_tie_note(ctx, g) for g in found.tied)
    return CopiesStage(out, notes, tuple(copy_of), found.tied, found)


def _tie_note(ctx: Context, group: tuple[int, ...]) -> str:
    """The record's note on answers tied in arrival: the gap between them as the validator's clock took it."""
    at = [float(ctx.latencies[i]) for i in group]
    gap_ms = (max(at) - min(at)) * 1000
    return (
        f"responses {list(group)} are the same answer and arrived {gap_ms:.0f} ms apart (within the tie window of "
        f"{ctx.config.copies.copy_tie_window_s * 1000:g} ms): no original, they share one payout"
    )


@dataclass(frozen=True)
class Length(Stage):
    threshold: float = 0.0


def length(ctx: Context, alive: np.ndarray) -> Length:
    """Answers shorter than the round's length threshold."""
    if not (c := ctx.config).filters.length_filter:
        return Length()
    threshold = length_threshold(ctx.counts, alive, c.filters.length_tolerance, MAX_THRESHOLD_WORDS)
    short = too_short(ctx.counts, alive, threshold)
    # "408", "The skin.": the round's answer in one word
    kept = (
        set(agreed_short(ctx.text_words, ctx.prompt_words, alive, short).tolist())
        if c.filters.length_keeps_agreed_short
        else set()
    )
    if c.clusters.reference_decides and ctx.round.reference:  # "Nothing happens" against "Nothing in particular
        # happens": with a reference a short answer that does not contradict it is scored by its support, not removed
        # (issue 45: the length rule removed 1.4% of TruthfulQA's honest answers, over the 1% bar)
        kept |= {int(i) for i in short if ctx.reference_support.get(int(i), 0.0) >= 0.0}
    return Length(
        {
            int(i): (Reason.TOO_SHORT, f"{ctx.counts[i]} words < threshold {threshold:.1f}")
            for i in short
            if i not in kept
        },
        threshold=threshold,
    )


@dataclass(frozen=True)
class Outliers(Stage):
    state: str = "disabled"


def outliers(ctx: Context, alive: np.ndarray) -> Outliers:
    """LocalOutlierFactor outliers; with ``lof_keep_central`` an outlier as central as the median answer stays."""
    c = ctx.config
    if not c.filters.outlier_detection:
        return Outliers()
    found, state = lof_outliers(
        ctx.sim, alive, neighbors=LOF_NEIGHBORS, min_samples=LOF_MIN_SAMPLES, contamination=LOF_CONTAMINATION
    )
    if c.filters.lof_keep_central and len(found) and len(alive) >= 2:
        sub = ctx.sim[np.ix_(alive, alive)]
        central = (sub.sum(axis=1) - 1.0) / (len(alive) - 1)  # mean similarity to the other candidates
        bar = float(np.median(central))
        where = {int(i): k for k, i in enumerate(alive)}
        kept = [int(i) for i in found if central[where[int(i)]] >= bar]
        if kept:
            state += f"; kept {len(kept)} central outlier(s)"
        found = np.array([int(i) for i in found if int(i) not in kept], dtype=np.intp)
    return Outliers({int(i): (Reason.OUTLIER, "LocalOutlierFactor outlier") for i in found}, state=state)


def close(
    ctx: Context, alive: np.ndarray, copy_of: tuple[int | None, ...] = ()
) -> tuple[tuple[ClosePair, ...], tuple[str, ...]]:
    """This round's evidence for the ledger's persistence rule (consensus.identity): (close pairs, the miners
    whose answers can be compared). Comparable: answers with text of their own (``copy_min_words`` words not
    the prompt's). Close: pairs of them far more alike than the round's (``identity.close_pairs``), and each
    copy and its source (a copy is the strongest evidence of all)."""
    if not ctx.config.identity.identity_persistence:
        return (), ()
    miners = [r.miner for r in ctx.round.responses]
    own = [
        int(i) for i in alive if len(set(ctx.text_words[int(i)]) - ctx.prompt_words) >= ctx.config.copies.copy_min_words
    ]
    found = {
        (p.first, p.second): p
        for p in close_pairs(ctx.sim, own, miners, ctx.latencies, ctx.config.copies.copy_tie_window_s)
    }
    for i, source in enumerate(copy_of):
        if source is not None and i in own and source in own and miners[i] != miners[source]:
            first, second = sorted((miners[i], miners[source]))
            found[(first, second)] = ClosePair(first, second, miners[i])
    return tuple(found[k] for k in sorted(found)), tuple(sorted({miners[i] for i in own}))


def groups(
    ctx: Context, alive: np.ndarray, tied: tuple[tuple[int, ...], ...], rules: Sequence[PairRule] = ()
) -> tuple[tuple[int, ...], ...]:
    """One-voice, one-payout groups among the alive: entities, tied copies, and the pairs of ``rules`` (from outside
    the product: ``consensus.extensions``; none by default)."""
    entities = {i: r.entity for i, r in enumerate(ctx.round.responses) if r.entity is not None}
    entities.update(ctx.signals.entities or {})
    pairs = entity_pairs(entities, alive)
    for rule in rules:
        pairs += rule(ctx, alive)
    alive_set = {int(i) for i in alive}
    pairs += [(g[0], i) for g in tied for i in g[1:] if g[0] in alive_set and i in alive_set]
    return components(pairs)


@dataclass(frozen=True)
class ClustersStage(Stage):
    labels: Mapping[int, int] = field(default_factory=dict)  # index -> cluster label, for the clustered


def relevance(ctx: Context, members: np.ndarray) -> float:
    """Mean similarity of ``members`` to the reference answer, else to the prompt; 0 without either."""
    source = ctx.signals.reference_similarity or ctx.signals.prompt_similarity
    return float(np.mean([source.get(int(i), 0.0) for i in members])) if source else 0.0


def clusters(
    ctx: Context,
    alive: np.ndarray,
    support: Mapping[int, int],
    voice_groups: tuple[tuple[int, ...], ...],
    silent: frozenset[int] = frozenset(),
    weights: Mapping[int, float] | None = None,
) -> ClustersStage:
    """Agglomerative clusters; everyone outside the dominant one leaves (or everyone, below min_support).

    Which cluster is dominant, in order: (1) with ``relevance_gate`` only clusters that address the
    prompt may be (``_on_topic``); (2) with a reference answer and ``reference_decides``, only the
    clusters whose members state about as many of its facts as the best one (``consensus.reference``);
    (3) then support: with voice groups, its distinct voices (a group counts once, a
    copy or an answer restating others adds nothing unless ``copy_support``), weighted by outside ``weights``
    (``min_support`` unweighted); legacy, its members plus
    their copies. Ties go to the more relevant cluster (``cluster_tiebreak``), then the tighter, then
    the lowest index. With a reference (``consensus.reference.support``), an answer that contradicts it leaves
    (reason ``reference``) from any cluster, and one that does not is never removed for its cluster: it is scored
    by its support (``consensus.score``); off topic, only when far from the prompt and the reference (``OFF_TOPIC_FAR``)
    and supported below ``OFF_TOPIC_SUPPORT``.
    """
    c = ctx.config
    if not len(alive):
        return ClustersStage()
    labels = (
        cluster_labels(ctx.sim, alive, linkage=CLUSTER_LINKAGE, distance=CLUSTER_DISTANCE)
        if c.clusters.clustering
        else np.zeros(len(alive), dtype=np.intp)
    )
    groups = {int(label): alive[labels == label] for label in np.unique(labels)}
    off_topic = _off_topic(ctx, groups) if c.clusters.relevance_gate else {}
    facts = ctx.reference_support if c.clusters.reference_decides else {}  # with a reference, its support ranks
    truth = {label: float(np.mean([max(0.0, facts.get(int(i), 0.0)) for i in m])) for label, m in groups.items()}
    best_truth = max((v for k, v in truth.items() if k not in off_topic), default=0.0) if facts else 0.0
    best_key: tuple[float, ...] | None = None
    top, top_support = -1, 0
    for label, members in groups.items():
        if label in off_topic or (facts and truth[label] < best_truth - REFERENCE_MARGIN):
            continue
        extra = sum(support.get(int(i), 0) for i in members)
        voiced = members[~np.isin(members, list(silent))] if silent else members
        by_voice = voice_groups if voice_groups and c.copies.copy_rule != "legacy" else ()
        total = (voices(voiced, by_voice) if by_voice else len(voiced)) + extra
        ranked = float(total) if weights is None else weighted_voices(voiced, by_voice, weights) + extra
        pairs = pair_values(ctx.sim, members)
        tight = float(pairs.mean()) if len(pairs) else 0.0
        rel = relevance(ctx, members) if c.clusters.cluster_tiebreak != "tightness" else 0.0
        key = (-ranked, -rel, -tight, int(members.min()))
        if best_key is None or key < best_key:
            best_key, top, top_support = key, int(label), total
    by_index = {int(i): int(label) for i, label in zip(alive, labels)}
    if top_support < c.clusters.min_support:
        why = f"no agreement: no {c.clusters.min_support} responses agree"
        out = {i: (Reason.OTHER_CLUSTER, off_topic.get(by_index[i], why)) for i in by_index}
        notes: tuple[str, ...] = (
            f"no agreement: the largest group {'on topic ' if off_topic else ''}has {top_support} "
            f"response(s), min_support is {c.clusters.min_support}; nobody is in consensus",
        )
    else:
        out = {
            i: (Reason.OTHER_CLUSTER, off_topic.get(g, f"cluster {g}, dominant is {top}")) for i, g in by_index.items()
        }
        out = {i: v for i, v in out.items() if by_index[i] != top}
        for i in also_members(ctx, list(out), groups[top].tolist(), [i for i in out if by_index[i] in off_topic]):
            del out[i]  # "408" among explanations of 408; an answer in the prompt's language (consensus.language)
        crowds = sorted(label for label in off_topic if len(groups[label]) >= 2)  # a lone one is unremarkable
        notes = (f"relevance: clusters {crowds} do not address the prompt and cannot be dominant",) if crowds else ()
    texts, ref, topics = ctx.texts, ctx.round.reference or "", {i: by_index[i] in off_topic for i in by_index}
    near = {**(ctx.signals.prompt_similarity or {})}
    for i, v in (ctx.signals.reference_similarity or {}).items():
        near[i] = max(v, near.get(i, -1.0))
    far = {i: near.get(i, -1.0) < OFF_TOPIC_FAR for i in by_index}  # off topic by itself, not only beside the best
    why_not = lambda i: why_contradicting(*map(ctx.folded, (texts[i], ref, ctx.round.prompt)))  # noqa: E731
    out = (
        judged_by_reference(out, facts, topics, far, why_not) if facts else out
    )  # the reference decides, not the count
    return ClustersStage(out, notes, by_index)


REFERENCE_MARGIN = 0.25  # clusters within this much of the best cluster's reference agreement stay in contention


def _off_topic(ctx: Context, groups: Mapping[int, np.ndarray]) -> dict[int, str]:
    """Cluster label -> why it cannot be dominant: its median similarity to the prompt (or the reference,
    whichever is higher) is below ``RELEVANCE_FLOOR`` or below ``RELEVANCE_RATIO`` of the best cluster's."""
    prompt, ref = ctx.signals.prompt_similarity or {}, ctx.signals.reference_similarity or {}
    if not prompt and not ref:
        return {}
    level = {
        label: float(np.median([max(prompt.get(int(i), -1.0), ref.get(int(i), -1.0)) for i in m]))
        for label, m in groups.items()
    }
    best = max(level.values())
    bar = max(RELEVANCE_FLOOR, RELEVANCE_RATIO * best)
    return {
        label: f"off topic: median similarity to the prompt {v:.2f} < {bar:.2f}"
        for label, v in level.items()
        if v < bar
    }


def _arbitrated_side(ctx: Context, alive: np.ndarray, labels: Mapping[int, Polarity]) -> Polarity | None:
    """The yes/no side the LM's arbitration took: the one label of the members it agreed with, when those it
    disagreed with all have the other; None when it did not arbitrate (or its verdicts and the labels differ)."""
    given, members = ctx.signals.arbitration, {int(i) for i in alive}
    if given is None or not ctx.config.checks.factual_arbitration or overrules_majority(given, members, ctx.config):
        return None
    decided = (Polarity.AFFIRMATIVE, Polarity.NEGATIVE)
    agreed = {labels.get(int(i)) for i, ok in given.items() if ok and int(i) in members} & set(decided)
    other = {labels.get(int(i)) for i, ok in given.items() if not ok and int(i) in members} & set(decided)
    if len(agreed) != 1 or not other or other & agreed:
        return None
    return next(iter(agreed))


@dataclass(frozen=True)
class PolarityStage(Stage):
    agreed: bool | None = None
    majority: Polarity | None = None


def polarity(ctx: Context, alive: np.ndarray) -> PolarityStage:
    """With polarity labels: members whose yes/no answer contradicts the agreed majority leave; when the LM
    arbitrated between yes and no (``lm.arbitrate``), its side is the majority, however many say the other."""
    labels, leaning = ctx.signals.polarity, ctx.signals.polarity_leaning
    if labels is None or not ctx.config.checks.polarity_clustering:
        return PolarityStage()
    said = claims_of(*map(ctx.folded, (ctx.round.reference or "", ctx.round.prompt))).yes_no
    if (
        said is not None and ctx.config.clusters.reference_decides
    ):  # neither the LM's yes or no nor a headcount overrules it
        ref = Polarity.AFFIRMATIVE if said else Polarity.NEGATIVE
        return PolarityStage({}, (f"polarity: the reference answer says {ref.value}; it decides",), True, ref)
    side = _arbitrated_side(ctx, alive, labels)
    if side is not None:
        out = {
            int(i): (Reason.POLARITY, f"{labels[int(i)].value}; the LM arbitrated: its own answer is {side.value}")
            for i in alive
            if labels.get(int(i)) in (Polarity.AFFIRMATIVE, Polarity.NEGATIVE) and labels[int(i)] is not side
        }
        return PolarityStage(out, agreed=True, majority=side)
    outcome = polarity_agreement(alive, dict(labels), POLARITY_QUORUM, None if leaning is None else dict(leaning))
    if outcome.agreed is None:
        return PolarityStage(notes=("polarity: no member gave a yes/no answer; not applied",))
    if not outcome.agreed:
        return PolarityStage(notes=("polarity: no agreement (tie, or majority below quorum)",), agreed=False)
    majority = outcome.majority
    assert majority is not None
    out = {}
    for i in outcome.dissenters:
        lean = f" (leans {leaning[i]:.1f} of 10)" if labels[i] is Polarity.UNCLEAR and leaning else ""
        out[i] = (Reason.POLARITY, f"{labels[i].value}, majority is {majority.value}{lean}")
    return PolarityStage(out, agreed=True, majority=majority)
