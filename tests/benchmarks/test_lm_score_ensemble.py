"""The seed's ENSEMBLE, a lab tool since session 19 (benchmarks.lm_score): 3 concurrent samples, aggregated."""

from __future__ import annotations

from benchmarks.lm_score import FALLBACK, aggregate, score_ensemble
from lm.client import OpenAIChatClient
from lm.config import Endpoint, LMConfig, Secret
from tests.lm.fake_server import FakeOpenAI


def test_aggregation_rules():
    assert aggregate([7, 7, 2], "maj") == 7
    assert aggregate([1, 5, 9], "maj") == 5  # no majority: median
    assert aggregate([2, 9], "maj") == 9  # two values, no majority: upper median of the sorted pair
    assert aggregate([7, 8, 8], "avg") == 8  # 7.67 rounds up
    assert aggregate([6, 7], "avg") == 7  # 6.5 rounds half up
    assert aggregate([], "maj") == FALLBACK


def test_ensemble_three_samples_majority():
    with FakeOpenAI([{"text": "7"}, {"text": "2"}, {"text": "7"}]) as server:
        client = OpenAIChatClient(Endpoint(server.url, Secret("sk-test"), "m"), timeout_s=2.0)
        result = score_ensemble(client, "c", question="q?", config=LMConfig(score_mode="sampled"))
    assert sorted(s for s in result.samples if s is not None) == [2, 7, 7] and result.score == 7
    temps = {r["body"]["temperature"] for r in server.requests}
    seeds = {r["body"]["seed"] for r in server.requests}
    assert temps == {0.7} and len(seeds) == 3


def test_nothing_usable_falls_back():
    with FakeOpenAI([{"text": "no idea"}] * 6) as server:
        client = OpenAIChatClient(Endpoint(server.url, Secret("sk-test"), "m"), timeout_s=2.0)
        result = score_ensemble(client, "c", question="q?", config=LMConfig(score_mode="sampled", retries=2))
    assert result.fallback and result.score == FALLBACK and result.samples == (None, None, None)
