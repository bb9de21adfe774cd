"""The client against real loopback servers: every failure mode, latency, the deadline, keys that never leak."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import time

import pytest

from consensus.types import Round
from lm.config import Secret
from lm.embedded import free_port
from tests.validator.miners.support import KEY, LIMITS, ask, one, specs_of
from validator.miners import FailureReason, MinerSpec, outcome_counts, query_miners_async, to_response
from validator.records.round_input import round_to_json

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
    assert seen["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Why is the sky blue?"},
    ]


def test_no_confidence_without_logprobs(pool):
    assert one(pool, "plain").confidence is None
    assert one(pool, "ok", logprobs=False).confidence is None


@pytest.mark.parametrize(
    "name, reason, detail",
    [
        ("empty", FailureReason.EMPTY, "answer is empty"),
        ("blank", FailureReason.EMPTY, "only whitespace"),
        ("http500", FailureReason.HTTP_ERROR, "HTTP 500"),
        ("malformed", FailureReason.MALFORMED_PAYLOAD, "not valid JSON"),
        ("nontext-list", FailureReason.NON_TEXT, "content is a list"),
        ("nontext-number", FailureReason.NON_TEXT, "content is a int"),
        ("oversized", FailureReason.OVERSIZED, "stopped reading"),
        ("long", FailureReason.OVERSIZED, "5,000 characters"),
    ],
)
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
    assert outcome_counts(answers) == {
        "ok": 2,
        "timeout": 1,
        "connection_refused": 0,
        "http_error": 1,
        "malformed_payload": 1,
        "empty": 1,
        "oversized": 0,
        "non_text": 0,
        "deadline": 0,
        "refused": 0,
    }


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
    assert {a.failure for a in answers} >= {
        None,
        FailureReason.TIMEOUT,
        FailureReason.HTTP_ERROR,
        FailureReason.CONNECTION_REFUSED,
    }
    responses = tuple(to_response(a) for a in answers)
    record = json.dumps(round_to_json(Round("r-1", "Why is the sky blue?", responses)))
    for text in (
        caplog.text,
        repr(answers),
        repr(specs),
        str(specs),
        repr(responses),
        record,
        " ".join(a.detail for a in answers),
    ):
        assert KEY not in text
    assert caplog.text  # the query did log
    with pytest.raises(TypeError):
        dataclasses.asdict(specs[0])  # a Secret refuses to be serialised


# -- the payload, by hand ---------------------------------------------------------------------------------


# -- query arguments ------------------------------------------------------------------------------------------


def test_no_miners_no_answers():
    assert ask([]) == []


def test_limits_must_be_a_query_limits_value():
    with pytest.raises(TypeError, match="QueryLimits"):
        asyncio.run(query_miners_async("Why?", [], {"request_timeout_s": 1.0}))


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
    answers = asyncio.run(query_miners_async("Why?", specs_of([pool.spec("ok"), pool.spec("http500")]), LIMITS))
    assert answers[0].ok and answers[1].failure is FailureReason.HTTP_ERROR


def test_the_entity_travels_from_the_spec_to_the_response(pool):
    answers = ask([pool.spec("ok"), pool.spec("plain"), dataclasses.replace(pool.spec("http500"), entity="op-b")])
    assert [a.entity for a in answers] == ["operator-a", None, "op-b"]
    assert [to_response(a).entity for a in answers] == ["operator-a", None, "op-b"]
