"""Stores for the report and notebook tests: replayed rounds with hostile miner ids and texts, a daemon store.

Everything is evaluated for real (the session embedder, ``validator.replaying.replay_run.replay_file``,
``validator.daemon.daemon.Daemon``), so the records have the exact shape the report reads.
"""

from __future__ import annotations

import json
from pathlib import Path

from storage import LocalStore
from validator.daemon.daemon import Daemon
from validator.miners.fake import FakeMiners
from validator.replaying.replay_run import replay_file
from validator.round.prompt_source import PromptItem
from validator.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "rounds.jsonl"

SCRIPT_MINER = "<script>window.__pwned = 'miner'</script>"
HOSTILE_MINERS = (
    SCRIPT_MINER,
    "../../etc/passwd",
    "\"quoted\" & 'single' <b>bold</b>",
    "percent%2E%2Fsegment",
    "ünïcødé-矿工-\u202eevil",
    "lone\ud800surrogate",
)
SCRIPT_TEXT = "<script>window.__pwned = 'text'</script>Yes, Python lists are mutable."
HOSTILE_TEXTS = (
    SCRIPT_TEXT,
    "Yes. Lists are mutable: <img src=x onerror=\"window.__pwned='img'\"> elements change in place.",
    "Yes - a Python list is mutable {{ 7*7 }}; items can be reassigned, added or deleted.",
    "Yes, lists in Python are mutable, so you can modify their elements after creating them.",
    "</div></article><svg onload=\"window.__pwned='svg'\"></svg> Tuples are immutable; lists are not.",
    "Yes. Lists are mutable objects in Python, unlike tuples, so they can be modified in place.",
)
HOSTILE_ROUND = "evil/<i>round</i>/../x"
HOSTILE_PROMPT = "<b>Is</b> Python's list type mutable? <script>window.__pwned='prompt'</script>"


def hostile_round() -> dict:
    return {
        "round_id": HOSTILE_ROUND,
        "prompt": HOSTILE_PROMPT,
        "reference": "<em>yes</em>",
        "responses": [
            {"miner": m, "text": t, "latency_s": 0.5 + i / 10, "confidence": 0.9}
            for i, (m, t) in enumerate(zip(HOSTILE_MINERS, HOSTILE_TEXTS))
        ],
    }


def example_rounds(limit: int | None = None) -> list[dict]:
    lines = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines if limit is None else lines[:limit]


def replay(out: Path, rounds: list[dict], embedder) -> Path:
    """Evaluate ``rounds`` into the local store ``out`` (as `validator replay FILE --out out` does)."""
    out.mkdir(parents=True, exist_ok=True)
    source = out.parent / f"{out.name}.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rounds), encoding="utf-8")
    settings = load_settings(None, env={}, dotenv_path=None)
    summary = replay_file(source, LocalStore(out), settings, embedder)
    assert not summary.failures, summary.failures
    return out


def examples_store(tmp_path_factory, embedder) -> Path:
    """The examples plus the hostile round, replayed once per test session (shared by every module)."""
    out = tmp_path_factory.getbasetemp() / "report-examples-store"
    done = out / ".complete"
    if not done.exists():
        replay(out, example_rounds() + [hostile_round()], embedder)
        done.write_text("ok")
    return out


ANSWERS = {
    "alice": "Yes. Python lists are mutable: you can change, append and remove elements in place.",
    "bob": "Yes, lists in Python are mutable, so their elements can be modified after creation.",
    "<script>window.__pwned='daemon'</script>": "Yes - a Python list is a mutable sequence; items can change.",
    "dave": "Yes. Lists are mutable objects in Python, unlike tuples, so you can modify them in place.",
}


def daemon_store(out: Path, embedder, rounds: int = 3) -> Path:
    """A daemon store: round 2 has one failure, round 3 is below quorum (3 of 4 miners down)."""
    # the second prompt is a placeholder the answers are not about: the relevance gate would find every answer
    # off topic under the fake embedder (tests/consensus/test_relevance.py tests the gate)
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_DAEMON__QUORUM": "2",
        "VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE": "false",
    }
    settings = load_settings(None, env=env, dotenv_path=None)
    miners = list(ANSWERS)
    failing = {1: {"bob"}, 2: set(miners[1:])}  # per call: the miners that time out
    query = FakeMiners(
        ANSWERS,
        lambda call: {m: ("timeout", "timeout after 2.0 s (scripted)") for m in failing.get(call, ())},
        latency_s=lambda i: 0.4 + 0.1 * i,
        failed_latency_s=2.0,
    )
    clock = iter(1_767_225_600.0 + 60.0 * i for i in range(100))  # 2026-01-01T00:00:00Z, one round a minute
    daemon = Daemon(
        store=LocalStore(out),
        embedder=embedder,
        settings=settings,
        prompts=(PromptItem("Is Python's list type mutable?"), PromptItem("<u>Second</u> prompt?")),
        query=query,
        clock=lambda: next(clock),
    )
    daemon.run(rounds=rounds)
    return out
