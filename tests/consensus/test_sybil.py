"""Sybil resistance, entities, copies within milliseconds, unreached rounds.

The similarity sybil rule was measured and not shipped (issue 24: one round's similarity merged honest
families; docs/validity.md); it lives in the lab (``benchmarks.lab.sybil``) and its tests hand it to the
product's evaluation explicitly (``SYBIL_RULE``, ``consensus.extensions``).

Vectors are built by hand to the cosines MiniLM gives the hostile cases of
``benchmarks.hostile`` (honest answers ~0.75-0.8 to each other, reworded sybils ~0.9-0.97,
plausible-wrong ~0.6 to the honest, off-topic ~0); texts are the hostile script's seeded
rewordings. The same cases run with the real model in ``test_hostile_real`` (slow).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchmarks.hostile import HONEST_PARIS, OFF_TOPIC, WRONG_LYON, reword
from benchmarks.lab import LabConfig, extensions
from consensus import ConsensusConfig, Reason, decide
from consensus.signals import Signals
from consensus.types import Response, Round
from emissions import EmissionsConfig, allocate

SYBIL_RULE, CONFIG = extensions(LabConfig(sybil_detection=True), ConsensusConfig())


def around(centre: np.ndarray, cos: float, rng: np.random.Generator) -> np.ndarray:
    """A unit vector at cosine ~``cos`` to the unit ``centre``."""
    noise = rng.normal(size=centre.shape)
    noise -= noise @ centre * centre
    noise /= np.linalg.norm(noise)
    v = cos * centre + np.sqrt(1 - cos**2) * noise
    return v / np.linalg.norm(v)


def hostile(bad: str, bad_cos: float, seed: int = 0) -> tuple[Round, np.ndarray]:
    """3 honest miners who agree + 5 identities rewording ``bad``; bad_cos = cosine of the two centres."""
    rng = np.random.default_rng(seed)
    h = rng.normal(size=64)
    h /= np.linalg.norm(h)
    s = around(h, bad_cos, rng)
    vectors = [around(h, 0.9, rng) for _ in range(3)] + [around(s, 0.985, rng) for _ in range(5)]
    words = random.Random(seed)
    responses = [Response(f"honest-{k}", t, 1.0 + 0.3 * k) for k, t in enumerate(HONEST_PARIS)]
    responses += [Response(f"sybil-{k}", reword(bad, words), 0.5 + 0.1 * k) for k in range(5)]
    return Round("hostile", "What is the capital of France?", tuple(responses)), np.array(vectors, np.float32)


@pytest.mark.parametrize("bad,bad_cos", [(OFF_TOPIC, 0.0), (WRONG_LYON, 0.6)], ids=["off-topic", "plausible-wrong"])
@pytest.mark.parametrize("seed", range(5))
def test_five_reworded_identities_cannot_take_the_pool(bad, bad_cos, seed):
    round_, vectors = hostile(bad, bad_cos, seed)
    ev = decide(round_, vectors, CONFIG, extensions=SYBIL_RULE)
    al = allocate(round_, ev)
    honest = [al.shares[i] for i in range(3)]
    assert all(ev.results[i].in_consensus for i in range(3)), [r.detail for r in ev.results]
    assert min(honest) > 0
    assert sum(al.shares[3:]) <= 1.5 * np.mean(honest) + 1e-9
    assert any(set(g) >= {3, 4} or len(g) >= 3 for g in ev.groups)  # the rewordings were recognised as one voice


def test_legacy_rules_let_the_same_sybils_take_everything():
    """The failure the new rules fix, pinned: with the legacy config the off-topic sybils win."""
    from tests.consensus.legacy import LEGACY_CONSENSUS, LEGACY_EMISSIONS

    round_, vectors = hostile(OFF_TOPIC, 0.0)
    ev = decide(round_, vectors, LEGACY_CONSENSUS)
    al = allocate(round_, ev, LEGACY_EMISSIONS)
    assert sum(al.shares[3:]) > 0.9


def test_honest_independent_answers_are_not_grouped():
    rng = np.random.default_rng(3)
    h = rng.normal(size=64)
    h /= np.linalg.norm(h)
    vectors = np.array([around(h, 0.9, rng) for _ in range(3)], np.float32)
    round_ = Round("r", "Q?", tuple(Response(f"m{k}", t, 1.0 + k) for k, t in enumerate(HONEST_PARIS)))
    ev = decide(round_, vectors)
    assert ev.groups == () and len(ev.members) == 3


def _agreeing(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    h = rng.normal(size=64)
    h /= np.linalg.norm(h)
    return np.array([around(h, 0.9, rng) for _ in range(n)], np.float32)


TEXTS = [
    f"answer number {k} says paris with its own words {' '.join(f'w{k}x{j}' for j in range(12))}" for k in range(8)
]


def test_one_entity_is_one_voice_and_one_payout():
    # 4 identities of one operator agree with each other; 3 independent miners agree elsewhere
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=64), rng.normal(size=64)
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    vectors = np.array([around(a, 0.9, rng) for _ in range(3)] + [around(b, 0.9, rng) for _ in range(4)], np.float32)
    responses = [Response(f"m{k}", TEXTS[k], 1.0) for k in range(3)]
    responses += [Response(f"op-{k}", TEXTS[3 + k], 1.0, entity="operator-7") for k in range(4)]
    round_ = Round("r", "Q?", tuple(responses))
    ev = decide(round_, vectors)
    assert ev.members == (0, 1, 2)  # 3 voices beat 1 voice of 4 identities
    assert (3, 4, 5, 6) in ev.groups
    # in one cluster, the entity shares one payout
    same = np.array([around(a, 0.9, rng) for _ in range(7)], np.float32)
    ev = decide(round_, same)
    al = allocate(round_, ev)
    assert sum(al.shares[3:]) <= max(al.shares[:3]) + 1e-9
    assert sum(al.shares[3:]) == pytest.approx(np.mean(al.shares[:3]), rel=0.35)


def test_entities_from_signals_group_too():
    vectors = _agreeing(5)
    round_ = Round("r", "Q?", tuple(Response(f"m{k}", TEXTS[k], 1.0) for k in range(5)))
    ev = decide(round_, vectors, signals=Signals(entities={3: "x", 4: "x"}))
    assert (3, 4) in ev.groups


def test_a_copy_milliseconds_before_its_source_is_not_the_original():
    vectors = _agreeing(3)
    texts = TEXTS[:3]
    round_ = Round(
        "r",
        "Q?",
        (
            Response("source", texts[0], 1.0),
            Response("other", texts[1], 1.5),
            Response("other2", texts[2], 1.7),
            Response("copier", texts[0], 1.0 - 0.0026),
        ),
    )
    vectors = np.vstack([vectors, vectors[:1]])
    ev = decide(round_, vectors)
    al = allocate(round_, ev)
    assert ev.results[3].reason is not Reason.COPY and (0, 3) in ev.groups  # tie: nobody is the original
    assert al.shares[0] == pytest.approx(al.shares[3], abs=1e-6)
    assert al.shares[0] + al.shares[3] <= max(al.shares[1], al.shares[2]) * 1.2
    # beyond the window the earlier one is the original and the later one a copy
    late = Round("r", "Q?", round_.responses[:3] + (Response("copier", texts[0], 1.2),))
    ev = decide(late, vectors)
    assert ev.results[3].reason is Reason.COPY and ev.results[3].copy_of == 0
    # legacy (window 0): 2.6 ms earlier is enough to be "the original"
    ev = decide(round_, vectors, ConsensusConfig().changed({"copies.copy_tie_window_s": 0.0}))
    assert ev.results[0].reason is Reason.COPY and ev.results[0].copy_of == 3


@pytest.mark.parametrize("rule,expected", [("floor", 0.5), ("scaled", None)])
def test_an_unreached_round_pays_as_documented(rule, expected):
    rng = np.random.default_rng(2)
    h = rng.normal(size=64)
    h /= np.linalg.norm(h)
    vectors = np.array([around(h, 0.6, rng) for _ in range(4)], np.float32)  # weak agreement: mu + sigma < 0.7
    round_ = Round("r", "Q?", tuple(Response(f"m{k}", TEXTS[k], 1.0 + k) for k in range(4)))
    ev = decide(round_, vectors)
    assert not ev.consensus.reached and ev.members
    config = EmissionsConfig(unreached_pays=rule)
    al = allocate(round_, ev, config)
    assert sum(al.amounts) == al.pool
    if expected is None:  # legacy: like any round
        assert al.pool == round(config.pool_units * (0.5 + 0.5 * max(ev.consensus.score, 0.0)))
    else:
        assert al.pool == round(config.pool_units * expected)


def test_unreached_pays_nothing_was_retired_in_one_line():
    from consensus.errors import ConfigError

    with pytest.raises(
        ConfigError,
        match=r"^emissions.unreached_pays: 'nothing' was retired in commit 663e260 \(2026-11-26\) .*"
        r"use one of floor, scaled$",
    ):
        EmissionsConfig(unreached_pays="nothing")


@pytest.mark.parametrize("seed", range(20))
def test_new_defaults_keep_the_laws(seed):
    """Sum to the pool, junk (empty / failed / copy) earns nothing, with any seed."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    vectors = _agreeing(n, seed)
    texts = [TEXTS[k % 8] + f" extra{k}" * int(rng.integers(0, 5)) for k in range(n)]
    texts[0] = ""
    texts[1] = texts[2]
    round_ = Round("r", "Q?", tuple(Response(f"m{k}", t, float(rng.uniform(0.1, 5))) for k, t in enumerate(texts)))
    vectors[0] = 0
    vectors[1] = vectors[2]
    ev = decide(round_, vectors)
    al = allocate(round_, ev)
    assert sum(al.amounts) == al.pool
    assert al.amounts[0] == 0
    assert min(al.amounts[1], al.amounts[2]) == 0 or (1, 2) in ev.groups


@pytest.mark.slow
def test_hostile_cases_with_the_real_model(tmp_path):
    """benchmarks.hostile's cases through the real MiniLM: the sybils never take the pool."""
    from benchmarks.data import VectorCache
    from benchmarks.evaluate import replay
    from benchmarks.hostile_synthetic import cases
    from validator.settings import load_settings

    settings = load_settings(None, env={}, dotenv_path=None)
    built = [r for r, _ in cases(0)]
    copy_early = next(r for r in built if r.round_id == "copy-early")
    source_alone = Round("source-alone", copy_early.prompt, copy_early.responses[:3])
    wrong = next(r for r in built if r.round_id == "sybil-wrong")
    wrong_ref = Round("sybil-wrong-ref", wrong.prompt, wrong.responses, reference="Paris is the capital of France.")
    short, _ = short_prompt_round()
    reps = {
        rep.round.round_id: rep
        for rep in replay(built + [source_alone, wrong_ref, short], VectorCache(tmp_path, settings), settings)
    }
    # an off-topic majority is never dominant (relevance gate); a wrong majority loses to the reference
    for case in ("sybil-offtopic", "sybil-wrong-ref"):
        shares = reps[case].allocation.shares
        assert min(shares[:3]) > 0 and sum(shares[3:]) <= 1.5 * np.mean(shares[:3]) + 1e-9
    # without a reference or the LM one round has only headcount: five synonym rewrites of "Lyon" stay
    # voices (benchmarks/journal/validity.md, "Five rewrites of one wrong answer in one round"); honest miners are still paid
    assert min(reps["sybil-wrong"].allocation.shares[:3]) > 0
    # the copy 2.6 ms before its source: together they earn what the source earns without it
    copy, alone = reps["copy-early"].allocation.shares, reps["source-alone"].allocation.shares
    assert copy[0] + copy[3] <= alone[0] + 1e-3
    # answers addressed to the evaluator earn nothing; the honest miners share the pool
    injection = reps["injection"]
    assert [r.reason.value for r in injection.evaluation.results[3:]] == ["injection", "injection"]
    assert sum(injection.allocation.shares[3:]) == 0 and min(injection.allocation.shares[:3]) > 0
    # the embedded daemon round: the two honest short answers are two voices, the injection earns nothing
    daemon = reps[short.round_id]
    shares = daemon.allocation.shares
    assert daemon.evaluation.groups == () and min(shares[0], shares[1]) > 0 and shares[3] == 0


# --- independent identical answers to a short factual prompt (docs/validity.md) -------------------


def short_prompt_round() -> tuple[Round, np.ndarray]:
    """The embedded daemon round (fixture) with vectors at the cosines the real MiniLM gives it.

    Two honest pool miners answered "Australia's capital is Canberra." and "The capital of
    Australia is Canberra." (cosine 0.992); the off-topic and injection answers pull the round's
    baseline down; the other miners failed or sent nothing.
    """
    import json
    from pathlib import Path

    from validator.records.round_input import parse_round

    path = Path(__file__).with_name("fixtures") / "short_prompt_round.json"
    round_ = parse_round(json.loads(path.read_text(encoding="utf-8")), str(path))
    gram = np.array(
        [[1.0, 0.992, 0.165, 0.414], [0.992, 1.0, 0.177, 0.401], [0.165, 0.177, 1.0, 0.057], [0.414, 0.401, 0.057, 1.0]]
    )
    vectors = np.zeros((len(round_.responses), 4), np.float32)
    vectors[:4] = np.linalg.cholesky(gram)  # rows with exactly these cosines
    return round_, vectors


def test_independent_identical_short_answers_are_not_one_voice():
    round_, vectors = short_prompt_round()
    ev = decide(round_, vectors, CONFIG, extensions=SYBIL_RULE)
    al = allocate(round_, ev)
    assert ev.groups == ()
    assert min(al.shares[0], al.shares[1]) > al.shares[3]  # each honest miner out-earns the injection
    assert al.shares[2] == 0  # off-topic


def test_the_old_rule_grouped_them_and_paid_the_injection_more():
    """What ``sybil_min_shared_words`` fixes, pinned: without it the two honest miners are one voice (the
    injection filter off, so the injection is scored as it was when this was found)."""
    round_, vectors = short_prompt_round()
    old_rule, _ = extensions(LabConfig(sybil_detection=True, sybil_min_shared_words=0), ConsensusConfig())
    ev = decide(round_, vectors, ConsensusConfig().changed({"filters.injection_min_signals": 0}), extensions=old_rule)
    al = allocate(round_, ev)
    assert (0, 1) in ev.groups
    assert al.shares[3] > max(al.shares[0], al.shares[1])


def test_shared_words_beyond_the_prompt_decide():
    from benchmarks.lab.sybil import similar_pairs

    texts = [
        "Australia's capital is Canberra.",
        "The capital of Australia is Canberra.",
        "Canberra, a planned city, became the seat of the federal parliament in 1927.",
        "In 1927 Canberra, a planned city, became the federal parliament's seat.",
    ]
    sim = np.full((4, 4), 0.1) + np.diag([0.9] * 4)
    sim[0, 1] = sim[1, 0] = sim[2, 3] = sim[3, 2] = 0.99
    kw = dict(headroom=0.5, min_cosine=0.8, jaccard=0.5, prompt="What is the capital of Australia?")
    assert similar_pairs(texts, sim, np.arange(4), min_shared=5, **kw) == [(2, 3)]  # a reworded sentence
    assert similar_pairs(texts, sim, np.arange(4), min_shared=0, **kw) == [(0, 1), (2, 3)]
    assert similar_pairs(texts, sim, np.arange(4), min_shared=11, **kw) == []  # 2 and 3 share 10 such words
