"""The sybil sets and the canaries-over-time script: what they write and answer (no model)."""

from __future__ import annotations

import gzip
import json

import pytest

from benchmarks import canaries_over_time as cot
from benchmarks.attacks import words
from benchmarks.sybil_sets import with_llm, with_perturbed, write_set
from consensus.types import Response, Round

TEXT = "First sentence of the source. Second one follows here. A third closes it."


def toy_rounds() -> list[Round]:
    return [
        Round(
            f"r-{k}",
            f"Prompt {k}?",
            (Response("d15", f"{TEXT} Round {k}.", 2.0), Response("d00", "Another answer entirely.", 1.0)),
        )
        for k in range(3)
    ]


def test_perturbed_set_adds_five_identities_after_the_source_and_is_seeded():
    rounds = toy_rounds()
    out = with_perturbed(rounds, "d15", seed=0)
    assert [r.round_id for r in out] == [r.round_id for r in rounds]
    for r in out:
        extra = r.responses[2:]
        assert [x.miner for x in extra] == [f"s-{k}" for k in range(5)]
        assert all(2.05 <= x.latency_s <= 2.6 for x in extra)
        assert len({x.text for x in extra}) > 1  # each identity its own perturbation
    assert out == with_perturbed(rounds, "d15", seed=0) and out != with_perturbed(rounds, "d15", seed=1)
    assert rounds == toy_rounds()  # input not modified


def test_llm_set_keeps_only_covered_rounds_and_checks_the_source_text():
    rounds = toy_rounds()
    paraphrases = {
        "rounds": {
            "Prompt 1?": {
                "source_text": rounds[1].responses[0].text,
                "paraphrases": [{"text": f"rewrite {k}"} for k in range(5)],
            }
        }
    }
    out = with_llm(rounds, "d15", paraphrases, seed=0)
    assert [r.round_id for r in out] == ["r-1"]
    assert [x.text for x in out[0].responses[2:]] == [f"rewrite {k}" for k in range(5)]
    paraphrases["rounds"]["Prompt 1?"]["source_text"] = "something else"
    with pytest.raises(ValueError, match="not the text"):
        with_llm(rounds, "d15", paraphrases, seed=0)


def test_written_set_has_its_truth_with_the_sybil_group_and_the_same_bytes_each_time(tmp_path):
    truth = {"lc_winrate": {"d15": 17.9, "d00": 78.5}}
    rounds = with_perturbed(toy_rounds(), "d15", seed=0)
    t = write_set(rounds, truth, {"perturbed-d15": [f"s-{k}" for k in range(5)]}, tmp_path / "dev-perturbed.jsonl.gz")
    first = (tmp_path / "dev-perturbed.jsonl.gz").read_bytes()
    assert json.loads(t.read_text())["sybil_groups"] == {"perturbed-d15": [f"s-{k}" for k in range(5)]}
    assert truth == {"lc_winrate": {"d15": 17.9, "d00": 78.5}}
    lines = gzip.decompress(first).decode().splitlines()
    assert len(lines) == 3 and len(json.loads(lines[0])["responses"]) == 7
    write_set(rounds, truth, {"perturbed-d15": [f"s-{k}" for k in range(5)]}, tmp_path / "dev-perturbed.jsonl.gz")
    assert (tmp_path / "dev-perturbed.jsonl.gz").read_bytes() == first


@pytest.mark.parametrize("scenario", cot.SCENARIOS)
def test_canary_miners_send_distinct_texts_with_the_scenarios_answers(scenario):
    data = json.loads(cot.DATA.read_text(encoding="utf-8"))
    for kind in ("regular", "canaries"):
        for item in data[kind]:
            texts = cot.answers(item, kind == "canaries", scenario)
            assert set(texts) == set(cot.HONEST + cot.MAJORITY)
            assert len(set(texts.values())) == 8  # nobody is a verbatim copy of anybody
            majority_wrong = kind == "canaries" or scenario == "wrong-everywhere"
            for m in cot.MAJORITY:
                assert item["wrong" if majority_wrong else "right"].lower() in texts[m].lower()
            for m in cot.HONEST:
                assert item["right"].lower() in texts[m].lower()
            if cot.x_is_yes_no(item["right"]):
                assert all(t.split()[0].strip(",.") in ("Yes", "No") for t in texts.values())  # the stance opens


def test_no_two_majority_identities_share_five_words_of_their_own():
    data = json.loads(cot.DATA.read_text(encoding="utf-8"))
    for item in data["regular"] + data["canaries"]:
        texts = cot.answers(item, True, "wrong-everywhere")
        prompt = set(words(item["prompt"]))
        own = {m: set(words(texts[m])) - prompt for m in cot.MAJORITY}
        for a in cot.MAJORITY:
            for b in cot.MAJORITY:
                if a < b:
                    assert len(own[a] & own[b]) < 5


def test_the_scripted_miners_answer_the_prompt_asked_with_seeded_latencies():
    data = json.loads(cot.DATA.read_text(encoding="utf-8"))
    q = cot.ScriptedMiners(data["regular"], data["canaries"], "wrong-everywhere", seed=0)
    first = q(data["regular"][0]["prompt"])
    again = cot.ScriptedMiners(data["regular"], data["canaries"], "wrong-everywhere", seed=0)(
        data["regular"][0]["prompt"]
    )
    assert first == again and len(first.responses) == 8
    assert all(0.5 <= r.latency_s <= 2.5 for r in first.responses)


def _validity_folder(root, rounds_of):
    for name, source in (("", "d15"), ("wide", "w41")):
        folder = root / name if name else root
        folder.mkdir(parents=True, exist_ok=True)
        write_set(rounds_of(source), {"lc_winrate": {source: 1.0, "d00": 2.0}}, {}, folder / "rounds.jsonl.gz")
        (folder / "rounds-truth.json").rename(folder / "truth.json")


def test_the_suite_gets_an_llm_set_per_set_keyed_by_the_paraphrase_file(tmp_path, monkeypatch):
    from benchmarks import sybil_sets

    def rounds_of(source):
        return [
            Round(r.round_id, r.prompt, (Response(source, r.responses[0].text, 2.0), r.responses[1]))
            for r in toy_rounds()
        ]

    _validity_folder(tmp_path / "validity", rounds_of)
    file = tmp_path / "sybil_paraphrases.json"
    monkeypatch.setattr(sybil_sets, "SYBIL_FILE", file)
    assert set(sybil_sets.write_sets(tmp_path / "validity", tmp_path / "sets")) == {
        "dev+perturbed",
        "dev+reworded",
        "wide+perturbed",
    }  # no paraphrase file: no LLM set
    entry = {"source_text": toy_rounds()[1].responses[0].text, "paraphrases": [{"text": f"rw {k}"} for k in range(5)]}
    file.write_text(json.dumps({"source": "d15", "rounds": {"Prompt 1?": entry}}))
    made = sybil_sets.write_sets(tmp_path / "validity", tmp_path / "sets")
    for name, source in (("dev+llm", "d15"), ("wide+llm", "w41")):
        path, truth = made[name]
        lines = gzip.decompress(path.read_bytes()).decode().splitlines()
        assert len(lines) == 1 and [x["miner"] for x in json.loads(lines[0])["responses"]][:1] == [source]
        assert json.loads(truth.read_text())["sybil_groups"] == {f"llm-{source}": [f"l-{k}" for k in range(5)]}
    entry["paraphrases"][0]["text"] = "a new rewrite"
    file.write_text(json.dumps({"source": "d15", "rounds": {"Prompt 1?": entry}}))
    again = sybil_sets.write_sets(tmp_path / "validity", tmp_path / "sets")
    assert again["dev+llm"][0] != made["dev+llm"][0]  # a changed file is a new set, not a stale cache
    assert again["dev+perturbed"] == made["dev+perturbed"]
