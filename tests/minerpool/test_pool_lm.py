"""The embedded default pool for real: honest miners backed by the local LM, one round end to end."""

from __future__ import annotations

import dataclasses
import difflib
import logging
import time

import pytest

from lm.embedded import LocalServer
from minerpool import PERSONAS, MinerPool, SimMiner, default_pool
from tests.validator.miners.support import specs_of
from validator.miners import FailureReason, QueryLimits, outcome_counts, query_miners
from validator.settings import load_settings

pytestmark = pytest.mark.slow

PROMPT = "What is the capital of France? Answer in one sentence."
# the daemon's embedded limits (validator/cli/daemon.py): short answers, room for the LM queue
LIMITS = QueryLimits(request_timeout_s=300.0, deadline_s=420.0, max_answer_chars=4000, max_tokens=48)


@pytest.fixture(scope="module")
def server(local_lm):
    """The validator's embedded LM (the session's, tests/conftest.py), which the default pool forwards to."""
    return local_lm


def test_one_round_against_the_default_pool(server, caplog):
    caplog.set_level(logging.DEBUG)
    pool, specs = default_pool(server.endpoint.url, upstream_model=server.endpoint.model)
    # the slow miner sleeps far past any timeout; a short timeout of its own keeps the round
    # as long as the honest miners (which queue on the LM's single slot) need
    specs = [dataclasses.replace(s, timeout_s=2.0) if s.hotkey == "slow" else s for s in specs]
    with pool:
        started = time.perf_counter()
        answers = {a.hotkey: a for a in query_miners(PROMPT, specs_of(specs), LIMITS)}
        wall = time.perf_counter() - started
        upstream = list(pool.upstream_calls)
    print(
        f"\nround wall {wall:.1f} s; honest upstream calls "
        + ", ".join(f"{c['miner']} {c['seconds']:.1f} s" for c in upstream)
    )

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


@pytest.fixture(scope="module")
def pool_server():
    """The pool's own LM, as the embedded network runs it (``POOL_MODEL``, one slot, ``POOL_THREADS``)."""
    from minerpool.embedded import POOL_MODEL, POOL_THREADS

    with LocalServer(POOL_MODEL, parallel=1, cache_dir=load_settings().paths.cache, threads=POOL_THREADS) as s:
        yield s


def test_two_honest_miners_given_the_same_prompt_answer_in_their_own_words(pool_server):
    # the same persona for both, so only their own seed and temperature tell them apart:
    # independent miners running one model must not come out as copies of each other
    persona = PERSONAS[1].system
    miners = [SimMiner(name, "honest", persona=persona, max_tokens=64) for name in ("honest-a", "honest-b")]
    assert miners[0].temperature != miners[1].temperature and miners[0].seed != miners[1].seed
    prompt = "Is Python's list type mutable? Answer yes or no and explain in two sentences."
    endpoint = pool_server.endpoint
    with MinerPool(miners, upstream_url=endpoint.url, upstream_model=endpoint.model) as pool:
        a, b = query_miners(prompt, specs_of(pool.specs()), dataclasses.replace(LIMITS, max_tokens=64))
    assert a.ok and b.ok, (a.detail, b.detail)
    assert a.text != b.text
    ratio = difflib.SequenceMatcher(None, a.text.lower().split(), b.text.lower().split(), autojunk=False).ratio()
    assert ratio < 0.85, (ratio, a.text, b.text)  # below the copy filter's bar (consensus.stages.COPY_TEXT_RATIO)


def test_the_embedded_network_gives_the_honest_miners_an_lm_of_their_own():
    from lm.config import LMConfig
    from minerpool.embedded import POOL_MODEL, embedded_network

    config = LMConfig(local_cache_dir=str(load_settings().paths.cache))
    with embedded_network(config, validator_lm=False) as (specs, endpoint):  # only the pool's LM starts
        answers = {a.hotkey: a for a in query_miners(PROMPT, specs_of(specs), LIMITS)}
    assert endpoint is None
    honest = [answers[p.name] for p in PERSONAS]
    assert all(a.ok and "paris" in a.text.lower() for a in honest), [(a.hotkey, a.detail, a.text) for a in honest]
    assert POOL_MODEL.name.startswith("qwen2.5-coder-0.5b")


def test_the_honest_miners_work_a_task_out_before_its_answer_line(pool_server):
    # README's default daemon asks tasks: each honest miner shows its persona's worked tasks and writes its own
    # working before the answer line (minerpool.personas); the 0.5B model answering `Answer: <a guess>` at once
    # was right on 0.35-0.47 of 200 tasks, with the worked tasks on 0.62-0.86 (benchmarks/journal/validity.md)
    from minerpool.embedded import MAX_TOKENS
    from minerpool.networks import default_miners
    from tasks.source import DEFAULT_CONFIGS, TaskSpec, generate
    from tasks.verify import verify

    miners = [m for m in default_miners(max_tokens=MAX_TOKENS, keys=False) if m.behaviour == "honest"]
    tasks = [generate(TaskSpec(f, 11, DEFAULT_CONFIGS[f])) for f in ("basic_arithmetic", "simple_equations")]
    endpoint = pool_server.endpoint
    replies = []
    with MinerPool(miners, upstream_url=endpoint.url, upstream_model=endpoint.model) as pool:
        for task in tasks:
            answers = query_miners(task.prompt, specs_of(pool.specs()), dataclasses.replace(LIMITS, max_tokens=200))
            replies += [(task, a) for a in answers]
    assert all(a.ok for _, a in replies), [a.detail for _, a in replies]
    worked = [a.text for _, a in replies if "\nAnswer:" in a.text and a.text.index("\nAnswer:") > 0]
    assert len(worked) >= 6, [a.text for _, a in replies]  # working, then the answer line, in most replies
    right = sum(verify(task, a.text).right for task, a in replies)
    assert right >= 4, [(task.answer, a.text) for task, a in replies]
