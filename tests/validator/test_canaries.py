"""Canary prompts: the seeded schedule, the accuracy of an answer, and canaries in the daemon's ledger."""

from __future__ import annotations

import json

import pytest

from storage import keys
from storage.memory import MemoryStore
from validator.daemon.committee_draw import canary_round
from validator.daemon.committee_secret import PUBLIC
from validator.daemon.daemon import Daemon
from validator.miners.fake import FakeMiners
from validator.records.evaluation_record import RoundRecord
from validator.round.canaries import (
    RIGHT_AT,
    CanaryInput,
    answer_accuracy,
    is_canary,
    judge_canary,
    load_canaries,
    pick_prompt,
    stance,
)
from validator.round.prompt_source import PromptItem, PromptSourceError
from validator.settings import load_settings

PROMPTS = tuple(PromptItem(f"Regular prompt number {k}?") for k in range(5))
CANARIES = (
    PromptItem(
        "Is Sydney the capital of Australia? Answer yes or no and explain briefly.",
        "No. Canberra is the capital of Australia, not Sydney.",
    ),
)


@pytest.mark.parametrize("seed", range(5))
def test_schedule_is_seeded_and_near_the_rate(seed):
    picks = [pick_prompt(PROMPTS, CANARIES, s, 0.1, seed) for s in range(1, 2001)]
    assert picks == [pick_prompt(PROMPTS, CANARIES, s, 0.1, seed) for s in range(1, 2001)]  # a replay is identical
    share = sum(c for _, c in picks) / len(picks)
    assert 0.08 < share < 0.12
    assert all(item in CANARIES for item, c in picks if c) and all(item in PROMPTS for item, c in picks if not c)


def test_schedule_boundaries():
    assert not any(is_canary(s, 0.0, 0) for s in range(1, 500))
    assert all(is_canary(s, 1.0, 0) for s in range(1, 500))
    assert [is_canary(s, 0.5, 1) for s in range(1, 40)] != [is_canary(s, 0.5, 2) for s in range(1, 40)]
    assert pick_prompt(PROMPTS, (), 7, 1.0, 0) == (PROMPTS[1], False)  # no canaries: the regular cycle


def test_canary_files_need_references(tmp_path):
    good = tmp_path / "c.jsonl"
    good.write_text(json.dumps({"prompt": "Is it?", "reference": "Yes."}) + "\n")
    assert load_canaries(good) == (PromptItem("Is it?", "Yes."),)
    bad = tmp_path / "bad.csv"
    bad.write_text("question,answer\nIs it?,Yes.\nIs it not?,\n")
    with pytest.raises(PromptSourceError, match=r"bad\.csv: canary 2 .*no reference"):
        load_canaries(bad)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Yes.", True),
        ("no, it is not", False),
        ("**Yes** - it is", True),
        ("  NO", False),
        ("Yesterday it rained", None),
        ("Nobody knows", None),
        ("It is yes", None),
        ("", None),
    ],
)
def test_stance(text, expected):
    assert stance(text) is expected


def item(index, text, embedding=None, judge=None, usable=True):
    return CanaryInput(index, f"m{index}", text, usable, embedding, judge)


def test_answer_accuracy_hand_computed():
    ref = "No. Canberra is the capital."
    assert answer_accuracy(ref, item(0, "No, it is Canberra.", 0.8, 0.5)).accuracy == pytest.approx(2.3 / 3)
    wrong = answer_accuracy(ref, item(1, "Yes, Sydney.", 0.9, 1.0))
    assert wrong.accuracy == 0.0 and wrong.stance is False and "contradicts" in wrong.note
    assert answer_accuracy(ref, item(2, "Canberra.", 0.7)).accuracy == pytest.approx(0.7)  # no stance: embedding
    assert answer_accuracy(ref, item(3, "x", 0.9, usable=False)).accuracy == 0.0
    assert answer_accuracy(ref, item(4, "No.", 0.2)).accuracy == pytest.approx(0.6)  # short and right: stance counts
    assert answer_accuracy(ref, item(5, "No.", 1.7, None)).accuracy == 1.0  # clipped
    nothing = answer_accuracy(ref, item(6, "Maybe.", None, None))
    assert nothing.accuracy == 0.0 and nothing.note == "no signal"


def test_judge_canary_consensus_right_or_wrong():
    ref = "No. Canberra."
    items = [item(0, "No, Canberra.", 0.9), item(1, "No - Canberra.", 0.8), item(2, "Yes, Sydney.", 0.9)]
    right = judge_canary(ref, items, members=[0, 1])
    assert right.consensus_right is True and right.consensus_accuracy == pytest.approx(0.925)  # (0.95 + 0.9) / 2
    wrong = judge_canary(ref, items, members=[1, 2])
    assert wrong.consensus_right is False and wrong.consensus_accuracy == pytest.approx(0.45)
    assert wrong.consensus_accuracy < RIGHT_AT
    assert judge_canary(ref, items, members=[]).consensus_right is None
    assert [a.right for a in right.answers] == [True, True, False]


SYBILS = {
    f"sybil{k}": t
    for k, t in enumerate(
        [
            # each names the harbour: a detail they agree on (specific, not generic English), so the
            # quality part pays the majority in regular rounds as it would a concrete answer
            "Yes, Sydney is the capital of Australia and hosts the federal parliament by its harbour.",
            "Yes. The Australian capital is Sydney, the biggest city in the country, on a famous harbour.",
            "Yes - Sydney, on the harbour of the east coast, is the capital city of Australia.",
            "Yes; Australia's capital is Sydney, home of the Opera House on the harbour.",
            "Yes. Sydney has been the capital of Australia since federation in 1901; its harbour is the seat.",
        ]
    )
}
HONEST = {
    f"honest{k}": t
    for k, t in enumerate(
        [
            "No. Canberra is the capital of Australia, not Sydney; it is a planned city.",
            "No, the capital is Canberra, chosen as a compromise between Sydney and Melbourne.",
            "No. Australia's capital is Canberra, where the federal parliament sits.",
        ]
    )
}


@pytest.fixture(scope="module")
def embedder():
    """The fake embedder with every answer and the reference in one cluster, as the real model puts them.

    The topic dominates the real model's vectors (both stances are in consensus with it); the
    canary's yes/no stance is what tells them apart. Spread 0.4: cosine about 0.86, like paraphrases.
    """
    from consensus.fake import FakeEmbedder

    texts = (*SYBILS.values(), *HONEST.values(), CANARIES[0].reference)
    return FakeEmbedder(groups={text: "australia" for text in texts}, spread=0.4)


def Scripted() -> FakeMiners:
    return FakeMiners({**SYBILS, **HONEST}, latency_s=lambda i: 0.5 + 0.01 * i, seconds=0.0)


def make(store, embedder, query, **daemon):
    env = {f"VALIDATOR_DAEMON__{k.upper()}": str(v) for k, v in daemon.items()}
    env["VALIDATOR_DAEMON__INTERVAL_S"] = "0"
    env["VALIDATOR_OUTPUT__HEATMAP"] = "false"  # not what these tests look at, and the slowest stage
    env["VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE"] = (
        "false"  # placeholder prompts: every answer is off topic for them
    )
    settings = load_settings(None, env=env, dotenv_path=None)
    return Daemon(store=store, embedder=embedder, settings=settings, prompts=PROMPTS, query=query, canaries=CANARIES)


def test_canaries_in_the_daemon_move_weights(embedder):
    store, query = MemoryStore(), Scripted()
    daemon = make(store, embedder, query, canary_rate=0.3, canary_seed=0)
    daemon.run(rounds=12)
    # the schedule mixes the committees' secret into the seed (a Daemon without one: the public, empty key)
    canary_rounds = [s for s in range(1, 13) if canary_round(PUBLIC, s, 0.3, 0)]
    assert canary_rounds and len(canary_rounds) < 12
    # the miners see the prompt text only: the canary is asked exactly as written, with nothing added
    assert [query.calls[s - 1] == CANARIES[0].prompt for s in range(1, 13)] == [
        s in canary_rounds for s in range(1, 13)
    ]
    for s in range(1, 13):
        record = RoundRecord.from_json(json.loads(store.get(keys.evaluation(daemon.round_id(s)))))
        assert (record.canary is not None) == (s in canary_rounds)
        stored_input = json.loads(store.get(keys.round_input(daemon.round_id(s))))
        assert stored_input["daemon"]["canary"] == (s in canary_rounds)
        if record.canary is not None:
            right = {a.miner: a.right for a in record.canary.answers}
            assert not any(right[m] for m in SYBILS) and all(right[m] for m in HONEST)
    ledger = daemon.ledger
    assert ledger.canaries == len(canary_rounds)
    weights = ledger.weights()
    paid = {m: ledger.miners[m].emissions / ledger.emitted for m in ledger.miners}
    # without the LM and a reference, the wrong majority still earns a large part of every regular round
    assert sum(paid[m] for m in SYBILS) > 0.3
    for m in SYBILS:
        assert ledger.miners[m].canary_accuracy < 0.7 ** len(canary_rounds) + 1e-9
        assert weights[m] < paid[m]
    for m in HONEST:
        assert ledger.miners[m].canary_accuracy > 0.5 and weights[m] >= paid[m]


def test_a_recovered_canary_round_stays_a_canary(embedder):
    """A crash after the input was stored: the restarted daemon evaluates the same canary."""
    store = MemoryStore()
    first = make(store, embedder, Scripted(), canary_rate=1.0)
    first.run(rounds=1)
    store.delete(keys.evaluation(first.round_id(1)))
    store.delete(keys.ledger())
    again = make(store, embedder, Scripted(), canary_rate=0.0)  # a new schedule must not change a stored round
    report = again.run_one()
    assert report.recovered == "input"
    record = RoundRecord.from_json(json.loads(store.get(keys.evaluation(again.round_id(1)))))
    assert record.canary is not None


def test_a_quantity_the_reference_states_decides_a_canary_answer():
    reference = "The Berlin Wall fell on 9 November 1989."
    wrong = answer_accuracy(reference, CanaryInput(0, "m0", "It fell on 9 November 1991.", True, embedding=0.95))
    right = answer_accuracy(reference, CanaryInput(1, "m1", "It fell in November 1989.", True, embedding=0.9))
    assert wrong.accuracy == 0.0 and "1991" in wrong.note
    assert right.accuracy == 0.9 and right.right


def test_a_canary_answer_offering_what_the_reference_forbids_is_wrong():
    reference = "Cool the burn under running water for 20 minutes. Do not put ice, butter or creams on it."
    lister = "Options: cool running water, an ice pack, butter or honey. Use whichever you have."
    honest = "Run cool water over it for twenty minutes; skip ice and butter."
    wrong = answer_accuracy(reference, CanaryInput(0, "m0", lister, True, embedding=0.9))
    right = answer_accuracy(reference, CanaryInput(1, "m1", honest, True, embedding=0.8))
    assert wrong.accuracy == 0.0 and "butter, ice" in wrong.note
    assert right.accuracy == 0.8 and right.right
    # the round's canary judge reads the claims with the prompt's words left out, as the consensus does
    prompt = "How do I treat a minor burn at home?"
    result = judge_canary(reference, [item(0, lister, 0.9), item(1, honest, 0.8)], [0, 1], prompt)
    assert [a.accuracy for a in result.answers] == [0.0, 0.8] and result.consensus_accuracy == pytest.approx(0.4)
