import math
from pathlib import Path

import pytest

from lm.checked_generation import CheckFailed, generate_checked, generate_json, int_in_range, parse_json
from lm.client import OpenAIChatClient
from lm.config import Endpoint, LMConfig, Secret
from lm.lm_score import FALLBACK, LM_SCORE, THINK_PREFILL, lm_score_detailed, lm_score_prompt, parse_score
from tests.lm.fake_server import FakeOpenAI

SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "lm_score_design.md"


@pytest.mark.parametrize(
    "text,value",
    [
        ("8", 8),
        (" 10\n", 10),
        ("0", 0),
        ("Score: 8", 8),
        ("score: 3.", 3),
        ("8/10", 8),
        ("7 out of 10", 7),
        ("**8**", 8),
        ("The score is **9** because the content says so.", 9),
        ("<think>maybe 2 or 3</think>7", 7),
        ("<think>I think 10</think>\nScore: 4", 4),
        ("I would say 6.", 6),
        ("Score: 10/10", 10),
    ],
)
def test_parse_score(text, value):
    assert parse_score(text) == value


@pytest.mark.parametrize("text", ["", "yes", "<think>8", "between 3 and 7", "11", "Score: 42", "3.5"])
def test_parse_score_rejects(text):
    with pytest.raises(CheckFailed):
        parse_score(text)


def test_prompt_is_the_seeds():
    prompt = lm_score_prompt(["We have a meeting today at 3:00"], "Are we meeting today at 3:00?")
    assert prompt.startswith(
        "Based on the following content, answer this yes/no question: Are we meeting today at 3:00?"
    )
    assert "Content: \nWe have a meeting today at 3:00\n\n" in prompt and prompt.endswith("Score:")
    assert lm_score_prompt(["a", "b"], "q").count("a\nb") == 1
    if SEED.is_file():
        seed = SEED.read_text()
        block = seed.split('prompt = f"""', 1)[1].split('"""', 1)[0]
        expected = block.replace("{question}", "Q?").replace("{content}", "x\ny")
        assert lm_score_prompt(["x", "y"], "Q?") == expected


SAMPLED = LMConfig(score_mode="sampled")  # the seed's mode (the shipped default is yesno)


def client_for(server, token="sk-test"):
    return OpenAIChatClient(Endpoint(server.url, Secret(token), "m"), timeout_s=2.0)


def test_sampled_score_and_prefill_and_token_header():
    with FakeOpenAI([{"text": "Score: 8"}]) as server:
        client = client_for(server)
        no_think = LMConfig(score_mode="sampled", thinking=False)
        assert (
            LM_SCORE(
                "We have a meeting today at 3:00",
                question="Are we meeting today at 3:00?",
                client=client,
                config=no_think,
            )
            == 8
        )
        body = server.requests[0]["body"]
        assert body["messages"][-1] == {"role": "assistant", "content": THINK_PREFILL + "\n\n"}  # THINKING=f
        assert body["temperature"] == 0.0
        assert server.requests[0]["auth"] == "Bearer sk-test"
        think = LM_SCORE("c", question="q?", client=client, config=SAMPLED)  # THINKING=t, the default: no prefill
        assert think == 8 and server.requests[1]["body"]["messages"][-1]["role"] == "user"


def test_retries_then_succeeds():
    with FakeOpenAI([{"text": "I cannot say"}, {"status": 500}, {"raw": b"{not json"}, {"text": "**3**"}]) as server:
        result = lm_score_detailed(client_for(server), "c", question="q?", config=SAMPLED)
        assert result.score == 3 and not result.fallback and len(result.raw) == 4
        assert result.raw[1] is None  # the HTTP 500 attempt is recorded as a failed call


def test_fallback_to_5_after_retries_is_counted():
    from lm.lm_score import STATS

    before = STATS.fallbacks
    with FakeOpenAI([{"text": "no idea"}]) as server:
        result = lm_score_detailed(
            client_for(server), "c", question="q?", config=LMConfig(score_mode="sampled", retries=3)
        )
    assert result.score == FALLBACK and result.fallback and len(result.raw) == 3
    assert STATS.fallbacks == before + 1


def test_timeout_counts_as_failed_attempt():
    with FakeOpenAI([{"sleep": 1.5, "text": "9"}, {"text": "9"}]) as server:
        client = OpenAIChatClient(Endpoint(server.url, None, "m"), timeout_s=0.5)
        result = lm_score_detailed(client, "c", question="q?", config=LMConfig(score_mode="sampled", retries=2))
    assert result.score == 9 and result.raw[0] is None


def test_logprob_mode_expected_score_with_surface_forms():
    top = [["8", math.log(0.5)], [" 8", math.log(0.1)], ["7", math.log(0.3)], ["Yes", math.log(0.1)]]
    with FakeOpenAI([{"text": "8", "top": top}]) as server:
        result = lm_score_detailed(client_for(server), "c", question="q?", config=LMConfig(score_mode="logprob"))
    assert result.expected == pytest.approx((8 * 0.6 + 7 * 0.3) / 0.9)
    assert result.score == 8 and len(server.requests) == 1
    assert server.requests[0]["body"]["max_tokens"] == 3 and server.requests[0]["body"]["top_logprobs"] == 20


def test_logprob_mode_splits_one_into_one_and_ten():
    first = [["1", math.log(0.8)], ["9", math.log(0.2)]]
    second = [["0", math.log(0.75)], ["\n", math.log(0.25)]]
    with FakeOpenAI([{"text": "1", "top": first}, {"text": "0", "top": second}]) as server:
        result = lm_score_detailed(client_for(server), "c", question="q?", config=LMConfig(score_mode="logprob"))
    # P(10) = 0.8 * 0.75 = 0.6, P(1) = 0.2, P(9) = 0.2
    assert result.expected == pytest.approx(10 * 0.6 + 1 * 0.2 + 9 * 0.2)
    assert server.requests[1]["body"]["messages"][-1]["content"] == "1"  # THINKING=t: no think prefill


def test_logprob_mode_reads_ten_from_the_next_position_when_the_model_wrote_one():
    positions = [
        [["\n", -0.01]],
        [["1", math.log(0.5)], ["8", math.log(0.5)]],
        [["0", math.log(0.9)], ["", math.log(0.1)]],
    ]
    with FakeOpenAI([{"text": "10", "positions": positions}]) as server:
        result = lm_score_detailed(
            client_for(server), "c", question="q?", config=LMConfig(score_mode="logprob", thinking=False)
        )
    assert len(server.requests) == 1  # no second call
    assert result.expected == pytest.approx(10 * 0.45 + 1 * 0.05 + 8 * 0.5)
    assert server.requests[0]["body"]["messages"][-1]["content"] == THINK_PREFILL + "\n\n"


def test_logprob_mode_without_score_tokens_falls_back():
    with FakeOpenAI([{"text": "Yes", "top": [["Yes", -0.1], ["No", -2.5]]}]) as server:
        result = lm_score_detailed(client_for(server), "c", question="q?", config=LMConfig(score_mode="logprob"))
    assert result.fallback and result.score == FALLBACK


def test_generate_json_strips_fences_and_feeds_back_errors():
    script = [
        {"text": "Sure! here it is"},
        {"text": '```json\n{"reasoning": "ok"}\n```'},
        {"text": '```json\n{"reasoning": "ok", "answer_quality": 4}\n```'},
    ]
    with FakeOpenAI(script) as server:
        out = generate_json(client_for(server), "sys", "prompt", required=["reasoning", "answer_quality"])
    assert out.ok and out.value == {"reasoning": "ok", "answer_quality": 4} and len(out.attempts) == 3
    last = server.requests[-1]["body"]["messages"]
    assert last[-1]["role"] == "user" and "missing key(s): answer_quality" in last[-1]["content"]


def test_checked_failure_keeps_every_raw_output():
    with FakeOpenAI([{"text": "a"}, {"text": "b"}]) as server:
        out = generate_checked(client_for(server), int_in_range(1, 5), None, "p", retries=2)
    assert not out.ok and out.value is None and out.raw_outputs == ("a", "b")
    with pytest.raises(CheckFailed, match="after 2 attempt"):
        out.unwrap()


def test_parse_json_variants():
    assert parse_json('<think>hmm</think>{"a": 1}') == {"a": 1}
    assert parse_json('Here: {"a": [1, 2]} done') == {"a": [1, 2]}
    with pytest.raises(CheckFailed):
        parse_json("nothing")


def test_secret_never_shows():
    s = Secret("sk-very-secret")
    assert "sk-very" not in repr(s) and "sk-very" not in str(Endpoint("http://x", s, "m"))


def test_empty_answer_is_retried():
    with FakeOpenAI([{"text": ""}, {"text": "   "}, {"text": "6"}]) as server:
        result = lm_score_detailed(client_for(server), "c", question="q?", config=SAMPLED)
    assert result.score == 6 and result.raw[:2] == ("", "   ")


def test_lm_score_with_a_configured_default_client():
    from lm import lm_score as score

    with FakeOpenAI([{"text": "4"}]) as server:
        score.configure(client_for(server), SAMPLED)
        try:
            assert LM_SCORE("We have a meeting today at 3:00", question="Are we meeting today at 4:00?") == 4
        finally:
            score.configure(None)
    with pytest.raises(RuntimeError, match="no client"):
        LM_SCORE("x", question="q?")


def test_logprob_mode_samples_when_the_server_gives_no_logprobs():
    with FakeOpenAI([{"text": "9"}]) as server:
        client = client_for(server)  # made to behave like a server that ignores logprobs
        real = client.complete

        def without_logprobs(*args, **kwargs):
            from dataclasses import replace

            return replace(real(*args, **kwargs), logprobs=None)

        client.complete = without_logprobs
        result = lm_score_detailed(client, "c", question="q?", config=LMConfig(score_mode="logprob"))
    assert result.mode == "sampled" and result.score == 9 and not result.fallback
