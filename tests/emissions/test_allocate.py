import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consensus import decide
from emissions import EmissionsConfig, allocate, top_bonus
from emissions.allocate import largest_remainder, speed_modifiers
from tests.consensus.legacy import LEGACY_CONSENSUS, LEGACY_EMISSIONS, legacy
from tests.helpers import block_vectors, make_round


def words(i, n=30):
    return " ".join(f"t{i}w{j}" for j in range(n))


def run(texts, latencies, vec, confidences=None, cfg=None, ecfg=None):
    rnd = make_round(texts, latencies=latencies, confidences=confidences)
    # these tests pin the legacy rules (the new defaults are tested in test_sybil.py and test_design.py)
    ev = decide(rnd, vec, legacy(cfg) if cfg else LEGACY_CONSENSUS)
    return rnd, ev, allocate(rnd, ev, legacy(ecfg) if ecfg else LEGACY_EMISSIONS)


def test_top_bonus_values():
    assert top_bonus(0, LEGACY_EMISSIONS) == 1.0 and top_bonus(-3, LEGACY_EMISSIONS) == 1.0
    assert top_bonus(1, LEGACY_EMISSIONS) == pytest.approx(1 + 0.5 * math.tanh(0.1))  # ~1.0498, the seed's "~1.05x"
    assert top_bonus(10, LEGACY_EMISSIONS) == pytest.approx(
        1.3808, abs=1e-4
    )  # the seed's "~1.24x" does not fit its formula
    assert top_bonus(20, LEGACY_EMISSIONS) == pytest.approx(1.4820, abs=1e-4)
    assert top_bonus(1e6, LEGACY_EMISSIONS) <= 1.5


def test_largest_remainder_sums_exactly_and_ties_to_lower_index():
    assert largest_remainder(10, np.array([1.0, 1.0, 1.0])).tolist() == [4, 3, 3]
    assert largest_remainder(0, np.array([1.0])).tolist() == [0]
    assert largest_remainder(5, np.array([0.0, 0.0])).tolist() == [0, 0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 100), min_size=1, max_size=40), st.integers(0, 10**12))
def test_allocations_sum_to_the_pool(weights, pool):
    w = np.array(weights)
    out = largest_remainder(pool, w)
    assert out.sum() == (pool if w.sum() > 0 else 0)
    assert (out >= 0).all()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-9, 1e6)), min_size=6, max_size=6), st.integers(0, 99))
def test_round_sums_to_pool_and_speed_is_bounded_for_any_latency(latencies, seed):
    vec = block_vectors([6], seed=seed)
    rnd, ev, al = run([words(i) for i in range(6)], latencies, vec)
    assert sum(al.amounts) == al.pool
    assert all(0.8 - 1e-12 <= s <= 1.0 for s in al.speed)


def test_faster_earns_more_between_equal_answers():
    vec = block_vectors([4], spread=0.0)  # identical vectors, different words: equal composites
    texts = [words(i) for i in range(4)]
    rnd, ev, al = run(texts, [1.0, 2.0, 4.0, 8.0], vec)
    assert len(set(r.score.composite for r in ev.results)) == 1
    assert al.amounts[0] > al.amounts[1] > al.amounts[2] > al.amounts[3]
    assert al.amounts[0] / al.amounts[3] <= 1 / 0.8 + 1e-9  # a bounded modifier, never proportional


def test_instant_junk_never_out_earns_a_slow_correct_answer():
    vec = np.vstack([block_vectors([4], seed=5), block_vectors([1], seed=6), np.zeros((1, 32), np.float32)])
    texts = [words(i) for i in range(4)] + ["Buy cheap watches now", ""]
    rnd, ev, al = run(texts, [9.0, 10.0, 11.0, 12.0, 0.0, 0.0], vec)
    slowest_correct = min(al.amounts[:4])
    assert al.amounts[4] < slowest_correct and al.amounts[5] == 0
    assert al.amounts[4] == 0  # too short / off-topic: removed by a filter or below min_alignment


def test_share_follows_composite_not_speed():
    vec = block_vectors([5], seed=8)
    rnd, ev, al = run([words(i, 40) for i in range(4)] + [words(4, 20)], [10.0, 10.0, 10.0, 10.0, 0.01], vec)
    short = ev.results[4]
    assert short.in_consensus and short.score.composite < min(r.score.composite for r in ev.results[:4])
    assert al.amounts[4] <= min(al.amounts[:4]) + 1  # fast, but capped by every better answer


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.lists(st.floats(0.0, 60.0), min_size=7, max_size=7),
    st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=7, max_size=7),
)
def test_no_eligible_response_out_earns_a_higher_composite(seed, latencies, confidences):
    rng = np.random.default_rng(seed)
    vec = block_vectors([5, 2], seed=seed, spread=float(rng.uniform(0.05, 1.0)))
    texts = [words(i, int(rng.integers(5, 80))) for i in range(7)]
    rnd, ev, al = run(texts, latencies, vec, confidences=confidences)
    comp = [r.score.composite for r in ev.results]
    paid = [i for i in range(7) if al.eligible[i]]
    assert all(al.amounts[i] == 0 for i in range(7) if not al.eligible[i])
    for i in paid:
        for j in paid:
            if comp[i] > comp[j]:
                assert al.amounts[i] + 1 >= al.amounts[j]


def test_copies_together_earn_no_more_than_one():
    base_vec = block_vectors([5], seed=9)
    texts = [words(i) for i in range(5)]
    _, _, solo = run(texts, [1.0, 2.0, 3.0, 4.0, 5.0], base_vec)
    # three sybils copy miner 0's answer (slower), one near-copies it
    cp_texts = texts + [texts[0], texts[0], "Sure! " + texts[0]]
    cp_vec = np.vstack([base_vec, base_vec[[0, 0, 0]]])
    _, ev, al = run(cp_texts, [1.0, 2.0, 3.0, 4.0, 5.0, 1.5, 2.5, 3.5], cp_vec)
    group = [0, 5, 6, 7]
    assert [ev.results[i].reason.value for i in group[1:]] == ["copy"] * 3
    assert sum(al.amounts[i] for i in group) <= solo.amounts[0] + 1
    assert sum(al.amounts) == al.pool


def test_a_single_valid_answer_is_no_consensus_and_earns_nothing():
    vec = np.vstack([block_vectors([1]), np.zeros((2, 32), np.float32)])
    rnd, ev, al = run([words(0), "", ""], [1.0, 0.1, 0.1], vec)
    assert ev.members == () and al.pool == 0 and al.amounts == (0, 0, 0)


def test_one_answer_with_copies_takes_the_scaled_pool():
    vec = np.vstack([block_vectors([1])] * 3)
    rnd, ev, al = run([words(0)] * 3, [2.0, 1.0, 3.0], vec)
    assert ev.members == (1,) and not ev.consensus.reached  # one distinct answer: agreement not measurable
    assert al.amounts[1] == al.pool == round(LEGACY_EMISSIONS.pool_units * 0.5)  # consensus score 0 -> floor


def test_nobody_eligible_emits_nothing():
    vec = np.zeros((3, 32), np.float32)
    rnd, ev, al = run(["", " ", ""], [1.0, 1.0, 1.0], vec)
    assert al.pool == 0 and al.amounts == (0, 0, 0)


def test_pool_grows_with_consensus():
    ecfg = EmissionsConfig(pool_units=1000, pool_floor=0.5)
    tight = run([words(i) for i in range(4)], [1, 1, 1, 1], block_vectors([4], spread=0.01), ecfg=ecfg)[2]
    loose = run([words(i) for i in range(4)], [1, 1, 1, 1], block_vectors([4], spread=0.9), ecfg=ecfg)[2]
    assert tight.pool == 1000 and loose.pool < tight.pool


def test_consensus_multiplier_and_top_bonus_applied():
    vec = block_vectors([5], seed=12)
    rnd, ev, al = run(
        [words(i, 60 if i == 2 else 30) for i in range(5)], [1.0] * 5, vec, confidences=[0.2, 0.2, 1.0, 0.2, 0.2]
    )
    assert al.top_index == 2 and al.top[2] == pytest.approx(top_bonus(al.top_diff, LEGACY_EMISSIONS))
    assert all(c == 1.2 for c in al.cluster)


def test_speed_modifier_range():
    cfg = LEGACY_EMISSIONS
    mods = speed_modifiers(np.array([0.0, 0.05, 1.0, 1e9]), np.array([True, True, True, False]), cfg)
    assert mods[0] == mods[1] == 1.0 and 0.8 < mods[2] < 1.0 and mods[3] == 1.0


def test_speed_for_length_is_neutral_when_latency_is_the_round_s_line_and_pays_a_faster_server():
    from emissions.allocate import expected_latency, speed_modifiers
    from emissions.config import EmissionsConfig

    lengths = np.array([100.0, 400.0, 800.0, 1600.0, 3200.0])
    latency = 0.4 + lengths / 250.0  # every server as fast as the round for what it wrote
    eligible = np.ones(5, dtype=bool)
    assert expected_latency(lengths, latency, eligible) == pytest.approx(latency)
    config = EmissionsConfig(speed_weight=0.1)
    assert speed_modifiers(latency, eligible, config, lengths / 5, lengths).tolist() == [1.0] * 5
    faster = latency.copy()
    faster[4] = 0.5 * latency[4]  # the longest answer from a server twice as fast: it, not length, earns the most
    mods = speed_modifiers(faster, eligible, config, lengths / 5, lengths)
    assert mods[4] == 1.0 and all(m < 1.0 for m in mods[:4])
    # below 4 answers there is no line to fit: words per second (throughput) paid the long answers for their length
    through = speed_modifiers(latency[:3], eligible[:3], config, lengths[:3] / 5, lengths[:3])
    assert through[2] > through[0]


def _evaluation_with_composites(round_, composites):
    """An evaluation whose members are every response with a composite above 0, at exactly these composites."""
    from consensus.types import ConsensusResult, Evaluation, Reason, ResponseResult, ScoreParts

    results = tuple(
        ResponseResult(
            index=i,
            miner=r.miner,
            reason=Reason.IN_CONSENSUS,
            detail="",
            words=3,
            cluster=0,
            score=ScoreParts(
                alignment=1.0,
                quality=c / 100,
                confidence=0.0,
                bonus=0.0,
                penalty=0.0,
                weights=(0.0, 1.0, 0.0, 0.0),
                composite=c,
            ),
        )
        for i, (r, c) in enumerate(zip(round_.responses, composites))
    )
    members = tuple(i for i, c in enumerate(composites) if c > 0)
    consensus = ConsensusResult(
        score=1.0, mean=1.0, std=0.0, pairs=1, reached=True, polarity_agreed=None, majority_polarity=None, note=""
    )
    return Evaluation(
        round_id=round_.round_id,
        results=results,
        consensus=consensus,
        members=members,
        lof="",
        quality_threshold_words=0.0,
    )


def test_the_quality_exponent_sharpens_the_split_and_keeps_the_laws():
    from emissions.config import EmissionsConfig

    round_ = make_round(["a b c", "d e f", "g h i"])
    ev = _evaluation_with_composites(round_, [40.0, 60.0, 0.0])
    linear = allocate(round_, ev, EmissionsConfig(quality_exponent=1.0, speed_weight=0.0))
    squared = allocate(round_, ev, EmissionsConfig(quality_exponent=2.0, speed_weight=0.0))
    assert linear.amounts[1] / linear.amounts[0] == pytest.approx(1.5, rel=1e-6)
    assert squared.amounts[1] / squared.amounts[0] == pytest.approx(2.25, rel=1e-6)
    assert sum(squared.amounts) == squared.pool and squared.amounts[2] == 0
