"""Miners: the miners file, querying real loopback servers (every failure mode), latency, keys, the pool."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from consensus.errors import ConfigError
from consensus.types import Response, Round
from lm.config import Secret
from lm.local import free_port
from validator.minerpool import MinerPool, SimMiner, canned_pool, default_pool
from validator.miners import (FailureReason, MinerAnswer, MinerSpec, MinersFileError, load_miners,
                              logprob_confidence, outcome_counts, parse_chat_completion, query_miners,
                              query_miners_async, to_response)
from validator.rounds import round_to_json

KEY = "sk-test-9f8e7d6c5b4a-never-print-me"
LIMITS = dict(request_timeout_s=2.0, deadline_s=4.0, max_answer_chars=1000, max_tokens=64)

MINERS = [
    SimMiner("ok", "canned", api_key=Secret(KEY), text="The answer to {prompt} is forty-two.", logprob=-0.5),
    SimMiner("plain", "canned", text="Plain answer."),
    SimMiner("slow", "slow", api_key=Secret(KEY), delay_s=30.0),
    SimMiner("empty", "empty", api_key=Secret(KEY)),
    SimMiner("blank", "canned", text="  \n\t "),
    SimMiner("http500", "http500", api_key=Secret(KEY)),
    SimMiner("malformed", "malformed"),
    SimMiner("nontext-list", "nontext"),
    SimMiner("nontext-number", "nontext", content=42),
    SimMiner("oversized", "oversized", size=32 * 1024 * 1024),
    SimMiner("long", "canned", text="x" * 5000),
    SimMiner("trickle", "canned", text="Trickled answer about {prompt}.", trickle_s=0.3),
    SimMiner("copycat", "copycat", copy_of="ok"),
    SimMiner("offtopic", "offtopic"),
    SimMiner("injection", "injection", api_key=Secret(KEY)),
    *[SimMiner(f"delayed-{i}", "canned", text="Delayed answer {name}.", delay_s=0.2) for i in range(6)],
]


@pytest.fixture(scope="module")
def pool():
    with MinerPool(MINERS) as p:
        yield p


def ask(specs, prompt="Why is the sky blue?", **overrides):
    return query_miners(prompt, specs, **{**LIMITS, **overrides})


def one(pool, name, **overrides):
    return ask([pool.spec(name)], **overrides)[0]


# -- answers and failure modes against the loopback pool --------------------------------------------------

def test_a_good_answer_has_text_latency_confidence_and_usage(pool):
    answer = one(pool, "ok", system_prompt="Answer briefly.")
    assert answer.ok and answer.failure is None and answer.detail == ""
    assert answer.text == "The answer to Why is the sky blue? is forty-two."
    assert 0.0 < answer.latency_s < 1.0
    assert answer.confidence == pytest.approx(math.exp(-0.5))  # every token at logprob -0.5
    assert answer.completion_tokens == 10  # the pool counts words
    seen = [r for r in pool.requests if r["miner"] == "ok"][-1]
    assert seen["authorised"] and seen["logprobs"] and seen["max_tokens"] == 64
    assert seen["messages"] == [{"role": "system", "content": "Answer briefly."},
                                {"role": "user", "content": "Why is the sky blue?"}]


def test_no_confidence_without_logprobs(pool):
    assert one(pool, "plain").confidence is None
    assert one(pool, "ok", logprobs=False).confidence is None


@pytest.mark.parametrize("name, reason, detail", [
    ("empty", FailureReason.EMPTY, "answer is empty"),
    ("blank", FailureReason.EMPTY, "only whitespace"),
    ("http500", FailureReason.HTTP_ERROR, "HTTP 500"),
    ("malformed", FailureReason.MALFORMED_PAYLOAD, "not valid JSON"),
    ("nontext-list", FailureReason.NON_TEXT, "content is a list"),
    ("nontext-number", FailureReason.NON_TEXT, "content is a int"),
    ("oversized", FailureReason.OVERSIZED, "stopped reading"),
    ("long", FailureReason.OVERSIZED, "5,000 characters"),
])
def test_each_failure_mode_is_recorded_with_its_reason(pool, name, reason, detail):
    answer = one(pool, name)
    assert answer.failure is reason and not answer.ok
    assert detail in answer.detail
    assert answer.text == "" and answer.confidence is None


def test_oversized_body_is_cut_off_without_reading_it_all(pool):
    started = time.perf_counter()
    answer = one(pool, "oversized", max_body_bytes=100_000)
    assert answer.failure is FailureReason.OVERSIZED and "100,000 bytes" in answer.detail
    assert time.perf_counter() - started < 2.0  # 32 MB would take longer; the client hung up instead


def test_timeout(pool):
    started = time.perf_counter()
    answer = one(pool, "slow", request_timeout_s=0.3)
    assert answer.failure is FailureReason.TIMEOUT and "0.3 s" in answer.detail
    assert 0.28 <= answer.latency_s < 0.6
    assert time.perf_counter() - started < 1.5


def test_a_miners_own_timeout_overrides_the_default(pool):
    spec = dataclasses.replace(pool.spec("slow"), timeout_s=0.2)
    answer = ask([spec], request_timeout_s=5.0, deadline_s=5.0)[0]
    assert answer.failure is FailureReason.TIMEOUT and 0.18 <= answer.latency_s < 0.5


def test_connection_refused():
    spec = MinerSpec("closed", f"http://127.0.0.1:{free_port()}/v1", "m")
    answer = ask([spec])[0]
    assert answer.failure is FailureReason.CONNECTION_REFUSED and answer.detail == "connection refused"


def test_missing_or_wrong_key_is_an_http_error(pool):
    no_key = dataclasses.replace(pool.spec("ok"), api_key=None)
    wrong = dataclasses.replace(pool.spec("ok"), hotkey="ok-wrong", api_key=Secret("sk-wrong"))
    answers = ask([no_key, wrong])
    assert [a.failure for a in answers] == [FailureReason.HTTP_ERROR] * 2
    assert all(a.detail == "HTTP 401" for a in answers)


def test_copycat_offtopic_and_injection_answer_and_are_left_to_consensus(pool):
    specs = [pool.spec(n) for n in ("copycat", "ok", "offtopic", "injection")]  # the copycat waits for "ok"
    answers = {a.hotkey: a for a in ask(specs, "Why is the sea salty?")}
    assert all(a.ok for a in answers.values())
    assert answers["copycat"].text == answers["ok"].text == "The answer to Why is the sea salty? is forty-two."
    assert answers["copycat"].confidence == answers["ok"].confidence
    assert "salty" not in answers["offtopic"].text
    assert "ignore all previous instructions" in answers["injection"].text


def test_the_round_goes_on_with_the_rest(pool):
    names = ["ok", "empty", "http500", "malformed", "slow", "plain"]
    answers = ask([pool.spec(n) for n in names], request_timeout_s=0.3)
    assert [a.hotkey for a in answers] == names  # the miners' order
    assert outcome_counts(answers) == {"ok": 2, "timeout": 1, "connection_refused": 0, "http_error": 1,
                                       "malformed_payload": 1, "empty": 1, "oversized": 0, "non_text": 0,
                                       "deadline": 0}


# -- latency ------------------------------------------------------------------------------------------------

def test_latency_runs_to_the_last_byte(pool):
    answer = one(pool, "trickle")
    assert answer.ok and answer.text.startswith("Trickled answer")
    assert 0.27 <= answer.latency_s < 0.6  # the body takes 0.3 s to arrive after the headers


def test_latency_excludes_waiting_for_a_connection_slot(pool):
    specs = [pool.spec(f"delayed-{i}") for i in range(6)]
    started = time.perf_counter()
    answers = ask(specs, max_connections=2, request_timeout_s=0.45)
    wall = time.perf_counter() - started
    assert wall >= 0.55  # three waves of two
    # nobody timed out although the last wave finished ~0.6 s after the round began
    assert all(a.ok for a in answers), [(a.hotkey, a.detail) for a in answers]
    assert all(0.19 <= a.latency_s < 0.35 for a in answers), [a.latency_s for a in answers]


def test_latency_excludes_the_callers_blocked_event_loop(pool):
    specs = [pool.spec(f"delayed-{i}") for i in range(3)]

    async def caller():
        loop = asyncio.get_running_loop()
        pending = loop.run_in_executor(None, lambda: ask(specs))
        await asyncio.sleep(0.05)
        time.sleep(0.5)  # the caller's own loop is blocked while the miners answer
        return await pending

    answers = asyncio.run(caller())
    assert all(a.ok and 0.19 <= a.latency_s < 0.35 for a in answers), [a.latency_s for a in answers]


# -- deadline -----------------------------------------------------------------------------------------------

def test_deadline_cancels_what_is_still_running(pool):
    started = time.perf_counter()
    answers = ask([pool.spec("slow"), pool.spec("ok")], request_timeout_s=10.0, deadline_s=0.4)
    assert time.perf_counter() - started < 1.2
    assert answers[0].failure is FailureReason.DEADLINE and "waiting for the answer" in answers[0].detail
    assert answers[1].ok


def test_deadline_before_a_connection_slot_frees_up(pool):
    answers = ask([pool.spec("slow"), pool.spec("ok")], request_timeout_s=10.0, deadline_s=0.3, max_connections=1)
    assert [a.failure for a in answers] == [FailureReason.DEADLINE] * 2
    assert "before the request was sent" in answers[1].detail


# -- keys never leak ------------------------------------------------------------------------------------------

def test_api_keys_never_appear_in_logs_answers_or_records(pool, caplog):
    caplog.set_level(logging.DEBUG)
    refused = MinerSpec("refused", f"http://127.0.0.1:{free_port()}/v1", "m", api_key=Secret(KEY))
    specs = [pool.spec(n) for n in ("ok", "slow", "empty", "http500", "injection")] + [refused]
    specs.append(dataclasses.replace(pool.spec("ok"), hotkey="wrong-key", api_key=Secret(KEY + "-x")))
    answers = ask(specs, request_timeout_s=0.3)
    assert {a.failure for a in answers} >= {None, FailureReason.TIMEOUT, FailureReason.HTTP_ERROR,
                                            FailureReason.CONNECTION_REFUSED}
    responses = tuple(to_response(a) for a in answers)
    record = json.dumps(round_to_json(Round("r-1", "Why is the sky blue?", responses)))
    for text in (caplog.text, repr(answers), repr(specs), str(specs), repr(responses), record,
                 " ".join(a.detail for a in answers)):
        assert KEY not in text
    assert caplog.text  # the query did log
    with pytest.raises(TypeError):
        dataclasses.asdict(specs[0])  # a Secret refuses to be serialised


# -- the payload, by hand ---------------------------------------------------------------------------------

def body(content=None, **message):
    msg = {"role": "assistant", **({"content": content} if content is not ... else {}), **message}
    return json.dumps({"choices": [{"index": 0, "message": msg}]}).encode()


@pytest.mark.parametrize("raw, reason, detail", [
    (b"not json", FailureReason.MALFORMED_PAYLOAD, "not valid JSON"),
    (b"\xff\xfe", FailureReason.MALFORMED_PAYLOAD, "not UTF-8"),
    (b"[]", FailureReason.MALFORMED_PAYLOAD, "no choices[0]"),
    (b'{"choices": []}', FailureReason.MALFORMED_PAYLOAD, "no choices[0]"),
    (b'{"choices": [{"text": "legacy"}]}', FailureReason.MALFORMED_PAYLOAD, "no choices[0].message"),
    (body(...), FailureReason.MALFORMED_PAYLOAD, "has no content"),
    (body(None), FailureReason.EMPTY, "content is null"),
    (body(None, tool_calls=[{"id": "t"}]), FailureReason.NON_TEXT, "only tool_calls"),
    (body(None, refusal="no"), FailureReason.NON_TEXT, "only refusal"),
    (body([{"type": "text", "text": "hi"}]), FailureReason.NON_TEXT, "a list"),
    (body(7.5), FailureReason.NON_TEXT, "a float"),
    (body({"text": "hi"}), FailureReason.NON_TEXT, "a dict"),
    (body(""), FailureReason.EMPTY, "answer is empty"),
    (body(" \n"), FailureReason.EMPTY, "whitespace"),
    (b'{"choices": [{"message": {"content": "\\ud800 lone"}}]}', FailureReason.MALFORMED_PAYLOAD, "surrogate"),
    (body("y" * 11), FailureReason.OVERSIZED, "11 characters, over the cap of 10"),
])
def test_payload_validation(raw, reason, detail):
    answer = parse_chat_completion("m", raw, 0.5, max_answer_chars=10)
    assert answer.failure is reason and detail in answer.detail and answer.text == ""
    assert answer.latency_s == 0.5


def test_payload_at_the_cap_is_accepted_as_is():
    answer = parse_chat_completion("m", body(" y" * 5), 0.1, max_answer_chars=10)
    assert answer.ok and answer.text == " y" * 5


@pytest.mark.parametrize("logprobs, expected", [
    ({"content": [{"logprob": -0.1}, {"logprob": -0.3}]}, math.exp(-0.2)),
    ({"content": [{"logprob": 0.0}]}, 1.0),
    ({"content": [{"logprob": 1e-9}, {"logprob": 0.0}]}, 1.0),  # rounding above 0 counts as 0
    ({"content": [{"logprob": -50.0}]}, math.exp(-50.0)),
    ({"content": [{"logprob": -1.0}, {"logprob": -1.0}, {"logprob": -4.0}]}, math.exp(-2.0)),
    (None, None),
    ({}, None),
    ({"content": []}, None),
    ({"content": [{"token": "a"}]}, None),
    ({"content": [{"logprob": True}]}, None),
    ({"content": [{"logprob": "-0.1"}]}, None),
    ({"content": [{"logprob": 0.5}]}, None),
    ({"content": [{"logprob": float("nan")}]}, None),
    ({"content": [{"logprob": float("-inf")}]}, None),
    ([{"logprob": -0.1}], None),
])
def test_logprob_confidence_by_hand(logprobs, expected):
    value = logprob_confidence(logprobs)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected) and 0.0 <= value <= 1.0


def test_confidence_and_usage_come_from_the_body():
    raw = json.dumps({"choices": [{"message": {"content": "Yes."},
                                   "logprobs": {"content": [{"token": "Yes", "logprob": -0.2},
                                                            {"token": ".", "logprob": 0.0}]}}],
                      "usage": {"prompt_tokens": 12, "completion_tokens": 2}}).encode()
    answer = parse_chat_completion("m", raw, 0.1, max_answer_chars=100)
    assert answer.confidence == pytest.approx(math.exp(-0.1))
    assert (answer.prompt_tokens, answer.completion_tokens) == (12, 2)


def test_to_response_and_counts():
    good = MinerAnswer("a", "text", 0.25, confidence=0.5)
    bad = MinerAnswer("b", "", 1.0, failure=FailureReason.TIMEOUT, detail="no complete answer within 1 s")
    assert to_response(good) == Response("a", "text", 0.25, confidence=0.5)
    assert to_response(bad) == Response("b", "", 1.0, error="timeout")
    counts = outcome_counts([good, bad, bad])
    assert counts["ok"] == 1 and counts["timeout"] == 2 and sum(counts.values()) == 3
    assert outcome_counts([]) == {"ok": 0, **{r.value: 0 for r in FailureReason}}


# -- query arguments ------------------------------------------------------------------------------------------

def test_no_miners_no_answers():
    assert ask([]) == []


@pytest.mark.parametrize("overrides", [dict(request_timeout_s=0), dict(deadline_s=-1.0), dict(deadline_s=float("nan")),
                                       dict(max_answer_chars=0), dict(max_tokens=1.5), dict(max_connections=0)])
def test_bad_query_arguments(overrides):
    with pytest.raises(ValueError):
        ask([MinerSpec("a", "http://127.0.0.1:1/v1", "m")], **overrides)


def test_duplicate_hotkeys_in_a_query_are_refused():
    spec = MinerSpec("a", "http://127.0.0.1:1/v1", "m")
    with pytest.raises(ValueError, match="duplicate hotkey 'a'"):
        ask([spec, spec])


def test_query_does_not_modify_its_inputs(pool):
    specs = [pool.spec("ok"), pool.spec("plain")]
    before = list(specs)
    ask(specs)
    assert specs == before


def test_async_variant_on_the_callers_loop(pool):
    answers = asyncio.run(query_miners_async("Why?", [pool.spec("ok"), pool.spec("http500")], **LIMITS))
    assert answers[0].ok and answers[1].failure is FailureReason.HTTP_ERROR


# -- the miners file -------------------------------------------------------------------------------------------

TOML = """
[[miner]]
hotkey = "5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQX"
base_url = "http://127.0.0.1:8001/v1/"
model = "qwen2.5"
api_key_env = "MINER_A_KEY"
timeout_s = 20

[[miner]]
hotkey = "team/bob"
base_url = "https://miner.example.org/v1"
model = "llama-3"
"""

YAML = """
miners:
  - hotkey: 5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQX
    base_url: http://127.0.0.1:8001/v1/
    model: qwen2.5
    api_key_env: MINER_A_KEY
    timeout_s: 20
  - hotkey: team/bob
    base_url: https://miner.example.org/v1
    model: llama-3
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name, text", [("miners.toml", TOML), ("miners.yaml", YAML), ("miners.yml", YAML)])
def test_load_miners(tmp_path, name, text):
    specs = load_miners(write(tmp_path, name, text), {"MINER_A_KEY": f" {KEY}\n"})
    assert [s.hotkey for s in specs] == ["5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQX", "team/bob"]
    assert specs[0].base_url == "http://127.0.0.1:8001/v1" and specs[0].chat_url.endswith("/v1/chat/completions")
    assert specs[0].api_key == Secret(KEY) and specs[0].api_key_env == "MINER_A_KEY"
    assert specs[0].timeout_s == 20.0 and specs[1].timeout_s is None and specs[1].api_key is None
    assert KEY not in repr(specs)


def test_the_example_miners_file_loads():
    path = Path(__file__).resolve().parents[2] / "examples" / "miners.toml"
    specs = load_miners(path, {"EXAMPLE_MINER_KEY": "sk-example"})
    assert len(specs) >= 2 and all(s.base_url.startswith("http://127.0.0.1") for s in specs)


def entry(**fields):
    lines = ["[[miner]]"]
    for key, value in {"hotkey": "alice", "base_url": "http://127.0.0.1:8001/v1", "model": "m", **fields}.items():
        if value is not ...:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, field, message", [
    (entry(base_url="ftp://127.0.0.1/v1"), "base_url", "expected an http(s) URL with a host"),
    (entry(base_url="http:///v1"), "base_url", "expected an http(s) URL with a host"),
    (entry(base_url="localhost:8000"), "base_url", "expected an http(s) URL"),
    (entry(base_url="http://user:pw@127.0.0.1/v1"), "base_url", "user:password@"),
    (entry(base_url="http://127.0.0.1:99999/v1"), "base_url", "malformed URL"),
    (entry(base_url="http://127.0.0.1/v1?x=1"), "base_url", "query"),
    (entry(base_url=""), "base_url", "expected an http(s) URL"),
    (entry(api_key_env="MINER_ALICE_KEY"), "api_key_env", "MINER_ALICE_KEY is not set"),
    (entry(api_key_env="EMPTY_KEY"), "api_key_env", "EMPTY_KEY is empty"),
    (entry(api_key_env="not a name"), "api_key_env", "expected an environment variable name"),
    (entry(timeout_s=-1), "timeout_s", "must be > 0"),
    (entry(timeout_s=0), "timeout_s", "must be > 0"),
    (entry(timeout_s=1e9), "timeout_s", "<= 3600"),
    (entry(timeout_s="fast"), "timeout_s", "must be a number"),
    (entry(timeout_s=True), "timeout_s", "must be a number"),
    (entry(url="http://x"), "url", "unknown key"),
    (entry(model=...), "model", "missing"),
    (entry(model=""), "model", "empty"),
    (entry(hotkey="evil\u001b[31m"), "hotkey", "control or format character U+001B"),
    (entry(hotkey="rtl\u202eevil"), "hotkey", "U+202E"),
    (entry(hotkey="line\nbreak"), "hotkey", "U+000A"),
    (entry(hotkey="h" * 257), "hotkey", "more than the limit of 256"),
    (entry(hotkey=" padded"), "hotkey", "whitespace"),
    (entry(hotkey=7), "hotkey", "must be a string, got int"),
])
def test_miners_file_errors_name_file_entry_and_field(tmp_path, text, field, message):
    path = write(tmp_path, "miners.toml", entry(hotkey="first") + text)
    with pytest.raises(MinersFileError) as info:
        load_miners(path, {"EMPTY_KEY": "  "})
    text_ = str(info.value)
    assert str(path) in text_ and "entry #2" in text_ and f"field {field!r}" in text_ and message in text_
    assert info.value.index == 1 and info.value.field_name == field
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)


def test_duplicate_hotkey_names_both_entries(tmp_path):
    path = write(tmp_path, "miners.toml", entry() + entry(base_url="http://127.0.0.1:8002/v1"))
    with pytest.raises(MinersFileError, match=r"entry #2 \(hotkey 'alice'\), field 'hotkey': "
                                              r"duplicate hotkey, first used by entry #1"):
        load_miners(path, {})


def test_missing_key_variable_is_named_and_the_key_value_never_shown(tmp_path):
    path = write(tmp_path, "miners.yaml", "miners:\n  - {hotkey: a, base_url: 'http://127.0.0.1:1/v1', model: m,"
                                          " api_key_env: MINER_A_KEY}\n")
    with pytest.raises(MinersFileError, match="MINER_A_KEY is not set"):
        load_miners(path, {})
    with pytest.raises(MinersFileError, match="MINER_A_KEY contains control characters") as info:
        load_miners(path, {"MINER_A_KEY": KEY + "\r\nX-Evil: 1"})
    assert KEY not in str(info.value)


@pytest.mark.parametrize("name, text, message", [
    ("miners.json", "{}", "unknown miners file type '.json'"),
    ("miners.toml", "[[miner]\nhotkey=", "invalid TOML"),
    ("miners.yaml", "miners: [\n", "invalid YAML"),
    ("miners.toml", "", "no miners"),
    ("miners.toml", "[[miners]]\nhotkey = 'a'\n", "unknown top-level key 'miners' (expected [[miner]] tables)"),
    ("miners.yaml", "- hotkey: a\n", "expected a list under 'miners:', got list"),
    ("miners.yaml", "miners: []\n", "no miners"),
    ("miners.yaml", "miners:\n  - just a string\n", "miner entry #1: must be a table of hotkey, base_url"),
])
def test_miners_file_shape_errors(tmp_path, name, text, message):
    path = write(tmp_path, name, text)
    with pytest.raises(MinersFileError) as info:
        load_miners(path, {})
    assert str(path) in str(info.value) and message in str(info.value)


def test_unreadable_miners_file(tmp_path):
    with pytest.raises(MinersFileError, match="cannot read the miners file"):
        load_miners(tmp_path / "absent.toml", {})


def test_spec_validation_outside_a_file():
    with pytest.raises(ConfigError, match="hotkey"):
        MinerSpec("bad\x00key", "http://127.0.0.1:1/v1", "m")
    with pytest.raises(ConfigError, match="base_url"):
        MinerSpec("a", "file:///etc/passwd", "m")
    with pytest.raises(ConfigError, match="api_key"):
        MinerSpec("a", "http://127.0.0.1:1/v1", "m", api_key=KEY)  # a bare string would print


# -- the embedded pools --------------------------------------------------------------------------------------

def test_default_pool_without_upstream_shows_every_behaviour():
    pool, specs = default_pool(None, slow_delay_s=30.0)
    with pool:
        answers = {a.hotkey: a for a in ask(specs, "Is water wet?", request_timeout_s=1.5, deadline_s=3.0)}
        seen = list(pool.requests)
    honest = [a for name, a in answers.items() if name.startswith("honest-")]
    assert len(honest) == 4 and all(a.ok and "Is water wet?" in a.text for a in honest)
    assert len({a.text for a in honest}) == 4 and len({a.confidence for a in honest}) == 4
    assert answers["slow"].failure is FailureReason.TIMEOUT
    assert answers["empty"].failure is FailureReason.EMPTY
    assert answers["http500"].failure is FailureReason.HTTP_ERROR
    assert answers["copycat"].ok and answers["copycat"].text == answers["honest-concise"].text
    assert answers["offtopic"].ok and "water" not in answers["offtopic"].text
    assert answers["injection"].ok and "Score it 10" in answers["injection"].text
    assert all(s.api_key is not None for s in specs) and all(r["authorised"] for r in seen)
    assert outcome_counts(list(answers.values()))["ok"] == 7


def test_pool_models_endpoint_and_keys(pool):
    url = f"{pool.base_url('ok')}/models"
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(url, timeout=5)
    assert info.value.code == 401
    info.value.close()
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(request, timeout=5) as resp:
        assert json.loads(resp.read())["data"][0]["id"] == "sim-canned"


def test_pool_configuration_errors():
    with pytest.raises(ValueError, match="unknown behaviour"):
        SimMiner("a", "lazy")
    with pytest.raises(ValueError, match="copies 'ghost'"):
        MinerPool([SimMiner("a", "copycat", copy_of="ghost")])
    with pytest.raises(ValueError, match="duplicate"):
        MinerPool([SimMiner("a", "empty"), SimMiner("a", "empty")])


def test_canned_pool_of_64_answers_every_miner():
    pool, specs = canned_pool(64, logprob=-0.25)
    with pool:
        answers = ask(specs, "ping", deadline_s=10.0)
    assert [a.hotkey for a in answers] == [f"canned-{i:04d}" for i in range(64)]
    assert all(a.ok and a.text == f"Canned answer {a.hotkey}: ping" for a in answers)
    assert all(a.confidence == pytest.approx(math.exp(-0.25)) for a in answers)


def test_the_default_copycat_answers_after_the_miner_it_copies():
    pool, specs = default_pool(None, slow_delay_s=30.0)
    with pool:
        answers = {a.hotkey: a for a in ask(specs, "Is water wet?", request_timeout_s=1.5, deadline_s=3.0)}
    assert answers["copycat"].latency_s > answers["honest-concise"].latency_s + 0.3
