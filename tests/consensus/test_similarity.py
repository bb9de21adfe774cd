import numpy as np

from consensus.similarity import cosine_matrix, distances, pair_values
from tests.helpers import unit_rows


def test_cosine_matrix_hand_checked():
    x = unit_rows([1, 0], [0, 1], [1, 1])
    before = x.copy()
    sim = cosine_matrix(x)
    h = 1 / np.sqrt(2)
    np.testing.assert_allclose(sim, [[1, 0, h], [0, 1, h], [h, h, 1]], atol=1e-7)
    assert np.array_equal(sim, sim.T)
    np.testing.assert_array_equal(x, before)  # input not modified


def test_zero_rows_are_unlike_everything_but_themselves():
    sim = cosine_matrix(unit_rows([1, 0], [0, 0]))
    assert sim[0, 1] == 0 and sim[1, 1] == 1


def test_distances_and_pairs():
    sim = np.array([[1, 0.8, 0.6], [0.8, 1, 0.7], [0.6, 0.7, 1]])
    d = distances(sim)
    assert d[0, 0] == 0 and abs(d[0, 1] - 0.2) < 1e-12 and (d >= 0).all()
    assert sorted(pair_values(sim, np.array([0, 1, 2]))) == [0.6, 0.7, 0.8]
    assert len(pair_values(sim, np.array([1]))) == 0
