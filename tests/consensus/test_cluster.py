import numpy as np

from consensus.cluster import cluster_labels, dominant_cluster
from consensus.similarity import cosine_matrix
from tests.helpers import block_vectors


def labels_and_top(sim, cand):
    labels = cluster_labels(sim, cand, linkage="average", distance=0.6)
    return labels, dominant_cluster(sim, cand, labels)[0]


def test_two_groups_largest_wins():
    sim = cosine_matrix(block_vectors([2, 4], seed=2))
    labels, top = labels_and_top(sim, np.arange(6))
    assert len(set(labels[:2])) == 1 and len(set(labels[2:])) == 1 and labels[0] != labels[2]
    assert top == labels[2]


def test_tie_goes_to_the_tighter_cluster():
    sim = np.array([[1, 0.9, 0.1, 0.1], [0.9, 1, 0.1, 0.1], [0.1, 0.1, 1, 0.95], [0.1, 0.1, 0.95, 1]])
    labels, top = labels_and_top(sim, np.arange(4))
    assert top == labels[2]


def test_full_tie_goes_to_lowest_index():
    sim = np.array([[1, 0.9, 0.1, 0.1], [0.9, 1, 0.1, 0.1], [0.1, 0.1, 1, 0.9], [0.1, 0.1, 0.9, 1]])
    labels, top = labels_and_top(sim, np.arange(4))
    assert top == labels[0]
    sim2 = sim[[2, 3, 0, 1]][:, [2, 3, 0, 1]]
    labels2, top2 = labels_and_top(sim2, np.arange(4))
    assert top2 == labels2[0]  # order decides, not which texts


def test_single_and_empty():
    sim = np.eye(1)
    assert cluster_labels(sim, np.arange(1), linkage="average", distance=0.6).tolist() == [0]
    assert cluster_labels(sim, np.arange(0), linkage="average", distance=0.6).tolist() == []


def test_copies_count_as_support():
    # two singletons far apart; the second has three word-for-word copies removed earlier
    sim = cosine_matrix(block_vectors([1, 1], seed=3))
    labels = cluster_labels(sim, np.arange(2), linkage="average", distance=0.6)
    assert dominant_cluster(sim, np.arange(2), labels)[1] == 1
    top, support = dominant_cluster(sim, np.arange(2), labels, np.array([1, 4]))
    assert top == labels[1] and support == 4


def test_a_tie_in_voices_goes_to_the_cluster_closer_to_the_prompt():
    from consensus import ConsensusConfig, decide
    from consensus.signals import Signals
    from consensus.types import Response, Round

    vague = ["Saving heating costs matters to many.", "To save on heating, be mindful.", "Heating costs: be careful."]
    concrete = [
        "Lower the thermostat one degree: about 6 percent less energy; set 16 degrees at night.",
        "Bleed radiators, seal window frames with tape, close shutters at dusk, and lower the thermostat.",
        "Find draughts with a candle at the window frame; foil panels behind radiators keep warmth inside.",
    ]
    responses = tuple(Response(f"m{k}", t, 1.0) for k, t in enumerate(vague + concrete))
    round_ = Round("r", "How can I save heating costs in winter?", responses)
    # two tied clusters of three: the vague one tighter and closer to the prompt (it restates it)
    vectors = np.array([[1, 0.05 * k, 0] for k in range(3)] + [[0, 1, 0.2 * k] for k in range(3)], dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    signals = Signals(prompt_similarity={0: 0.8, 1: 0.8, 2: 0.8, 3: 0.6, 4: 0.6, 5: 0.6})
    by_relevance = decide(
        round_, vectors, ConsensusConfig().changed({"clusters.cluster_tiebreak": "relevance"}), signals
    )
    assert by_relevance.members == (0, 1, 2)
