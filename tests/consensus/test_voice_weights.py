"""consensus.extensions' voice weights: a rule from outside weighting each answer's voice (the lab's trust rule)."""

from __future__ import annotations

import numpy as np

from consensus.extensions import Extensions
from consensus.groups import voices, weighted_voices
from consensus.pipeline import decide
from tests.helpers import block_vectors, make_round


def texts(n: int, words: int = 30) -> list[str]:
    return [" ".join(f"w{i}x{k}" for k in range(words)) for i in range(n)]


def weights_of(mapping):
    return Extensions(voice_weights=(lambda ctx: mapping,))


def test_weighted_voices_count_a_group_once_at_its_mean_weight():
    members = np.array([0, 1, 2, 3])
    groups = ((0, 1),)
    assert voices(members, groups) == 3
    assert weighted_voices(members, groups, {}) == 3.0
    assert weighted_voices(members, groups, {0: 0.2, 1: 0.4, 2: 0.5}) == 0.3 + 0.5 + 1.0


def test_the_more_trusted_smaller_cluster_becomes_dominant():
    round_ = make_round(texts(7))
    vectors = block_vectors([4, 3], seed=3)  # answers 0-3 agree, 4-6 agree
    plain = decide(round_, vectors)
    assert set(plain.members) == {0, 1, 2, 3}
    trusted = {i: (0.1 if i < 4 else 0.9) for i in range(7)}
    weighted = decide(round_, vectors, extensions=weights_of(trusted))
    assert set(weighted.members) == {4, 5, 6}


def test_weights_alike_for_every_answer_change_nothing():
    round_ = make_round(texts(7))
    vectors = block_vectors([4, 3], seed=3)
    plain = decide(round_, vectors)
    alike = decide(round_, vectors, extensions=weights_of({i: 0.5 for i in range(7)}))
    assert alike == plain


def test_alignment_is_a_weighted_mean_over_the_members():
    round_ = make_round(texts(5))
    vectors = block_vectors([5], seed=1, spread=0.4)
    plain = decide(round_, vectors)
    weights = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0, 4: 0.0}  # answer 4 has no voice in centring
    weighted = decide(round_, vectors, extensions=weights_of(weights))
    sim = vectors @ vectors.T
    expected = float(np.mean(sim[0, [1, 2, 3]]))
    assert abs(weighted.results[0].score.alignment - expected) < 1e-6
    assert weighted.results[0].score.alignment != plain.results[0].score.alignment
