"""Identity over rounds (consensus.identity, the ledger's pair evidence): links from persistence, never one round;
they steer the committees' draw and never reach the evaluation."""

from __future__ import annotations

import numpy as np

from consensus import ConsensusConfig, Reason, decide
from consensus.identity import ClosePair, Link, close_pairs, links
from consensus.signals import Signals
from consensus.types import Response, Round
from emissions.ledger import Ledger, MinerEntry, PairTotals, pair_key


def sim_of(*pairs_at, n):
    """An (n, n) similarity: 0.5 everywhere, 1 on the diagonal, the given (i, j, cosine)."""
    s = np.full((n, n), 0.5)
    np.fill_diagonal(s, 1.0)
    for i, j, c in pairs_at:
        s[i, j] = s[j, i] = c
    return s


def test_a_pair_far_more_alike_than_the_round_is_close_and_says_who_came_later():
    sim = sim_of((0, 1, 0.95), n=6)
    miners = [f"m{k}" for k in range(6)]
    found = close_pairs(sim, range(6), miners, np.array([1.0, 2.0, 1.5, 1.5, 1.5, 1.5]))
    assert found == (ClosePair("m0", "m1", "m1"),)
    tied = close_pairs(sim, range(6), miners, np.array([1.0, 1.01, 1.5, 1.5, 1.5, 1.5]), tie_window_s=0.05)
    assert tied == (ClosePair("m0", "m1", None),)
    assert close_pairs(sim_of(n=6), range(6), miners, np.ones(6)) == ()  # nothing stands out
    assert close_pairs(sim, [0, 1], miners, np.ones(6)) == ()  # too few answers for a baseline


def test_links_need_rounds_and_a_share_and_name_the_follower():
    totals = {("a", "b"): (10, 8, 0, 8), ("c", "d"): (10, 6, 3, 3), ("e", "f"): (10, 4, 0, 4), ("g", "h"): (9, 9, 0, 9)}
    found = links(totals, min_rounds=5, share=0.5, lead=0.8)
    assert found == (Link("a", "b", "b", 8, 10), Link("c", "d", None, 6, 10))
    assert found[0].leader == "a" and found[1].leader is None


def test_the_ledger_counts_pairs_from_their_first_close_round_and_round_trips():
    ledger = Ledger()
    entries = [MinerEntry(m, 0.25, 25, True, False) for m in ("a", "b", "c", "d")]
    ledger = ledger.apply(1, "r1", entries, no_quorum=False, close=(ClosePair("a", "b", "b"),))
    ledger = ledger.apply(2, "r2", entries, no_quorum=False, close=())
    failed_b = [e if e.miner != "b" else MinerEntry("b", 0.0, 0, False, True) for e in entries]
    ledger = ledger.apply(3, "r3", failed_b, no_quorum=False, close=())
    assert ledger.pairs == {pair_key("a", "b"): PairTotals(together=2, close=1, first_later=0, second_later=1)}
    again = Ledger.from_json(ledger.to_json())
    assert again.pairs == ledger.pairs and again.to_json() == ledger.to_json()
    old = ledger.to_json() | {"schema": "consensus-validator/ledger/2"}
    del old["pairs"]
    assert Ledger.from_json(old).pairs == {}


def test_alike_answers_of_one_model_stay_paid_and_the_setting_only_stops_the_evidence():
    # two honest miners of one model, alike round after round: the evaluation has no input for links at all
    # (consensus.signals.Signals has no follower field), so alike answers that are not copies stay in consensus
    texts = [
        "Seasons come from the tilt of the Earth's axis, which makes sunlight steeper and days longer in summer.",
        "The tilt of Earth's axis gives seasons: steeper sunlight and longer days make summer in one hemisphere.",
        "Our planet's inclined spin axis changes how directly sunlight arrives across the year, and so the heat.",
    ]
    round_ = Round("r", "Why are there seasons?", tuple(Response(f"m{k}", t, 1.0 + k) for k, t in enumerate(texts)))
    vectors = np.eye(3, 8, dtype=np.float32) + 0.5
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    plain = decide(round_, vectors)
    assert [r.reason for r in plain.results] == [Reason.IN_CONSENSUS] * 3
    assert not hasattr(Signals(), "followers")
    assert (
        decide(round_, vectors, ConsensusConfig().changed({"identity.identity_persistence": False})).close_pairs == ()
    )


def test_close_pairs_reach_the_evaluation():
    texts = [f"Answer {k}: " + " ".join(f"word{k}x{j}" for j in range(14)) for k in range(5)]
    round_ = Round("r", "Q?", tuple(Response(f"m{k}", t, 1.0 + k) for k, t in enumerate(texts)))
    vectors = np.eye(5, 8, dtype=np.float32)
    vectors[4] = vectors[3] * 0.98 + vectors[2] * 0.02
    vectors[4] /= np.linalg.norm(vectors[4])
    ev = decide(round_, vectors)
    assert ev.close_pairs == (ClosePair("m3", "m4", "m4"),)


def test_a_copy_is_close_evidence_and_short_rounds_do_not_count_against_a_pair():
    long_ = (
        "Seasons come from the tilt of the Earth's axis, which makes sunlight steeper and days longer in the "
        "summer half of the year for each hemisphere in turn."
    )
    other = "Distance from the Sun barely changes; what changes is how high the Sun climbs and how long it shines."
    round_ = Round(
        "r",
        "Why are there seasons?",
        (Response("src", long_, 1.0), Response("cat", long_, 1.5), Response("h", other, 2.0)),
    )
    vectors = np.eye(3, 8, dtype=np.float32)
    ev = decide(round_, vectors)
    assert ev.results[1].reason is Reason.COPY
    assert ClosePair("cat", "src", "cat") in ev.close_pairs and set(ev.comparable) == {"src", "cat", "h"}
    short = Round(
        "s",
        "Capital of Australia?",
        (Response("src", "Canberra.", 1.0), Response("cat", "Canberra.", 1.5), Response("h", "Canberra.", 2.0)),
    )
    assert decide(short, vectors).comparable == ()
    ledger = Ledger()
    entries = [MinerEntry(m, 0.3, 30, True, False) for m in ("src", "cat", "h")]
    for k in range(10):
        ledger = ledger.apply(
            2 * k + 1, f"l{k}", entries, no_quorum=False, close=ev.close_pairs, comparable=ev.comparable
        )
        ledger = ledger.apply(2 * k + 2, f"s{k}", entries, no_quorum=False, close=(), comparable=())
    found = ledger.links(min_rounds=5, share=0.5, lead=0.8)
    assert [(x.first, x.second, x.follower, x.close, x.together) for x in found] == [("cat", "src", "cat", 10, 10)]
