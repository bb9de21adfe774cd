"""Coverage by voice (issue 12): pooled peer weights, words only one voice says, peers = the agreeing answers.

Toy word sets checked by hand, then the rules' reasons through the pipeline: a copy or a sybil group
counts as one peer, and junk answers (off-topic, a prompt injection) cannot dilute what the honest
answers are measured against.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from consensus import ConsensusConfig, decide
from consensus.quality import coverage, coverage_matrix, round_idf
from consensus.types import Response, Round
from emissions import allocate
from emissions.config import EmissionsConfig

LEGACY_COVERAGE = {
    "quality.coverage_pooled": False,
    "quality.coverage_min_df": 1,
    "quality.coverage_peers": "surviving",
}


def test_pooled_coverage_weighs_each_peer_by_its_mass():
    share = np.array([[1.0, 0.5, 1.0], [0.2, 1.0, 0.0], [0.1, 0.0, 1.0]])
    mass = np.array([2.0, 4.0, 1.0])
    members = np.array([0, 1, 2])
    assert coverage(0, members, share) == pytest.approx(0.75)  # per-peer mean (legacy)
    assert coverage(0, members, share, mass) == pytest.approx((0.5 * 4 + 1.0 * 1) / 5)  # 3 of 5 units said
    assert coverage(0, np.array([0]), share, mass) == 1.0  # alone: nothing to cover


def test_words_only_one_voice_says_weigh_nothing():
    sets = [frozenset({"a", "b"}), frozenset({"a", "c"}), frozenset({"d", "e"})]
    peers = np.arange(3)
    share, mass = coverage_matrix(sets, peers, idf=False, with_mass=True, min_df=2)
    assert mass.tolist() == [1.0, 1.0, 0.0]  # only "a" is said twice
    assert share[0, 1] == 1.0 and share[1, 0] == 1.0
    assert share[0, 2] == 0.0 and share[2, 2] == 0.0  # the third has nothing anyone else says: no peer
    # legacy: every word counts
    legacy = coverage_matrix(sets, peers, idf=False)
    assert legacy[0, 1] == pytest.approx(0.5)


def test_a_group_cannot_make_its_own_words_shared():
    sets = [frozenset({"a", "x"}), frozenset({"a", "x"}), frozenset({"a", "y"})]
    peers = np.arange(3)
    _, mass = coverage_matrix(sets, peers, idf=False, with_mass=True, min_df=2, groups=((0, 1),))
    assert mass.tolist() == [1.0, 1.0, 1.0]  # x is one voice's word, a is two voices'
    _, mass = coverage_matrix(sets, peers, idf=False, with_mass=True, min_df=2)
    assert mass.tolist() == [2.0, 2.0, 1.0]


def test_idf_counts_voices():
    sets = [frozenset({"a"}), frozenset({"a"}), frozenset({"b"})]
    by_voice = round_idf(sets, np.arange(3), ((0, 1),))
    assert by_voice == {"a": pytest.approx(np.log1p(2 / 1)), "b": pytest.approx(np.log1p(2 / 1))}
    assert round_idf(sets, np.arange(3))["a"] == pytest.approx(np.log1p(3 / 2))


# --- through the pipeline ------------------------------------------------------------------------

HONEST = [
    "Paris is the capital of France and also its largest city, on the river Seine.",
    "The capital of France is Paris, its largest city, which lies on the Seine river.",
    "France has Paris as its capital city; the Seine river runs through the centre of Paris.",
]


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    h = rng.normal(size=32)
    v = np.array([h + 0.25 * rng.normal(size=32) for _ in range(n)], np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_tied_copy_changes_no_other_answers_quality():
    # one-sentence answers are agreement under the derivation rule (consensus.restatements): the tied copy is
    # the legacy copy rule's, which still pairs them; coverage by voice is what this test is about
    base = Round(
        "r", "What is the capital of France?", tuple(Response(f"m{k}", t, 1.0 + k) for k, t in enumerate(HONEST))
    )
    vectors = _vectors(3)
    copied = dataclasses.replace(base, responses=base.responses + (Response("copier", HONEST[0], 1.0 - 0.002),))
    rule = ConsensusConfig().changed({"copies.copy_rule": "legacy"})
    before = decide(base, vectors, rule)
    after = decide(copied, np.vstack([vectors, vectors[:1]]), rule)
    assert (0, 3) in after.groups
    for i in (1, 2):
        assert after.results[i].score.quality == pytest.approx(before.results[i].score.quality)
    # legacy coverage counted the copy as a second peer
    legacy = ConsensusConfig().changed(LEGACY_COVERAGE)
    assert decide(copied, np.vstack([vectors, vectors[:1]]), legacy).results[1].score.quality != pytest.approx(
        decide(base, vectors, legacy).results[1].score.quality
    )
    # the pair earns what the source alone earns
    no_speed = EmissionsConfig(speed_weight=0.0)  # the speed line is fitted on 3 answers here, 4 there
    a0, a1 = allocate(base, before, no_speed), allocate(copied, after, no_speed)
    # the same pair under the default rule: a one-sentence answer is agreement, both paid on their own
    assert decide(copied, np.vstack([vectors, vectors[:1]])).groups == ()
    assert a1.shares[0] + a1.shares[3] == pytest.approx(a0.shares[0], abs=1e-3)
    # (legacy alignment counted the copy at cosine 1: the pair earned more than its source alone)
    legacy_al = ConsensusConfig().changed({"weights.alignment_by_voice": False, "copies.copy_rule": "legacy"})
    pair = allocate(copied, decide(copied, np.vstack([vectors, vectors[:1]]), legacy_al)).shares
    assert pair[0] + pair[3] > a0.shares[0] + 0.005


def test_a_long_junk_answer_does_not_dilute_the_honest_answers():
    junk = (
        "Bananas offer potassium plus fibre; many people eat them before exercise because they digest "
        "easily, cost little, keep for days in any kitchen cupboard without special care."
    )
    round_ = Round(
        "r",
        "What is the capital of France?",
        tuple(Response(f"m{k}", t, 1.0 + k) for k, t in enumerate(HONEST + [junk])),
    )
    vectors = _vectors(4)  # the junk is in the honest cluster by embedding: only the words tell
    ev = decide(round_, vectors)
    assert 3 in ev.members
    honest_q = [ev.results[i].score.quality for i in range(3)]
    assert ev.results[3].score.quality == 0.0  # says nothing another answer says
    diluted = decide(round_, vectors, ConsensusConfig().changed({"quality.coverage_min_df": 1}))  # every word weighs
    for i in range(3):  # the junk's words diluted every honest answer's coverage
        assert diluted.results[i].score.quality < honest_q[i] - 0.1
