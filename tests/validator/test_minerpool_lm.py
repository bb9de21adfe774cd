"""The embedded default pool for real: honest miners backed by the local LM, one round end to end."""

from __future__ import annotations

import dataclasses
import logging
import time

import pytest

from lm.local import LocalServer
from validator.minerpool import default_pool
from validator.miners import FailureReason, outcome_counts, query_miners

pytestmark = pytest.mark.slow

PROMPT = "What is the capital of France? Answer in one sentence."


@pytest.fixture(scope="module")
def server():
    with LocalServer(parallel=1) as s:
        yield s


def test_one_round_against_the_default_pool(server, caplog):
    caplog.set_level(logging.DEBUG)
    pool, specs = default_pool(server.endpoint.url, upstream_model=server.endpoint.model)
    # the slow miner sleeps far past any timeout; a short timeout of its own keeps the round
    # as long as the honest miners (which queue on the LM's single slot) need
    specs = [dataclasses.replace(s, timeout_s=2.0) if s.hotkey == "slow" else s for s in specs]
    with pool:
        started = time.perf_counter()
        answers = {a.hotkey: a for a in query_miners(PROMPT, specs, request_timeout_s=300.0, deadline_s=420.0,
                                                      max_answer_chars=4000, max_tokens=48)}
        wall = time.perf_counter() - started
        upstream = list(pool.upstream_calls)
    print(f"\nround wall {wall:.1f} s; honest upstream calls "
          + ", ".join(f"{c['miner']} {c['seconds']:.1f} s" for c in upstream))

    honest = {k: a for k, a in answers.items() if k.startswith("honest-")}
    assert len(honest) == 4
    for name, answer in honest.items():
        assert answer.ok, (name, answer.failure, answer.detail)
        assert "paris" in answer.text.lower(), (name, answer.text)
        assert answer.confidence is not None and 0.0 < answer.confidence <= 1.0  # logprobs passed through
        assert answer.completion_tokens and answer.completion_tokens <= 48
    assert len(upstream) == 4 and all(c["ok"] for c in upstream)
    assert answers["copycat"].ok and answers["copycat"].text == honest["honest-concise"].text
    assert answers["offtopic"].ok and "paris" not in answers["offtopic"].text.lower()
    assert answers["injection"].ok and "ignore all previous instructions" in answers["injection"].text
    assert answers["slow"].failure is FailureReason.TIMEOUT
    assert answers["empty"].failure is FailureReason.EMPTY
    assert answers["http500"].failure is FailureReason.HTTP_ERROR
    assert outcome_counts(list(answers.values()))["ok"] == 7
    for spec in specs:
        assert spec.api_key is not None and spec.api_key.get() not in caplog.text
