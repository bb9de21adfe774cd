"""The quality part of the composite score: what of the agreeing answers' words an answer covers.

Word coverage (idf-weighted over the round's peers, a sybil group counting as one voice), with its
length effect partly removed (``length_controlled``) and scaled by specificity and prose
(``consensus.grading``).
``consensus.score`` combines it with the other parts; docs/consensus.md gives the rules and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from consensus.grading import quality_prompt_words, quality_words
from consensus.types import Reason

if TYPE_CHECKING:
    from consensus.context import Context


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
    # lazy: start-up cost, SciPy takes 0.7 s to import
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
    if config.quality.coverage_peers == "members" and len(members):
        peers = np.asarray(members, dtype=np.intp)
    # a sybil group must not vouch for itself: its members are no peers of each other
    own = {i: [j for j in g if j != i] for g in groups for i in g}
    if config.quality.quality_measure != "coverage":
        return peers, own, None, None
    # an answer that restates earlier ones counts only its own words, as a grade and as a peer
    word_sets = quality_words(ctx, residual)
    prompt_words = quality_prompt_words(ctx)  # restating the question covers nothing
    share, mass = coverage_matrix(
        word_sets,
        peers,
        prompt_words=prompt_words,
        with_mass=True,
        min_df=config.quality.coverage_min_df,
        groups=groups if config.quality.coverage_pooled else (),
    )
    if not config.quality.coverage_pooled:
        return peers, own, share, None
    # one voice, one peer: a group's answers share one peer's weight (a copied or reworded answer
    # must not count twice in what the others are measured against)
    return peers, own, share, mass / np.array([len(own.get(j, ())) + 1 for j in range(len(responses))])
