"""Backoff on HTTP 429 and 5xx in front of the OpenAI client (through a real HTTP fake)."""

from __future__ import annotations

import threading

import pytest

from judge.backoff import Backoff, BackoffClient, status_of
from lm.client import OpenAIChatClient
from lm.config import Endpoint
from lm.errors import LMError
from tests.lm.fake_server import FakeServer


class Script:
    def __init__(self, *steps):
        self.steps = list(steps)
        self.lock = threading.Lock()

    def __call__(self, body):
        with self.lock:
            return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]


def client_for(server, policy=Backoff(), waits=None):
    return BackoffClient(
        OpenAIChatClient(Endpoint(server.url), timeout_s=5),
        policy,
        sleep=(waits.append if waits is not None else lambda s: None),
    )


MSG = [{"role": "user", "content": "hi"}]


def test_429_and_5xx_are_retried_with_growing_waits():
    waits: list[float] = []
    with FakeServer(Script({"status": 429}, {"status": 503}, {"status": 500}, {"text": "ok"})) as server:
        client = client_for(server, Backoff(attempts=5, base_s=1.0, cap_s=3.0), waits)
        assert client.complete(MSG, max_tokens=5).text == "ok"
    assert len(waits) == 3 and client.retries == 3
    assert 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0 and 1.5 <= waits[2] <= 3.0  # base 2^i, cap 3, x0.5..1
    assert client.meter.snapshot()["failures"] == 3 and client.meter.snapshot()["calls"] == 1


def test_retry_after_is_honoured_and_capped():
    waits: list[float] = []
    with FakeServer(
        Script(
            {"status": 429, "headers": {"Retry-After": "7"}},
            {"status": 429, "headers": {"Retry-After": "100"}},
            {"text": "ok"},
        )
    ) as server:
        client_for(server, Backoff(cap_s=30.0), waits).complete(MSG, max_tokens=5)
    assert waits == [7.0, 30.0]


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(status):
    with FakeServer(Script({"status": status}, {"text": "ok"})) as server:
        client = client_for(server)
        with pytest.raises(LMError, match=f"HTTP {status}") as info:
            client.complete(MSG, max_tokens=5)
        assert status_of(info.value) == status and client.retries == 0 and len(server.chat_requests()) == 1


def test_gives_up_after_the_attempts():
    with FakeServer(Script({"status": 503})) as server:
        client = client_for(server, Backoff(attempts=3))
        with pytest.raises(LMError, match="HTTP 503"):
            client.complete(MSG, max_tokens=5)
        assert len(server.chat_requests()) == 3


def test_waits_are_reproducible_with_a_seed():
    policy = Backoff(attempts=4, base_s=1.0, cap_s=8.0)
    runs = []
    for _ in range(2):
        waits: list[float] = []
        with FakeServer(Script({"status": 502})) as server:
            client = BackoffClient(
                OpenAIChatClient(Endpoint(server.url), timeout_s=5), policy, seed=3, sleep=waits.append
            )
            with pytest.raises(LMError):
                client.complete(MSG, max_tokens=5)
        runs.append(waits)
    assert runs[0] == runs[1] and len(runs[0]) == 3


def test_connection_errors_pass_through_at_once():
    client = BackoffClient(OpenAIChatClient(Endpoint("http://127.0.0.1:9/v1"), timeout_s=2), sleep=lambda s: None)
    with pytest.raises(LMError, match="connection"):
        client.complete(MSG, max_tokens=5)
    assert client.retries == 0


def test_status_of_reads_the_message_when_there_is_no_cause():
    assert status_of(LMError("http", "http://x: HTTP 429")) == 429
    assert status_of(LMError("timeout", "HTTP 500")) is None
    with pytest.raises(ValueError):
        Backoff(attempts=0)
