"""validator.round.narration: the one narrative step, its budget a parameter."""

from __future__ import annotations

import time

import pytest

from consensus.evidence import Collected
from consensus.fake import FakeEmbedder
from consensus.signals import Signals
from consensus.types import Response, Round
from lm.errors import LMError
from lm.fake import FakeChatClient
from validator.records.lm_evidence import LMEvidence
from validator.round.narration import Narrated, narrate_round, narrative_evidence, stored_narrative
from validator.round.stages import run_stages
from validator.settings import load_settings


@pytest.fixture(scope="module")
def outcome():
    texts = ["Lists are mutable.", "A list can be changed in place.", "Yes, lists are mutable.", "No idea."]
    round_ = Round("r-1", "Are Python lists mutable?", tuple(Response(f"m{i}", t, 1.0) for i, t in enumerate(texts)))
    return run_stages(round_, FakeEmbedder(), load_settings(None, env={}, dotenv_path=None))


HEATMAP = "rounds/r-1/heatmap.png"  # the key run_stages's narrative names (the heatmap is on by default)


def down(messages, **_):
    raise LMError("http", "down")


def slow_timeout(messages, **_):
    time.sleep(0.3)
    raise LMError("timeout", "no answer within the timeout")


def test_without_a_budget_a_failing_lm_leaves_the_template_and_skips_nothing(outcome):
    told = narrate_round(FakeChatClient(down), outcome.round, outcome.evaluation, outcome.allocation, HEATMAP)
    assert told.kind == "template" and told.text == outcome.narrative and told.skipped is None


def test_a_spent_budget_keeps_the_template_and_says_so(outcome):
    client = FakeChatClient(slow_timeout)
    told = narrate_round(client, outcome.round, outcome.evaluation, outcome.allocation, None, budget_s=0.2)
    assert told.kind == "template" and told.skipped is not None and "budget" in told.skipped
    assert len(client.calls) == 1  # the retries found the budget spent and did not call again


def test_the_stored_narrative_is_reused_only_for_the_same_facts(outcome):
    told = Narrated("lm", "The LM's own words.")
    args = (outcome.round, outcome.evaluation, outcome.allocation)
    evidence = LMEvidence.of("r-1", "fake", Collected(Signals()), Signals(), narrative_evidence(told, *args, None))
    assert evidence.narrative is not None and evidence.narrative.kind == "lm"
    assert stored_narrative(evidence, *args, None, "template") == ("The LM's own words.", "lm")
    # other facts (here the heatmap's key, which the narrative names): the template
    assert stored_narrative(evidence, *args, "rounds/r-1/heatmap.png", "template") == ("template", "template")
