"""The embedded pools without an LM: every behaviour of the default network, keys, the canned pool."""

from __future__ import annotations

import dataclasses
import json
import math
import urllib.error
import urllib.request

import pytest

from minerpool import PERSONAS, MinerPool, SimMiner, canned_pool, default_miners, default_pool, honest_sampling
from minerpool.personas import (
    TASK_TEMPERATURE_HIGH,
    TASK_TEMPERATURE_LOW,
    TEMPERATURE_HIGH,
    TEMPERATURE_LOW,
    is_task_prompt,
    task_temperature,
)
from minerpool.sim import Call
from minerpool.upstream import upstream_request
from tasks.source import DEFAULT_CONFIGS, DEFAULT_FAMILIES, TaskSpec, generate, prompt_of
from tests.validator.miners.support import KEY, ask
from validator.miners import FailureReason, outcome_counts
from validator.round.prompt_source import load_prompts

# -- the embedded pools --------------------------------------------------------------------------------------


# request_timeout_s=1.2: the slow miner (30 s) times out, the copycat (0.5 s behind the miner it copies)
# answers; every query of these tests lasts that long
@pytest.fixture(scope="module")
def default_round():
    """One query of the default pool without upstream (shared: the tests below read the same round)."""
    pool, specs = default_pool(None, slow_delay_s=30.0)
    with pool:
        answers = {a.hotkey: a for a in ask(specs, "Is water wet?", request_timeout_s=1.2, deadline_s=2.4)}
        seen = list(pool.requests)
    return specs, answers, seen


def test_default_pool_without_upstream_shows_every_behaviour(default_round):
    specs, answers, seen = default_round
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


def test_the_default_copycat_answers_after_the_miner_it_copies(default_round):
    _, answers, _ = default_round
    assert answers["copycat"].latency_s > answers["honest-concise"].latency_s + 0.3


# -- honest miners sample independently ------------------------------------------------------------------------


def test_honest_sampling_is_fixed_per_miner_and_differs_between_miners():
    names = [p.name for p in PERSONAS] + [f"honest-{i}" for i in range(60)]
    sampling = [honest_sampling(n) for n in names]
    assert sampling == [honest_sampling(n) for n in names]  # deterministic
    assert len({seed for seed, _ in sampling}) == len(names)
    assert all(0 <= seed < 2**31 and TEMPERATURE_LOW <= t <= TEMPERATURE_HIGH for seed, t in sampling)
    assert len({t for _, t in sampling[:4]}) == 4  # the default honest miners all sample differently
    assert len({t for _, t in sampling}) > 10


def test_a_simminer_takes_its_sampling_from_its_name_unless_told():
    miner = SimMiner("honest-x", "honest")
    assert (miner.seed, miner.temperature) == honest_sampling("honest-x")
    told = SimMiner("honest-x", "honest", seed=5, temperature=0.0)
    assert (told.seed, told.temperature) == (5, 0.0)


def test_each_honest_miner_sends_its_own_persona_seed_and_temperature_upstream():
    # the upstream is itself a pool miner, which records what it was sent
    with MinerPool([SimMiner("lm", "canned", text="Upstream answer to {prompt}.", logprob=-0.1)]) as upstream:
        pool, specs = default_pool(upstream.base_url("lm"), upstream_model="m", slow_delay_s=30.0)
        with pool:
            answers = {a.hotkey: a for a in ask(specs, "Is water wet?", request_timeout_s=1.2, deadline_s=2.4)}
        sent = [r for r in upstream.requests if r["miner"] == "lm"]
    assert len(sent) == 4 and all(answers[p.name].ok for p in PERSONAS)
    by_persona = {r["messages"][0]["content"]: r for r in sent}
    for persona in PERSONAS:
        seed, temperature = honest_sampling(persona.name)
        assert by_persona[persona.system]["sampling"] == {"temperature": temperature, "seed": seed}
        assert by_persona[persona.system]["messages"][-1] == {"role": "user", "content": "Is water wet?"}
    assert answers["copycat"].text == answers["honest-concise"].text


def test_honest_miners_are_split_over_several_upstream_servers_in_a_fixed_order():
    with (
        MinerPool([SimMiner("lm", "canned", text="A {prompt}.")]) as first,
        MinerPool([SimMiner("lm", "canned", text="B {prompt}.")]) as second,
    ):
        pool, specs = default_pool([first.base_url("lm"), second.base_url("lm")], upstream_model="m", slow_delay_s=30.0)
        with pool:
            answers = {a.hotkey: a for a in ask(specs, "Is water wet?", request_timeout_s=1.2, deadline_s=2.4)}
        by_server = [{r["messages"][0]["content"] for r in up.requests if r["miner"] == "lm"} for up in (first, second)]
    # honest miner k (the pool's order) goes to server k mod 2: two each, every answer from its own server
    assert by_server == [{p.system for p in PERSONAS[0::2]}, {p.system for p in PERSONAS[1::2]}]
    assert [answers[p.name].text[0] for p in PERSONAS] == ["A", "B", "A", "B"]


def test_task_prompts_are_told_from_open_prompts():
    tasks = [generate(TaskSpec(f, seed, DEFAULT_CONFIGS[f])).prompt for f in DEFAULT_FAMILIES for seed in range(5)]
    assert all(is_task_prompt(t) for t in tasks)
    assert not any(is_task_prompt(p.prompt) for p in load_prompts(None))
    assert not is_task_prompt("What is 2 + 2? Answer: 4 is what I expect.")


def test_task_temperatures_are_low_fixed_per_miner_and_differ_between_the_default_miners():
    names = [p.name for p in PERSONAS] + [f"honest-{i}" for i in range(60)]
    temperatures = [task_temperature(n) for n in names]
    assert temperatures == [task_temperature(n) for n in names]
    assert all(TASK_TEMPERATURE_LOW <= t <= TASK_TEMPERATURE_HIGH < TEMPERATURE_LOW for t in temperatures)
    assert len(set(temperatures[:4])) == 4
    assert SimMiner("honest-x", "honest").task_temperature == task_temperature("honest-x")
    assert SimMiner("honest-x", "honest", task_temperature=0.0).task_temperature == 0.0


def test_every_persona_has_a_task_persona_of_its_own_that_asks_for_the_answer_line_last():
    tasks = [p.task for p in PERSONAS]
    assert len(set(tasks)) == len(PERSONAS) and all(tasks)
    assert all(t.endswith('Then end with the last line "Answer: <the number>".') for t in tasks)
    assert {m.task_persona for m in default_miners() if m.behaviour == "honest"} == set(tasks)
    # three worked tasks each (a difference below zero, a chain, an equation), right, the answer line last
    for p in PERSONAS:
        assert [reply.rsplit("\nAnswer: ", 1)[1] for _, reply in p.examples] == ["-38", "21", "77"]
    assert len({reply for p in PERSONAS for _, reply in p.examples}) == 3 * len(PERSONAS)


def test_an_honest_miner_answers_a_task_with_its_task_persona_and_temperature():
    example = (("Calculate 1 + 2.", "1 + 2 = 3\nAnswer: 3"),)
    miner = SimMiner(
        "honest-a", "honest", persona="Be brief.", task_persona="Work it out.", task_examples=example, max_tokens=50
    )
    task = generate(TaskSpec("chain_sum", 7, DEFAULT_CONFIGS["chain_sum"])).prompt
    messages = [{"role": "user", "content": task}]
    request = upstream_request(miner, Call(miner, None, {}, messages, task), "m")
    assert request["messages"] == [
        {"role": "system", "content": "Work it out."},
        {"role": "user", "content": prompt_of("Calculate 1 + 2.")},
        {"role": "assistant", "content": "1 + 2 = 3\nAnswer: 3"},
        *messages,
    ]
    assert request["temperature"] == miner.task_temperature != miner.temperature
    assert request["seed"] == miner.seed
    # an open prompt keeps the persona and its temperature; a miner without a task persona uses them on tasks too
    open_call = Call(miner, None, {}, [{"role": "user", "content": "Q?"}], "Q?")
    assert upstream_request(miner, open_call, "m")["messages"][0]["content"] == "Be brief."
    assert len(upstream_request(miner, open_call, "m")["messages"]) == 2  # no examples
    plain = dataclasses.replace(miner, task_persona="")
    request = upstream_request(plain, Call(plain, None, {}, messages, task), "m")
    assert (request["messages"][0]["content"], request["temperature"]) == ("Be brief.", plain.temperature)
    assert len(request["messages"]) == 2


def test_the_upstream_request_is_built_from_the_miner_and_the_call():
    miner = SimMiner("honest-a", "honest", persona="Be brief.", max_tokens=50)
    call = Call(
        miner,
        None,
        {"max_tokens": 400, "logprobs": True},
        [{"role": "system", "content": "Validator says hi."}, {"role": "user", "content": "Q?"}],
        "Q?",
    )
    request = upstream_request(miner, call, "model-x")
    assert request == {
        "model": "model-x",
        "max_tokens": 50,
        "temperature": miner.temperature,
        "seed": miner.seed,
        "logprobs": True,
        "messages": [
            {"role": "system", "content": "Be brief.\n\nValidator says hi."},
            {"role": "user", "content": "Q?"},
        ],
    }
    assert call.body == {"max_tokens": 400, "logprobs": True}  # input not modified


def test_the_embedded_network_forwards_to_an_external_server_with_the_daemons_timeouts():
    from lm.config import Endpoint, LMConfig
    from minerpool.embedded import HONEST_TIMEOUT_S, MAX_TOKENS, SLOW_TIMEOUT_S, embedded_network

    # the slow miner's own timeout (SLOW_TIMEOUT_S) outlasts the query: deadline_s ends it
    with MinerPool([SimMiner("lm", "canned", text="External answer to {prompt}.")]) as external:
        config = LMConfig(endpoint=Endpoint(url=external.base_url("lm"), model="big-model"))
        with embedded_network(config) as (specs, endpoint):
            answers = {
                a.hotkey: a for a in ask(specs, "Is water wet?", request_timeout_s=1.2, deadline_s=1.5, max_tokens=500)
            }
        sent = [r for r in external.requests if r["miner"] == "lm"]
    assert endpoint is None  # nothing was started for the validator
    assert {s.hotkey: s.timeout_s for s in specs} == {
        **{p.name: HONEST_TIMEOUT_S for p in PERSONAS},
        "slow": SLOW_TIMEOUT_S,
        "empty": HONEST_TIMEOUT_S,
        "copycat": HONEST_TIMEOUT_S,
        "offtopic": HONEST_TIMEOUT_S,
        "http500": HONEST_TIMEOUT_S,
        "injection": HONEST_TIMEOUT_S,
    }
    assert all(answers[p.name].text == "External answer to Is water wet?." for p in PERSONAS)
    assert len(sent) == 4 and all(r["max_tokens"] == MAX_TOKENS for r in sent)  # the pool's cap


def test_the_copycat_copies_this_round_s_answer_not_an_earlier_round_s():
    # prompts repeat: the copycat used to send the answer its source gave to the same prompt rounds before, at
    # once, arriving first (by the validator's clock the source); it now waits for this round's answer
    pool, specs = default_pool(None, slow_delay_s=30.0)
    with pool:
        for _ in range(2):
            answers = {a.hotkey: a for a in ask(specs, "Is water wet?", request_timeout_s=1.2, deadline_s=2.4)}
            assert answers["copycat"].ok and answers["copycat"].text == answers["honest-concise"].text
            assert answers["copycat"].received_s > answers["honest-concise"].received_s + 0.4


def test_a_copier_asking_after_an_earlier_round_s_answer_waits_for_the_fresh_one(monkeypatch):
    import asyncio

    from minerpool import copies

    monkeypatch.setattr(copies, "FRESH_S", 0.01)
    messages = [{"role": "user", "content": "Is water wet?"}]

    async def run():
        board = copies.CopyBoard({"src"})
        board.publish("src", messages, {"round": 1})
        assert board.slot(messages, "src", fresh=True).result() == {"round": 1}  # this round's: taken at once
        await asyncio.sleep(0.05)
        waiting = board.slot(messages, "src", fresh=True)  # the next round: round 1's answer is stale
        assert not waiting.done()
        board.publish("src", messages, {"round": 2})
        assert (await waiting) == {"round": 2}
        board.close()

    asyncio.run(run())
