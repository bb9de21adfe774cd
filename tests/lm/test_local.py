"""The embedded local LM, for real: assembly, server start/stop, LM_SCORE, polarity, narrative, cache."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

import pytest

from consensus.types import Polarity
from lm.client import CachedClient, OpenAIChatClient
from lm.config import LMConfig
from lm.local import QWEN05, LocalServer, assemble
from lm.score import lm_score_detailed

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server():
    with LocalServer(parallel=1) as s:
        yield s


def test_model_is_assembled_and_verified():
    path = assemble(QWEN05)
    assert path.stat().st_size == QWEN05.size
    assert path.with_suffix(".verified").read_text().endswith(QWEN05.sha256)


def test_server_answers_on_loopback_only(server):
    assert server.endpoint.url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/v1/models", timeout=10) as resp:
        names = json.dumps(json.loads(resp.read()))
    assert QWEN05.name in names


@pytest.mark.parametrize("mode", ["sampled", "logprob"])
def test_lm_score_on_the_seed_examples(server, mode):
    client = OpenAIChatClient(server.endpoint)
    config = LMConfig(score_mode=mode)
    for parts, question in [(("This is a test",), "Is this a test?"),
                            (("We have a meeting today at 3:00",), "Are we meeting today at 3:00?"),
                            (("Weekly invoice 12/12/2022", "$14,000"), "Is my invoice greater than $5,000?")]:
        result = lm_score_detailed(client, *parts, question=question, config=config)
        assert 0 <= result.score <= 10 and not result.fallback
        if mode == "logprob":
            assert 0.0 <= result.expected <= 10.0


def test_polarity_and_narrative_run_through_the_real_lm(server):
    from consensus import evaluate
    from emissions import allocate
    from lm.polarity import classify_many
    from narrative.narrate import narrate
    from tests.helpers import block_vectors, make_round

    client = OpenAIChatClient(server.endpoint)
    rnd = make_round(["No. The Great Wall is far too narrow to see from the Moon with the naked eye.",
                      "No, it cannot be seen from the Moon without aid.",
                      "Yes, it is clearly visible from the Moon."], prompt="Is the Great Wall visible from the Moon?")
    labels = classify_many(client, rnd.prompt, [(i, r.text) for i, r in enumerate(rnd.responses)], LMConfig())
    assert set(labels) == {0, 1, 2} and all(isinstance(p, Polarity) for p, _ in labels.values())
    ev = evaluate(rnd, block_vectors([3]))
    al = allocate(rnd, ev)
    told = narrate(client, rnd, ev, al.amounts, al.pool, "rounds/t-1/heatmap.png", retries=2)
    assert told.kind in ("lm", "template")
    assert "Consensus classification" in told.text and "rounds/t-1/heatmap.png" in told.text


def test_cache_answers_repeated_calls_without_the_server(server, tmp_path):
    cached = CachedClient(OpenAIChatClient(server.endpoint), tmp_path)
    first = lm_score_detailed(cached, "This is a test", question="Is this a test?")
    calls = cached.meter.snapshot()["calls"]
    again = lm_score_detailed(cached, "This is a test", question="Is this a test?")
    assert again.score == first.score and cached.meter.snapshot()["calls"] == calls


def test_server_stops_and_frees_its_port():
    s = LocalServer(parallel=1).start()
    port = s.port
    s.stop()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
