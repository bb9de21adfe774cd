"""The narrative never holds up a round's commit: record and ledger first, the LM's narrative after."""

from __future__ import annotations

import json

import pytest

from lm.errors import LMError
from lm.fake import FakeChatClient
from narrative.narrate import SYSTEM
from storage import keys
from storage.memory import MemoryStore
from tests.validator.test_daemon import PROMPTS, ScriptedQuery
from validator.daemon.daemon import Daemon
from validator.round.stages import LMHandle
from validator.settings import load_settings

GOOD = json.dumps(
    {
        "prompt_analysis": "The prompt asks whether a Python list can be changed in place.",
        "response_comparison": "The answers agree with each other.",
        "evaluation_methodology": "The answers were compared as described in the record.",
    }
)


def is_narrative(messages) -> bool:
    return any(m["role"] == "system" and m["content"] == SYSTEM for m in messages)


def lm_settings():
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_LM__ENABLED": "true",
        "VALIDATOR_LM__POLARITY": "false",
        "VALIDATOR_LM__REFERENCE_JUDGING": "false",
        "VALIDATOR_LM__FACTUAL": "false",
    }
    return load_settings(None, env=env, dotenv_path=None)


def daemon(store, embedder, client, progress=None):
    settings = lm_settings()
    return Daemon(
        store=store,
        embedder=embedder,
        settings=settings,
        prompts=PROMPTS,
        query=ScriptedQuery(),
        lm=LMHandle(client, settings.lm_config()),
        on_progress=progress,
    )


def test_the_record_and_the_ledger_are_committed_before_the_narrative_is_asked(embedder):
    store = MemoryStore()
    seen = []

    def answer(messages, **_):
        if not is_narrative(messages):
            raise LMError("http", "only the narrative is answered here")
        record = json.loads(store.get(keys.evaluation("round-000001")))
        ledger = json.loads(store.get(keys.ledger()))
        seen.append((record["narrative"]["kind"], ledger["last_sequence"]))
        return GOOD

    client = FakeChatClient(answer)
    stages = []
    daemon(store, embedder, client, progress=stages.append).run(rounds=1)
    assert seen and seen[0] == ("template", 1)
    assert stages.index("round-000001: storing") < stages.index("round-000001: narrative")
    record = json.loads(store.get(keys.evaluation("round-000001")))
    if record["narrative"]["kind"] == "lm":  # the check accepted the LM's text: the record was updated
        assert "changed in place" in record["narrative"]["text"]
    assert record["config"]["lm"]["narrative"] is True  # the config says what ran, not the deferral


def test_a_crash_while_narrating_leaves_a_valid_record_with_the_template(embedder):
    store = MemoryStore()

    def crash(messages, **_):
        if is_narrative(messages):
            raise SystemExit("killed while the LM writes the narrative")
        raise LMError("http", "only the narrative is answered here")

    with pytest.raises(SystemExit):
        daemon(store, embedder, FakeChatClient(crash)).run(rounds=1)
    record = json.loads(store.get(keys.evaluation("round-000001")))
    assert record["narrative"]["kind"] == "template" and record["narrative"]["text"]
    assert json.loads(store.get(keys.ledger()))["last_sequence"] == 1
    # the restart goes on with round 2: round 1 is complete, nothing is asked or paid again
    query = ScriptedQuery()
    settings = lm_settings()
    again = Daemon(store=store, embedder=embedder, settings=settings, prompts=PROMPTS, query=query)
    assert [r.round_id for r in again.run(rounds=1)] == ["round-000002"] and len(query.calls) == 1


def test_the_narrative_stops_at_its_budget_and_the_record_says_so(embedder):
    import time

    store = MemoryStore()
    calls = []

    def slow_timeout(messages, **_):
        if not is_narrative(messages):
            raise LMError("http", "only the narrative is answered here")
        calls.append(time.monotonic())
        time.sleep(0.6)
        raise LMError("timeout", "no answer within the timeout")

    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_LM__ENABLED": "true",
        "VALIDATOR_LM__POLARITY": "false",
        "VALIDATOR_LM__REFERENCE_JUDGING": "false",
        "VALIDATOR_LM__FACTUAL": "false",
        "VALIDATOR_LM__ROUND_BUDGET_S": "0.5",
    }
    settings = load_settings(None, env=env, dotenv_path=None)
    d = Daemon(
        store=store,
        embedder=embedder,
        settings=settings,
        prompts=PROMPTS,
        query=ScriptedQuery(),
        lm=LMHandle(FakeChatClient(slow_timeout), settings.lm_config()),
    )
    [report] = d.run(rounds=1)
    assert len(calls) == 1  # the retries found the budget spent and did not call again
    assert report.stages["narrative"] < 2.0
    record = json.loads(store.get(keys.evaluation("round-000001")))
    assert record["narrative"]["kind"] == "template"
    assert any(s["stage"] == "narrative" and "budget" in s["reason"] for s in record["lm_skipped"])
