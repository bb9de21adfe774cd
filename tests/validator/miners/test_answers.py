"""Answers by hand: the chat completion parser, the confidence formula, the consensus view, the counts."""

from __future__ import annotations

import json
import math

import pytest

from consensus.types import Response
from validator.miners import (
    FailureReason,
    MinerAnswer,
    logprob_confidence,
    outcome_counts,
    parse_chat_completion,
    to_response,
)


def body(content=None, **message):
    msg = {"role": "assistant", **({"content": content} if content is not ... else {}), **message}
    return json.dumps({"choices": [{"index": 0, "message": msg}]}).encode()


@pytest.mark.parametrize(
    "raw, reason, detail",
    [
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
    ],
)
def test_payload_validation(raw, reason, detail):
    answer = parse_chat_completion("m", raw, 0.5, max_answer_chars=10)
    assert answer.failure is reason and detail in answer.detail and answer.text == ""
    assert answer.latency_s == 0.5


def test_payload_at_the_cap_is_accepted_as_is():
    answer = parse_chat_completion("m", body(" y" * 5), 0.1, max_answer_chars=10)
    assert answer.ok and answer.text == " y" * 5


@pytest.mark.parametrize(
    "logprobs, expected",
    [
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
    ],
)
def test_logprob_confidence_by_hand(logprobs, expected):
    value = logprob_confidence(logprobs)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected) and 0.0 <= value <= 1.0


def test_confidence_and_usage_come_from_the_body():
    raw = json.dumps(
        {
            "choices": [
                {
                    "message": {"content": "Yes."},
                    "logprobs": {"content": [{"token": "Yes", "logprob": -0.2}, {"token": ".", "logprob": 0.0}]},
                }
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 2},
        }
    ).encode()
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


def test_a_failure_keeps_the_entity():
    bad = MinerAnswer("b", "", 1.0, failure=FailureReason.HTTP_ERROR, entity="coldkey-5F3s")
    assert to_response(bad) == Response("b", "", 1.0, error="http_error", entity="coldkey-5F3s")
    answer = parse_chat_completion("m", b"not json", 0.5, max_answer_chars=10, entity="10.0.0.7")
    assert answer.entity == "10.0.0.7" and to_response(answer).entity == "10.0.0.7"
