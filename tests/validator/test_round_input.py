import json

import pytest

from consensus.errors import RoundError
from validator.records.round_input import InputLimits, parse_round, read_rounds, round_to_json

GOOD = {
    "round_id": "r-1",
    "prompt": "Q?",
    "reference": None,
    "responses": [
        {"miner": "a", "text": "yes", "latency_s": 1.0, "confidence": 0.5},
        {"miner": "b", "text": "no", "latency_s": 2.0},
    ],
}


def with_response(i, **changes):
    obj = json.loads(json.dumps(GOOD))
    obj["responses"][i].update(changes)
    return obj


def test_good_round_round_trips():
    r = parse_round(GOOD, "line 1")
    assert r.responses[0].confidence == 0.5 and r.responses[1].confidence is None
    assert parse_round(round_to_json(r), "again") == r


@pytest.mark.parametrize(
    "obj,field,message",
    [
        ({**GOOD, "prompt": None}, "prompt", "missing"),
        ({k: v for k, v in GOOD.items() if k != "responses"}, "responses", "missing"),
        ({**GOOD, "responses": []}, "responses", "0 response"),
        ({**GOOD, "responses": GOOD["responses"][:1]}, "responses", "1 response"),
        ({**GOOD, "responses": "many"}, "responses", "must be a list"),
        (with_response(1, miner="a"), "responses[1].miner", "duplicate miner id 'a'"),
        (with_response(0, latency_s=-1), "responses[0].latency_s", "must be >= 0"),
        (with_response(0, latency_s=float("nan")), "responses[0].latency_s", "finite"),
        (with_response(0, latency_s="fast"), "responses[0].latency_s", "must be a number"),
        (with_response(0, text=42), "responses[0].text", "must be a string, got int"),
        (with_response(0, text=["x"]), "responses[0].text", "must be a string, got list"),
        (with_response(0, text="x" * 5_000_000), "responses[0].text", "5,000,000 characters"),
        (with_response(1, confidence=1.5), "responses[1].confidence", "in [0.0, 1.0]"),
        (with_response(1, miner=None), "responses[1].miner", "missing"),
        ({**GOOD, "round_id": ""}, "round_id", "empty"),
        ({**GOOD, "round_id": 7}, "round_id", "must be a string"),
    ],
)
def test_bad_fields_are_named(obj, field, message):
    with pytest.raises(RoundError) as info:
        parse_round(obj, "line 9")
    text = str(info.value)
    assert "line 9" in text and f"field {field!r}" in text and message in text


def test_not_an_object():
    with pytest.raises(RoundError, match="line 2: a round must be a JSON object, got list"):
        parse_round([1], "line 2")


def test_bad_lines_do_not_stop_the_file(tmp_path):
    path = tmp_path / "rounds.jsonl"
    lines = [
        json.dumps(GOOD),
        "{not json",
        "",
        json.dumps({**GOOD, "round_id": "r-2", "responses": GOOD["responses"][:1]}),
        json.dumps({**GOOD, "round_id": "r-3"}),
        json.dumps(GOOD),  # duplicate round id
        b"\xff\xfe".decode("latin-1"),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = list(read_rounds(path))
    assert [r.line for r in results] == [1, 2, 4, 5, 6, 7]
    ok = [r.round.round_id for r in results if r.round]
    assert ok == ["r-1", "r-3"]
    errors = {r.line: str(r.error) for r in results if r.error}
    assert "malformed JSON" in errors[2]
    assert "field 'responses'" in errors[4]
    assert "duplicate round id, first at line 1" in errors[6]
    assert 7 in errors


def test_limits_are_configurable():
    with pytest.raises(RoundError, match="more than the limit of 10"):
        parse_round(with_response(0, text="x" * 11), "line 1", InputLimits(max_response_chars=10))
