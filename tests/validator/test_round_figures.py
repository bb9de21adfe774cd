"""A round whose long answers state figures (lm.figures in the round): the LM reads only the suspects, confirms the
wrong one, what the budget missed is recorded, and replay reads the stored signal."""

from __future__ import annotations

import time

from consensus.types import Reason, Response, Round
from lm.config import LMConfig
from lm.fake import FakeChatClient
from tests.lm.test_figures import PROMPT, TEXTS, reader
from validator.records.lm_evidence import LMEvidence
from validator.round.evaluate import build_record
from validator.round.stages import LMHandle, run_stages
from validator.settings import load_settings


def settings(budget: float = 0.0):
    env = {
        "VALIDATOR_LM__POLARITY": "false",
        "VALIDATOR_LM__NARRATIVE": "false",
        "VALIDATOR_LM__ROUND_BUDGET_S": str(budget),
        "VALIDATOR_LM__WORKERS": "1",
    }
    return load_settings(None, env=env, dotenv_path=None)


def make_round():
    return Round("f", PROMPT, tuple(Response(f"m{i}", t, 1.0 + i / 10) for i, t in enumerate(TEXTS)))


def test_the_lm_confirmed_figure_leaves_and_replay_reads_it(embedder):
    client = FakeChatClient(reader)
    out = run_stages(make_round(), embedder, settings(), lm=LMHandle(client, LMConfig()))
    wrong = out.evaluation.results[4]
    assert wrong.reason is Reason.FACTUAL and "agreed" in wrong.detail
    assert out.evaluation.results[3].reason is not Reason.FACTUAL  # La Paz: the LM found no sea-level value
    assert out.evidence.signals.figure_contradictions is not None
    stored = LMEvidence.from_json(out.evidence.to_json(), "test")
    assert stored.signals.figure_contradictions == out.evidence.signals.figure_contradictions
    replayed = run_stages(make_round(), embedder, settings(), evidence=stored)
    assert [r.reason for r in replayed.evaluation.results] == [r.reason for r in out.evaluation.results]


def test_a_suspect_the_budget_missed_is_recorded_and_stays(embedder):
    def slow(messages, **kw):
        time.sleep(0.4)
        return reader(messages, **kw)

    s = settings(budget=0.3)
    out = run_stages(make_round(), embedder, s, lm=LMHandle(FakeChatClient(slow), LMConfig()))
    assert out.evaluation.results[4].reason is not Reason.FACTUAL
    record = build_record(out, s, embedder).to_json()
    assert any(k["stage"] == "figures" and k["index"] == 4 for k in record["lm_skipped"])
