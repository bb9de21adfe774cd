"""The recorded network: identities answering as recorded models, and its adversaries seeing their committee."""

from __future__ import annotations

from benchmarks.recorded_network import OFF_TOPIC, RecordedNetwork, RecordedPersona, paraphrase

TEXT = "Lists are mutable. You can append to them. Tuples are not. Strings are not either."
ANSWERS = {"Q?": {"good": TEXT, "other": "Yes, lists change in place; tuples do not."}}
PEOPLE = [
    RecordedPersona("h0", "honest", "good"),
    RecordedPersona("h1", "honest", "other"),
    RecordedPersona("f0", "farm", "good"),
    RecordedPersona("f1", "farm", "good"),
    RecordedPersona("s0", "sybil"),
    RecordedPersona("s1", "sybil"),
    RecordedPersona("c0", "copycat", "other", partner="h1"),
    RecordedPersona("w0", "sybil", "other", operator="wrong"),
    RecordedPersona("w1", "sybil", "other", operator="wrong"),
]


def by_miner(answered):
    return {r.miner: r for r in answered[0]}


def test_honest_identities_answer_as_their_model_and_only_the_committee_is_asked():
    net = RecordedNetwork(ANSWERS, PEOPLE)
    got = by_miner(net.answer("Q?", members={"h0", "h1"}))
    assert set(got) == {"h0", "h1"} and got["h0"].text == TEXT and got["h1"].text == ANSWERS["Q?"]["other"]


def test_a_farm_alone_answers_with_its_model_and_together_shares_one_answer():
    net = RecordedNetwork(ANSWERS, PEOPLE)
    alone = by_miner(net.answer("Q?", members={"f0", "h1"}))
    assert alone["f0"].text == TEXT and net.produced["farm"] == 1
    both = by_miner(net.answer("Q?", members={"f0", "f1", "h1"}))
    assert both["f0"].text == TEXT and both["f1"].text != TEXT and net.produced["farm"] == 2  # one answer produced
    assert set(both["f1"].text.split()) <= set(TEXT.split()) | {"In", "short:", "as", "above."}


def test_copycats_copy_only_a_committee_mate_and_sybils_vote_off_topic():
    net = RecordedNetwork(ANSWERS, PEOPLE)
    seen = by_miner(net.answer("Q?", members={"c0", "h1", "s0", "s1"}))
    assert seen["c0"].text == ANSWERS["Q?"]["other"] and seen["s0"].text == OFF_TOPIC != seen["s1"].text
    unseen = by_miner(net.answer("Q?", members={"c0", "h0"}))
    assert unseen["c0"].error == "empty" and unseen["c0"].text == ""


def test_paraphrase_variants_differ_and_keep_the_words():
    variants = {paraphrase(TEXT, v) for v in range(4)}
    assert len(variants) == 4 and paraphrase(TEXT, 0) == TEXT


def test_a_sybil_group_can_vote_for_a_poor_model_s_answer():
    net = RecordedNetwork(ANSWERS, PEOPLE)
    got = by_miner(net.answer("Q?", members={"w0", "w1", "h0"}))
    assert got["w0"].text == ANSWERS["Q?"]["other"] and got["w1"].text != got["w0"].text and net.produced["wrong"] == 1


def test_answers_arrive_at_times_fixed_by_prompt_and_identity_and_a_copycat_after_its_partner():
    net = RecordedNetwork({**ANSWERS, "P?": ANSWERS["Q?"]}, PEOPLE, arrival="random")
    first, again = by_miner(net.answer("Q?")), by_miner(net.answer("Q?"))
    assert all(1.0 <= r.latency_s < 3.0 and r.received_s == r.latency_s for r in first.values() if r.miner != "c0")
    assert {m: r.received_s for m, r in first.items()} == {m: r.received_s for m, r in again.items()}
    assert first["c0"].received_s == first["h1"].received_s + 0.5
    other = by_miner(net.answer("P?"))
    assert [first[m].received_s for m in ("h0", "f0")] != [other[m].received_s for m in ("h0", "f0")]
    ordered = by_miner(RecordedNetwork(ANSWERS, PEOPLE).answer("Q?"))  # the default
    assert [ordered[m].latency_s for m in ("h0", "h1", "f0")] == [1.0, 1.01, 1.02]
    assert all(r.received_s is None for r in ordered.values())
