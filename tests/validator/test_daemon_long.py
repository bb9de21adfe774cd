"""The default daemon left running (issue 46): the embedded defaults, the simulated miner pool, 100 rounds.

The README's first command runs the daemon on the embedded pool: four honest miners of one model (personas of
one LM) and six misbehaving ones, a copycat among them. Alike round after round, the honest miners are linked
(``consensus.identity``); a link only steers the draw and is shown, so none of them is ever removed as a copy,
consensus is reached in nearly every round and the copycat earns less than every honest miner.

CI runs it on the pool's canned honest answers (no LM: the pool's own LM makes a round take 10-20 s on two
cores); the run with the LM on is recorded in docs/validity.md, "Same-model miners". README's default daemon asks a
task in every round: the second test mixes task rounds in, the honest miners forwarding to a small exact solver. Real parts: the MiniLM
embedder, the pool's HTTP server on loopback, the product's miner client and daemon, a store in memory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import json
import re
import threading
import time
from collections.abc import Iterator

import pytest

from minerpool import PERSONAS, default_pool
from minerpool.personas import HONEST_CANNED, is_task_prompt
from minerpool.wire import completion
from storage import keys
from storage.memory import MemoryStore
from validator.daemon.daemon import Daemon
from validator.daemon.task_source import TaskSource
from validator.miners import MinerSpec
from validator.miners.query import miners_query
from validator.round.prompt_source import load_prompts
from validator.settings import load_settings

ROUNDS = 100
TASK_ROUNDS = 40  # 1.5 s a round on the shared 2-core host (load 8), 0.25 s of it CPU: 100 would add 150 s to CI
HONEST = tuple(p.name for p in PERSONAS)


def _honest_copies(records):
    """(round, miner, detail) of every honest answer the stored evaluations removed as a copy."""
    return [
        (rec["round_id"], x["miner"], x["detail"])
        for rec in records
        for x in rec["responses"]
        if x["miner"] in HONEST and x["reason"] == "copy"
    ]


def _settings():
    """The embedded defaults without the LM and the heatmaps, ticks back to back."""
    env = {"VALIDATOR_DAEMON__INTERVAL_S": "0", "VALIDATOR_LM__ENABLED": "false", "VALIDATOR_OUTPUT__HEATMAP": "false"}
    return load_settings(None, env=env, dotenv_path=None)


@pytest.mark.slow
def test_the_default_daemon_keeps_paying_its_honest_miners_for_100_rounds(real_embedder):
    settings = _settings()
    store = MemoryStore()
    pool, addresses = default_pool(None, slow_delay_s=30.0)
    began = time.perf_counter()
    with pool:
        # the embedded network's timeouts, shorter: the slow miner gives up after 1 s instead of 10
        specs = [MinerSpec.of(a) for a in addresses]
        specs = [dataclasses.replace(s, timeout_s=1.0 if s.hotkey == "slow" else 20.0) for s in specs]
        assert {s.hotkey for s in specs} >= set(HONEST) | {"copycat"}
        daemon = Daemon(
            store=store,
            embedder=real_embedder,
            settings=settings,
            prompts=load_prompts(None),
            query=miners_query(specs, settings),
            secret=b"issue-46-default-daemon",
        )
        reports = daemon.run(rounds=ROUNDS)
    seconds = time.perf_counter() - began
    assert len(reports) == ROUNDS
    records = [json.loads(store.get(keys.evaluation(r.round_id))) for r in reports]
    reached = sum(r.reached for r in reports)
    honest_copies = _honest_copies(records)
    assert not honest_copies, honest_copies[:3]
    assert reached >= 0.95 * ROUNDS, f"consensus in {reached} of {ROUNDS} rounds"
    assert all(r.paid > 0 for r in reports if r.reached), "a round reached consensus and paid nobody"
    weights = daemon.ledger.weights()
    assert all(weights[h] > weights.get("copycat", 0.0) for h in HONEST), weights
    units = {m: t.emissions for m, t in daemon.ledger.miners.items()}
    assert all(units[h] > units.get("copycat", 0) for h in HONEST), units
    # the wall time CI pays for this test (the budget: a few minutes on two cores)
    print(f"{ROUNDS} rounds in {seconds:.0f} s; consensus in {reached}; weights {weights}")


# -- the same with task rounds: README's default daemon asks a task in every round -------------------------------------
# Half the rounds ask a generated task ([tasks] share 0.5 beside the built-in prompts). CI cannot afford the pool's
# 0.5B LM (10-14 s a round on two cores), so the honest miners forward, as they do to it, to a small solver on
# loopback: it reads the persona (the system prompt) and the question, works the default families out exactly and
# errs now and then (a near miss, seeded per miner and question); an open prompt gets the persona's canned text.
# What runs for real: the pool (personas, task personas, the copycat), the product's client, the daemon's task path
# (verifier, copies, identity links, ledger) and MiniLM.
RIGHT = (0.9, 0.8, 0.75, 0.7)  # each honest persona's chance of a right answer (the 0.5B miners: 0.4-0.9)
WORKING = (  # each persona's working, in words of its own (the copycat's verbatim copy of it is a copy)
    "This asks for {what}; combining the numbers in order gives {a}, which is the result.\nAnswer: {a}",
    "Step one: write down {what}.\nStep two: work through each number carefully, keeping every sign.\n"
    "Step three: the total comes to {a}.\nAnswer: {a}",
    "Computing {what} gives {a}; checking by reversing the operation returns the starting numbers, so it holds.\n"
    "Answer: {a}",
    "Working, one operation per line:\n{what} -> {a}\nChecked twice by hand before sending it.\nAnswer: {a}",
)
_SUM = re.compile(r"\d+(?:\s*[-+]\s*\d+)+")
_EQUATION = re.compile(r"([A-Za-z0-9+\- *]+)=\s*(-?\d+)\s*\.?$")


def solve(question: str) -> tuple[str, int]:
    """(what is computed, its value) for a question of the default families (arithmetic; ``x + a = b``)."""
    m = _EQUATION.search(question.strip())
    if m and re.search(r"[a-z]", m.group(1).split(":")[-1]):
        left = m.group(1).split(":")[-1].strip()
        return f"the unknown in {left} = {m.group(2)}", int(m.group(2)) - sum(
            int(x) for x in re.findall(r"(?<![A-Za-z])\d+", left)
        )
    expr = _SUM.search(question)
    assert expr is not None, question
    terms = re.findall(r"[-+]?\s*\d+", expr.group(0))
    return expr.group(0), sum(int(t.replace(" ", "")) for t in terms)


def test_the_solver_works_the_default_families_out():
    from tasks.source import DEFAULT_CONFIGS, DEFAULT_FAMILIES, TaskSpec, generate

    for family in DEFAULT_FAMILIES:
        for seed in range(50):
            task = generate(TaskSpec(family, seed, DEFAULT_CONFIGS[family]))
            assert str(solve(task.question)[1]) == task.answer, task.question


def solver_reply(system: str, prompt: str) -> str:
    k = next(i for i, p in enumerate(PERSONAS) if system.startswith(p.task if is_task_prompt(prompt) else p.system))
    if not is_task_prompt(prompt):
        return HONEST_CANNED[k].replace("{prompt}", prompt.strip()[:200])
    question = prompt.split("\n\n")[0]
    what, value = solve(question)
    draw = int.from_bytes(hashlib.sha256(f"{PERSONAS[k].name}:{question}".encode()).digest()[:4], "big") / 2**32
    return WORKING[k].format(what=what, a=value if draw < RIGHT[k] else value + 1)


@pytest.fixture
def solver_url() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
            reply = solver_reply(system, body["messages"][-1]["content"])
            data = json.dumps(completion("solver", reply)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_default_daemon_keeps_paying_its_honest_miners_on_task_rounds(real_embedder, solver_url):
    settings = _settings()
    store = MemoryStore()
    secret = b"issue-46-default-daemon-tasks"
    pool, addresses = default_pool(solver_url, upstream_model="solver", slow_delay_s=30.0)
    began = time.perf_counter()
    with pool:
        specs = [MinerSpec.of(a) for a in addresses]
        # the slow miner gives up after 0.6 s: the copycat answers 0.5 s after its source, so a round lasts that long anyway
        specs = [dataclasses.replace(s, timeout_s=0.6 if s.hotkey == "slow" else 20.0) for s in specs]
        daemon = Daemon(
            store=store,
            embedder=real_embedder,
            settings=settings,
            prompts=load_prompts(None),
            query=miners_query(specs, settings),
            secret=secret,
            tasks=TaskSource(settings.tasks, secret, every_round=False),
        )
        reports = daemon.run(rounds=TASK_ROUNDS)
    seconds = time.perf_counter() - began
    records = [json.loads(store.get(keys.evaluation(r.round_id))) for r in reports]
    tasks = [rec for rec in records if rec.get("task")]
    assert TASK_ROUNDS // 4 <= len(tasks) <= 3 * TASK_ROUNDS // 4  # both kinds of round ran
    honest_copies = _honest_copies(records)
    assert not honest_copies, honest_copies[:3]
    reached = sum(r.reached for r in reports)
    assert reached >= 0.95 * TASK_ROUNDS, f"consensus in {reached} of {TASK_ROUNDS} rounds"
    assert all(r.paid > 0 for r in reports if r.reached), "a round reached consensus and paid nobody"
    # on a task round the copycat's copy of the concise miner's working is a copy, whatever its answer
    copycat = [next(x for x in rec["responses"] if x["miner"] == "copycat") for rec in tasks]
    assert all(x["reason"] == "copy" for x in copycat), {x["reason"] for x in copycat}
    weights = daemon.ledger.weights()
    assert all(weights[h] > weights.get("copycat", 0.0) for h in HONEST), weights
    units = {m: t.emissions for m, t in daemon.ledger.miners.items()}
    assert all(units[h] > units.get("copycat", 0) for h in HONEST), units
    print(f"{TASK_ROUNDS} rounds ({len(tasks)} tasks) in {seconds:.0f} s; consensus in {reached}; weights {weights}")
