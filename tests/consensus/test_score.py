import numpy as np
import pytest

from consensus.config import ConsensusConfig
from consensus.score import confidence_part, effective_weights, score_response


def test_weights_with_confidence():
    assert effective_weights(ConsensusConfig(), True) == (0.5, 0.2, 0.2, 0.1)


@pytest.mark.parametrize("cfg,any_conf", [(ConsensusConfig(weighted_scoring=False), True), (ConsensusConfig(), False)])
def test_confidence_weight_is_shared_out_proportionally(cfg, any_conf):
    w = effective_weights(cfg, any_conf)
    assert w == pytest.approx((0.625, 0.25, 0.0, 0.125))
    assert sum(w) == pytest.approx(1.0)


def test_confidence_rule():
    assert confidence_part(1.0, True) == 1.0
    assert confidence_part(1.0, False) == 0.0
    assert confidence_part(None, True) == confidence_part(None, False) == 0.75
    assert confidence_part(0.8, True) == pytest.approx(0.96)


def test_in_consensus_composite_hand_checked():
    sim_row = np.array([1.0, 0.8, 0.6, 0.1])
    parts = score_response(sim_row=sim_row, index=0, members=np.array([0, 1, 2]), words=50, reference_words=100,
                           confidence=0.8, in_consensus=True, weights=(0.5, 0.2, 0.2, 0.1), penalty=0.5)
    assert parts.alignment == pytest.approx(0.7)
    assert parts.quality == pytest.approx(0.5)
    assert parts.composite == pytest.approx(100 * (0.5 * 0.7 + 0.2 * 0.5 + 0.2 * 0.96 + 0.1))


def test_out_of_consensus_scored_against_the_cluster_with_penalty():
    sim_row = np.array([0.4, 0.2, 1.0])
    parts = score_response(sim_row=sim_row, index=2, members=np.array([0, 1]), words=300, reference_words=100,
                           confidence=None, in_consensus=False, weights=(0.5, 0.2, 0.2, 0.1), penalty=0.5)
    assert parts.alignment == pytest.approx(0.3) and parts.quality == 1.0 and parts.bonus == 0
    assert parts.composite == pytest.approx(100 * (0.5 * 0.3 + 0.2 + 0.2 * 0.75) * 0.5)


def test_negative_similarity_clips_to_zero():
    parts = score_response(sim_row=np.array([-0.5, 1.0]), index=1, members=np.array([0]), words=1,
                           reference_words=1, confidence=None, in_consensus=False,
                           weights=(0.5, 0.2, 0.2, 0.1), penalty=0.5)
    assert parts.alignment == 0.0
