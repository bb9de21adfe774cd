"""The pure ledger: EMA over paid shares, canary accuracy, weights, stored form (old and new schema)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from emissions.ledger import OLD_SCHEMA, SCHEMA, Ledger, LedgerError, MinerEntry
from tests.validator.records import make_record
from validator.records.evaluation_record import CanaryAnswerRecord, CanaryRecord, RecordError, RoundRecord
from validator.records.ledger_entries import consensus_right, entries_from_record


def entry(miner, share, emission=0, *, in_consensus=True, failed=False, canary=None):
    return MinerEntry(miner, share, emission, in_consensus, failed, canary)


def test_ema_over_paid_shares_hand_computed():
    ledger = Ledger(alpha=0.5)
    ledger = ledger.apply(1, "r1", [entry("a", 0.6, 600), entry("b", 0.4, 400)], no_quorum=False)
    ledger = ledger.apply(2, "r2", [entry("a", 0.0, 0, failed=True), entry("b", 1.0, 1000)], no_quorum=False)
    # a: 0.5*0.6 = 0.3, then 0.5*0 + 0.5*0.3 = 0.15; b: 0.2, then 0.5*1 + 0.5*0.2 = 0.6
    assert ledger.miners["a"].ema == pytest.approx(0.15) and ledger.miners["b"].ema == pytest.approx(0.6)
    assert ledger.weights() == pytest.approx({"a": 0.2, "b": 0.8})
    assert ledger.miners["a"].emissions == 600 and ledger.miners["b"].emissions == 1400 and ledger.emitted == 2000
    assert ledger.miners["a"].answered == 1
    with pytest.raises(LedgerError, match="expects 3"):
        ledger.apply(2, "r2", [], no_quorum=False)
    assert Ledger.from_json(json.loads(json.dumps(ledger.to_json()))) == ledger
    assert Ledger().weights() == {}


@pytest.mark.parametrize("seed", range(5))
def test_a_miner_paid_zero_in_every_round_has_weight_zero(seed):
    """Copies, junk and filtered answers (paid 0) gain no weight, however good their composite was."""
    import random

    rng = random.Random(seed)
    ledger = Ledger(alpha=0.1)
    for seq in range(1, 31):
        honest = [rng.random() + 0.01 for _ in range(3)]
        shares = [h / sum(honest) for h in honest]
        entries = [entry(f"h{k}", s, int(s * 1000)) for k, s in enumerate(shares)]
        entries.append(entry("copycat", 0.0, 0, in_consensus=False))
        entries.append(entry("junk", 0.0, 0, in_consensus=False))
        ledger = ledger.apply(seq, f"r{seq}", entries, no_quorum=False)
    weights = ledger.weights()
    assert weights["copycat"] == 0.0 and weights["junk"] == 0.0
    assert sum(weights.values()) == pytest.approx(1.0)


def test_rounds_that_paid_nobody_leave_every_ema_unchanged():
    ledger = Ledger(alpha=0.5).apply(1, "r1", [entry("a", 1.0, 10)], no_quorum=False)
    after = ledger.apply(2, "r2", [entry("a", 0.0, 0, failed=True)], no_quorum=True)
    after = after.apply(3, "r3", [entry("a", 0.0, 0)], no_quorum=False)  # quorum, but a pool of 0
    assert after.miners["a"].ema == ledger.miners["a"].ema == 0.5
    assert after.no_quorum == 1 and after.rounds == 3


def test_a_miner_absent_from_a_paid_round_decays():
    ledger = Ledger(alpha=0.5).apply(1, "r1", [entry("a", 1.0, 10)], no_quorum=False)
    ledger = ledger.apply(2, "r2", [entry("b", 1.0, 10)], no_quorum=False)
    assert ledger.miners["a"].ema == pytest.approx(0.25) and ledger.miners["b"].ema == pytest.approx(0.5)
    assert ledger.miners["a"].rounds == 1


def test_canary_accuracy_scales_weights():
    ledger = Ledger(alpha=0.5, canary_alpha=0.5)
    ledger = ledger.apply(1, "r1", [entry("a", 0.5, 5), entry("b", 0.5, 5)], no_quorum=False)
    assert ledger.weights() == pytest.approx({"a": 0.5, "b": 0.5})  # no canary yet: nobody penalised
    ledger = ledger.apply(
        2, "c2", [entry("a", 0.5, 5, canary=1.0), entry("b", 0.5, 5, canary=0.0)], no_quorum=False, consensus_right=True
    )
    a, b = ledger.miners["a"], ledger.miners["b"]
    assert (a.canary_accuracy, b.canary_accuracy) == (1.0, 0.5)  # 0.5*0 + 0.5*1.0 (the prior)
    assert a.canary_rounds == b.canary_rounds == 1 and ledger.canaries == 1 and ledger.canaries_right == 1
    assert ledger.weights() == pytest.approx({"a": 2 / 3, "b": 1 / 3})
    no_quorum = ledger.apply(
        3, "c3", [entry("a", 0.0, canary=0.0), entry("b", 0.0, canary=0.0)], no_quorum=True, consensus_right=False
    )
    assert no_quorum.miners["a"].canary_accuracy == 1.0 and no_quorum.canaries == 1


def test_a_majority_wrong_on_canaries_loses_weight_though_it_wins_every_consensus():
    """5 identities win (and are paid) every round; on the canaries they give the wrong answer."""
    ledger = Ledger(alpha=0.1, canary_alpha=0.3)
    majority, honest = [f"sybil{k}" for k in range(5)], [f"honest{k}" for k in range(3)]
    for seq in range(1, 101):
        canary = seq % 10 == 0
        entries = [entry(m, 0.19, 190, canary=0.0 if canary else None) for m in majority]
        entries += [entry(m, 0.05 / 3, 16, in_consensus=False, canary=1.0 if canary else None) for m in honest]
        ledger = ledger.apply(seq, f"r{seq}", entries, no_quorum=False, consensus_right=False if canary else None)
    weights = ledger.weights()
    paid_share = {m: ledger.miners[m].emissions / ledger.emitted for m in ledger.miners}
    for m in majority:
        assert weights[m] < paid_share[m] / 2  # paid 19% of the pools, left with under 9.5% of the weight
    # paid 5% of the pools together, the three right miners end with most of the weight (0.7 ** 10 = 0.028)
    assert sum(weights[m] for m in honest) > 0.6
    assert ledger.canaries == 10 and ledger.canaries_right == 0


def test_entries_are_validated():
    with pytest.raises(LedgerError, match="share"):
        entry("a", 1.5)
    with pytest.raises(LedgerError, match="canary"):
        entry("a", 0.5, canary=float("nan"))
    with pytest.raises(LedgerError, match="twice"):
        Ledger().apply(1, "r", [entry("a", 0.5, 1), entry("a", 0.5, 1)], no_quorum=False)
    with pytest.raises(LedgerError, match="alpha"):
        Ledger(alpha=0.0)


def test_old_ledgers_load_with_their_emas_restarted():
    old = {
        "schema": OLD_SCHEMA,
        "alpha": 0.1,
        "last_sequence": 3,
        "last_round_id": "round-000003",
        "rounds": 3,
        "no_quorum": 0,
        "emitted": 3000,
        "weights": {"a": 1.0},
        "miners": {
            "a": {
                "rounds": 3,
                "answered": 3,
                "in_consensus": 3,
                "emissions": 3000,
                "ema": 0.27,
                "last_round": "round-000003",
            }
        },
    }
    ledger = Ledger.from_json(old)
    assert ledger.last_sequence == 3 and ledger.miners["a"].emissions == 3000 and ledger.miners["a"].ema == 0.0
    assert ledger.miners["a"].canary_accuracy == 1.0 and ledger.weights() == {"a": 0.0}
    assert ledger.to_json()["schema"] == SCHEMA
    with pytest.raises(LedgerError, match="schema"):
        Ledger.from_json({**old, "schema": "something/else"})
    with pytest.raises(LedgerError, match="malformed"):
        Ledger.from_json({**old, "miners": {"a": {"bogus": 1}}})


RECORD = make_record("round-000004", [("a", True, 750), ("b", True, 250), ("c", False, 0)], status="ok")
RECORD = dataclasses.replace(
    RECORD, responses=RECORD.responses[:2] + (dataclasses.replace(RECORD.responses[2], error="timeout"),)
)


def test_entries_from_a_record():
    entries = entries_from_record(RECORD)
    assert [(e.miner, e.share, e.emission, e.failed, e.canary) for e in entries] == [
        ("a", 0.75, 750, False, None),
        ("b", 0.25, 250, False, None),
        ("c", 0.0, 0, True, None),
    ]
    assert consensus_right(RECORD) is None
    answers = tuple(
        CanaryAnswerRecord(index=i, miner=m, accuracy=x, embedding=x, judge=None, stance=None, right=x >= 0.5, note="")
        for i, m, x in ((0, "a", 0.9), (1, "b", 0.2))
    )
    canary = dataclasses.replace(
        RECORD,
        canary=CanaryRecord(canary=True, right_at=0.5, consensus_accuracy=0.55, consensus_right=True, answers=answers),
    )
    assert [e.canary for e in entries_from_record(canary)] == [0.9, 0.2, 0.0]  # the failed answer: 0
    assert consensus_right(canary) is True
    with pytest.raises(RecordError, match="round-000004.*responses\\[0\\].index"):
        RoundRecord.from_json({**RECORD.to_json(), "responses": [{"miner": "a"}]}, "round-000004")


@pytest.mark.parametrize("committee", [4, 40])  # a committee's pairs looked up; more pairs than the ledger's: scanned
def test_links_among_some_miners_are_the_links_between_them(committee):
    import random

    from emissions.ledger import PairTotals, pair_key

    rng = random.Random(committee)
    names = [f"m{i:02d}" for i in range(40)]
    pairs = {}
    for _ in range(300):
        a, b = rng.sample(names, 2)
        together = rng.randint(1, 20)
        close = rng.randint(0, together)
        pairs[pair_key(a, b)] = PairTotals(together, close, rng.randint(0, close), 0)
    ledger = Ledger(pairs=pairs)
    among = set(rng.sample(names, committee))
    every = ledger.links(min_rounds=5, share=0.5, lead=0.8)
    assert any(link.first not in among or link.second not in among for link in every) or committee == 40
    expected = tuple(link for link in every if link.first in among and link.second in among)
    assert expected and ledger.links(min_rounds=5, share=0.5, lead=0.8, among=among) == expected


def test_task_rounds_count_each_miners_tasks_and_right_answers():
    from emissions.ledger import Ledger, MinerEntry

    ledger = Ledger()
    entries = [
        MinerEntry("a", 1.0, 100, True, False, verified=True),
        MinerEntry("b", 0.0, 0, False, False, verified=False),
        MinerEntry("c", 0.0, 0, False, True, verified=False),  # failed: asked, not right
    ]
    ledger = ledger.apply(1, "r1", entries, no_quorum=False)
    ledger = ledger.apply(
        2, "r2", [MinerEntry("a", 0.5, 50, True, False), MinerEntry("b", 0.5, 50, True, False)], no_quorum=False
    )  # a prompt round: no task
    a, b, c = (ledger.miners[m] for m in "abc")
    assert (a.tasks, a.tasks_right, b.tasks, b.tasks_right, c.tasks, c.tasks_right) == (1, 1, 1, 0, 1, 0)
    again = Ledger.from_json(ledger.to_json())
    assert again.miners == ledger.miners
