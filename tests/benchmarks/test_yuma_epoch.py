"""Subtensor's epoch in the lab (benchmarks.yuma_epoch): toy matrices checked by hand, and its laws."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.yuma_epoch import YumaParams, epoch, weighted_median, weighted_median_col


def square(rows: list[list[float]], n: int) -> np.ndarray:
    """Validators' rows (uids 0..len(rows)-1) in an (n, n) matrix; the other uids are miners that set nothing."""
    w = np.zeros((n, n))
    w[: len(rows)] = rows
    return w


def test_one_validator_has_full_trust_and_all_dividends() -> None:
    # uid 0 validates, uids 1 and 2 mine; its self-weight is masked, the rest is normalised to (0.75, 0.25)
    out = epoch(square([[5.0, 3.0, 1.0]], 3), np.array([1.0, 0.0, 0.0]))
    assert out.weights[0].tolist() == [0.0, 0.75, 0.25]
    assert out.consensus.tolist() == [0.0, 0.75, 0.25]
    assert out.validator_trust.tolist() == [1.0, 0.0, 0.0]
    assert out.incentive.tolist() == [0.0, 0.75, 0.25]
    assert out.dividends.tolist() == [1.0, 0.0, 0.0]
    # emission over incentive + dividends (2): half to the miners, half to the validator
    assert out.server_emission.tolist() == [0.0, 0.375, 0.125]
    assert out.validator_emission.tolist() == [0.5, 0.0, 0.0]


def test_two_agreeing_validators_split_the_dividends_evenly() -> None:
    out = epoch(square([[0, 0, 1, 3], [0, 0, 2, 6]], 4), np.array([1.0, 1.0, 0, 0]))
    assert np.allclose(out.validator_trust[:2], 1.0)
    assert np.allclose(out.dividends, [0.5, 0.5, 0, 0])
    assert np.allclose(out.incentive, [0, 0, 0.25, 0.75])


def test_two_agreeing_validators_with_unequal_stake_are_paid_by_stake() -> None:
    out = epoch(square([[0, 0, 1, 1], [0, 0, 1, 1]], 4), np.array([3.0, 1.0, 0, 0]))
    assert np.allclose(out.dividends, [0.75, 0.25, 0, 0])


def test_a_deviating_validator_is_clipped_to_the_consensus() -> None:
    # three equal stakes; two weight the miners (3, 4) evenly, the third puts everything on miner 3
    rows = [[0, 0, 0, 1, 1], [0, 0, 0, 1, 1], [0, 0, 0, 1, 0]]
    out = epoch(square(rows, 5), np.array([1.0, 1.0, 1.0, 0, 0]))
    assert np.allclose(out.consensus, [0, 0, 0, 0.5, 0.5])
    assert np.allclose(out.clipped[2], [0, 0, 0, 0.5, 0])
    assert np.allclose(out.validator_trust[:3], [1.0, 1.0, 0.5])
    # ranks (1/3 each): miner 3 gets 0.5 from all three, miner 4 0.5 from two -> 1.5 : 1
    assert np.allclose(out.incentive[3:], [0.6, 0.4])
    assert out.dividends[2] < out.dividends[0] == pytest.approx(out.dividends[1])
    assert out.trust[3] == pytest.approx(1.5 / 2.0)  # a third of miner 3's unclipped rank is cut (old definition)


def test_the_stake_majority_sets_the_consensus() -> None:
    # 0.6 of the stake weights miner 2, 0.4 weights miner 3: the median follows the majority
    out = epoch(square([[0, 0, 1, 0], [0, 0, 0, 1]], 4), np.array([0.6, 0.4, 0, 0]))
    assert out.consensus.tolist() == [0, 0, 1, 0]
    assert out.validator_trust[:2].tolist() == [1.0, 0.0]
    assert out.incentive.tolist() == [0, 0, 1, 0]
    assert out.dividends.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_a_row_without_permit_and_self_weights_are_masked() -> None:
    w = square([[0, 0, 1], [0, 0, 1], [0, 0, 7]], 3)
    out = epoch(w, np.array([1.0, 1.0, 0.0]), permits=np.array([True, True, False]))
    assert out.weights[2].tolist() == [0.0, 0.0, 0.0]  # no permit: masked (and its self-weight too)
    only_self = epoch(square([[1, 0], [0, 0]], 2), np.array([1.0, 0.0]))
    assert only_self.validator_trust.tolist() == [0.0, 0.0]
    # nothing earned: validators get the active stake
    assert only_self.validator_emission.tolist() == [1.0, 0.0]
    owner = epoch(square([[1, 0], [0, 0]], 2), np.array([1.0, 0.0]), owner_uid=0)
    assert owner.validator_trust.tolist() == [1.0, 0.0]


def test_inactive_validators_lose_their_say() -> None:
    w = square([[0, 0, 1, 0], [0, 0, 0, 1]], 4)
    out = epoch(w, np.array([0.6, 0.4, 0, 0]), active=np.array([False, True, True, True]))
    assert out.active_stake.tolist() == [0.0, 1.0, 0.0, 0.0]
    assert out.consensus.tolist() == [0, 0, 0, 1]
    # the inactive validator's weights are still clipped and read (vtrust), but it has no stake in the ranks
    assert out.validator_trust.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_half_the_stake_is_a_majority_at_the_default_kappa() -> None:
    # kappa is 32,767 / 65,535, a hair under 0.5: of two equal validators each one alone reaches it
    out = epoch(square([[0, 0, 1, 1], [0, 0, 1, 0]], 4), np.array([1.0, 1.0, 0, 0]))
    assert np.allclose(out.consensus, [0, 0, 1, 0.5])
    assert np.allclose(out.validator_trust[:2], [1.0, 1.0])
    strict = epoch(square([[0, 0, 1, 1], [0, 0, 1, 0]], 4), np.array([1.0, 1.0, 0, 0]), params=YumaParams(kappa=0.51))
    assert np.allclose(strict.consensus, [0, 0, 0.5, 0])
    assert np.allclose(strict.validator_trust[:2], [0.5, 0.5])


def test_bonds_original_yuma_first_epoch_follows_stake_times_weights() -> None:
    # from no bonds the EMA, column-normalised, is delta = W_b * s column-normalised:
    # miner 2 (0.5, 1) -> (1/3, 2/3), miner 3 (0.5, 0) -> (1, 0); incentive (0.75, 0.25)
    out = epoch(square([[0, 0, 1, 1], [0, 0, 1, 0]], 4), np.array([1.0, 1.0, 0, 0]))
    assert np.allclose(out.incentive, [0, 0, 0.75, 0.25])
    assert np.allclose(out.bonds[:2, 2:], [[0.5, 1.0], [1.0, 0.0]])  # max-upscaled for storage
    assert np.allclose(out.dividends, [1 / 3 * 0.75 + 0.25, 2 / 3 * 0.75, 0, 0])


def test_bonds_move_by_the_moving_average() -> None:
    stake = np.array([1.0, 1.0, 0, 0])
    first = epoch(square([[0, 0, 1, 0], [0, 0, 1, 0]], 4), stake)
    # then validator 0 moves to miner 3: old bonds on miner 2 (0.5, 0.5), the new delta (0, 1) -> 0.1 of it;
    # on miner 3 no old bond, the delta (1, 0); consensus (1, 1) at the default kappa, incentive (0.5, 0.5)
    second = epoch(square([[0, 0, 0, 1], [0, 0, 1, 0]], 4), stake, first.bonds)
    assert np.allclose(second.incentive, [0, 0, 0.5, 0.5])
    assert np.allclose(second.dividends, [0.45 * 0.5 + 0.5, 0.55 * 0.5, 0, 0])
    # with no memory (bonds_moving_average 0) the bonds are the new delta alone
    third = epoch(square([[0, 0, 0, 1], [0, 0, 1, 0]], 4), stake, first.bonds, YumaParams(bonds_moving_average=0))
    assert np.allclose(third.dividends, [0.5, 0.5, 0, 0])


def test_yuma3_dividends_scale_with_stake_and_bonds() -> None:
    p = YumaParams(yuma3=True)
    rows = [[0, 0, 1, 1], [0, 0, 1, 1]]
    out = epoch(square(rows, 4), np.array([3.0, 1.0, 0, 0]), params=p)
    assert np.allclose(out.bonds[:2, 2:], 0.1 * 0.5)  # a * W_b, unnormalised
    assert np.allclose(out.dividends, [0.75, 0.25, 0, 0])
    again = epoch(square(rows, 4), np.array([3.0, 1.0, 0, 0]), out.bonds, p)
    assert np.allclose(again.bonds[:2, 2:], 0.1 * 0.5 + 0.9 * 0.05)


def test_liquid_alpha_keeps_only_the_weighted_entries() -> None:
    p = YumaParams(yuma3=True, liquid_alpha=True)
    rows = [[0, 0, 1, 0], [0, 0, 1, 0]]
    old = square([[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]], 4)
    out = epoch(square(rows, 4), np.array([1.0, 1.0, 0, 0]), old, p)
    # miner 3 has no weight any more: mat_ema_alpha_sparse drops the entry; miner 2 buys at alpha in [low, high]
    assert out.bonds[0, 3] == 0.0
    assert p.alpha_low + (1 - p.alpha_low) * 0.5 <= out.bonds[0, 2] <= p.alpha_high + (1 - p.alpha_high) * 0.5


@pytest.mark.parametrize("seed", range(100))
def test_laws_on_random_epochs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, v = 9, 4
    w = np.zeros((n, n))
    w[:v] = rng.random((v, n)) * (rng.random((v, n)) < 0.7)
    stake = np.zeros(n)
    stake[:v] = rng.random(v) + 0.01
    bonds = rng.random((n, n)) * (rng.random() < 0.5)
    params = YumaParams(yuma3=bool(seed % 2), liquid_alpha=bool(seed % 4 == 1))
    before = (w.copy(), stake.copy(), bonds.copy())
    out = epoch(w, stake, bonds, params)
    assert np.array_equal(w, before[0]) and np.array_equal(stake, before[1]) and np.array_equal(bonds, before[2])
    if out.rank.sum() > 0:
        assert out.incentive.sum() == pytest.approx(1.0)
        assert out.dividends.sum() == pytest.approx(1.0)
        assert (out.server_emission.sum() + out.validator_emission.sum()) == pytest.approx(1.0)
    assert ((out.validator_trust >= -1e-12) & (out.validator_trust <= 1 + 1e-12)).all()
    assert (out.clipped <= out.weights + 1e-15).all()
    assert (out.dividends >= 0).all() and (out.incentive >= 0).all()
    assert np.allclose(out.validator_trust, out.clipped.sum(axis=1))
    assert np.allclose(out.clipped, np.minimum(out.weights, out.consensus[None, :]))
    # weights only lower vtrust where they exceed the consensus
    assert np.allclose(1 - out.validator_trust[:v], np.clip(out.weights - out.consensus, 0, None).sum(axis=1)[:v])
    assert epoch(w, stake, bonds, params).dividends.tolist() == out.dividends.tolist()  # deterministic


@pytest.mark.parametrize("seed", range(100))
def test_weighted_median_is_the_highest_value_a_kappa_majority_reaches(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 9))
    stake = rng.random(k) + 0.01
    stake = stake / stake.sum()
    scores = np.round(rng.random(k), 1)  # ties on purpose
    kappa = float(rng.choice([0.5, 32767 / 65535, 0.3, 0.7]))
    got = weighted_median(stake.tolist(), scores.tolist(), 1.0 - kappa, 0.0, 1.0)
    reach = [x for x in scores if stake[scores >= x].sum() >= kappa - 1e-12]
    assert got == pytest.approx(max(reach))


def test_weighted_median_col_ignores_rows_without_stake() -> None:
    w = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]])
    # the first row has no stake; of the other two, either half reaches kappa 0.5, both are needed for 0.6
    assert weighted_median_col(np.array([0.0, 0.5, 0.5]), w, 0.5).tolist() == [0.3, 0.8]
    assert weighted_median_col(np.array([0.0, 0.5, 0.5]), w, 0.6).tolist() == [0.2, 0.7]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"kappa": 1.5}, "kappa"), ({"bonds_moving_average": -1}, "bonds_moving_average"), ({"alpha_low": 0.95}, "alpha")],
)
def test_params_are_checked(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        YumaParams(**kwargs)  # type: ignore[arg-type]


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="square"):
        epoch(np.zeros((2, 3)), np.zeros(2))
    with pytest.raises(ValueError, match="stake"):
        epoch(np.zeros((2, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="non-negative"):
        epoch(-np.ones((2, 2)), np.ones(2))
