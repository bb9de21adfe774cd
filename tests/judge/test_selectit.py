"""SelectIT: the expected rating, the consistency penalty, truncation, batching and the config file."""

from __future__ import annotations

import copy
import logging
import math
import threading
import time

import pytest

from consensus.errors import ConfigError
from judge.errors import InputError, JudgeConfigError
from judge.selectit import (
    DEFAULT_RP_FILE,
    DEFAULT_SCORE,
    PREFILL,
    SelectitConfig,
    SelectitScorer,
    build_prompt,
    combine,
    expected_rating,
    fit_prompt,
    load_rating_prompts,
    load_selectit_config,
    rating_distribution,
    read_rating,
    sample_fields,
)
from judge.tokens import CharTokenizer, RatingTokens
from lm.client import TokenLogprob
from lm.errors import LMError
from lm.fake import FakeChatClient, logprob_completion

LN = math.log
SURFACE = RatingTokens.by_surface()


def test_expected_rating_by_hand():
    # P = (0.1, 0.2, 0.3, 0.4) on 2..5 -> 2*.1 + 3*.2 + 4*.3 + 5*.4 = 4.0
    dist = rating_distribution([("2", LN(0.1)), ("3", LN(0.2)), ("4", LN(0.3)), ("5", LN(0.4))], SURFACE)
    assert expected_rating(dist) == pytest.approx(4.0)


def test_missing_rating_tokens_count_as_zero_and_the_rest_is_renormalised():
    # only "4" (0.5) and "5" (0.3) are in top_logprobs, the rest of the mass is on other tokens:
    # (4 * 0.5 + 5 * 0.3) / 0.8 = 4.375
    top = [("4", LN(0.5)), ("5", LN(0.3)), ("The", LN(0.15)), ("\n", LN(0.05))]
    assert expected_rating(rating_distribution(top, SURFACE)) == pytest.approx(4.375)


def test_surface_forms_of_one_rating_are_merged_and_non_ratings_ignored():
    dist = rating_distribution(
        [("4", LN(0.3)), (" 4", LN(0.3)), ("10", LN(0.2)), ("0", LN(0.1)), ("6", LN(0.1))], SURFACE
    )
    assert dist == {4: pytest.approx(0.6)}
    discovered = RatingTokens({"4": 4, "5": 5}, {19: 4, 20: 5}, "tokenizer")
    assert discovered.rating_of(" 4") is None and discovered.rating_of("4") == 4  # only forms the tokenizer has


def test_read_rating_skips_whitespace_and_checks_mass():
    ws = [(" ", LN(0.98)), (" **", LN(0.02))]
    digits = [("5", LN(0.6)), ("4", LN(0.4))]
    value, why = read_rating(logprob_completion(ws, digits).logprobs, SURFACE, 0.05)
    assert value == pytest.approx(4.6) and why is None
    value, why = read_rating(logprob_completion([("The", LN(0.97)), ("4", LN(0.03))]).logprobs, SURFACE, 0.05)
    assert value is None and "0.030" in why and "'The'" in why
    assert read_rating(logprob_completion([("The", LN(0.97)), ("4", LN(0.03))]).logprobs, SURFACE, 0.0)[0] == 4.0
    assert read_rating(None, SURFACE, 0.05) == (None, "the server returned no log-probabilities")
    assert (
        read_rating(logprob_completion([("", LN(1.0))]).logprobs, SURFACE, 0.05)[1] == "the model gave no visible token"
    )
    assert read_rating((TokenLogprob("x", 0.0, ()),), SURFACE, 0.05)[0] is None  # no rating anywhere


def test_combine_is_the_seeds_formula():
    assert combine([4.2], 0.2) == 4.2  # k = 1: the score itself
    # scores 3, 5: mu = 4, sigma (1/k) = 1 -> 4 / (1 + 0.2) = 3.333...
    assert combine([3.0, 5.0], 0.2) == pytest.approx(4 / 1.2)
    assert combine([4.0, 4.0, 4.0], 0.2) == pytest.approx(4.0)
    assert combine([3.0, 5.0], 0.0) == pytest.approx(4.0)
    # mu / (1 + alpha sigma) can fall below 1 (29 ones and a 5: 1.133 / 1.146 = 0.989): clamped to the seed's range
    assert combine([1.0] * 29 + [5.0], 0.2) == 1.0
    with pytest.raises(ValueError):
        combine([], 0.2)


def test_sample_fields():
    assert sample_fields({"instruction": "Add", "output": "2"}) == ("Add", "2")
    assert sample_fields({"instruction": "Add", "input": "1 and 1", "output": "2"}) == ("Add\n\n1 and 1", "2")
    for bad in (
        {"output": "2"},
        {"instruction": "Add"},
        {"instruction": " ", "output": "2"},
        {"instruction": 5, "output": "2"},
        {"instruction": "Add", "output": None},
    ):
        assert sample_fields(bad) is None


def test_fit_prompt_cuts_the_response_first_then_the_instruction():
    tok = CharTokenizer(1.0)  # one character, one token
    rp = "Rate 1-5."
    fixed = tok.count(build_prompt(rp, "", "")) + tok.count(PREFILL)
    assert fit_prompt(rp, "ins", "resp", tok, 1000) == ("ins", "resp", None)
    ins, resp, before = fit_prompt(rp, "i" * 10, "r" * 100, tok, fixed + 10 + 50)
    assert (ins, before) == ("i" * 10, fixed + 110) and resp == "r" * 48  # 2 tokens of margin at the seams
    ins, resp, before = fit_prompt(rp, "i" * 100, "r" * 100, tok, fixed + 50)
    assert resp == "" and ins == "i" * 48


def rated(score_of):
    """A fake server: the first generated token is " ", then the rating distribution ``score_of(text)``."""

    def fn(messages, **kw):
        assert kw["prefill"] == PREFILL and kw["top_logprobs"] == 20 and kw["temperature"] == 0.0
        dist = score_of(messages[-1]["content"])
        if isinstance(dist, Exception):
            raise dist
        answer = [(str(r), LN(p)) for r, p in dist.items()] or [("Good", LN(0.9)), ("!", LN(0.1))]
        return logprob_completion([(" ", LN(0.99))], answer)

    return fn


PROMPTS = ("Rate A.", "Rate B.", "Rate C.")


def test_scorer_k1_and_k3_and_invalid_samples():
    def score_of(text):
        if "Rate B." in text:
            return {5: 1.0}
        return {3: 1.0} if "wrong" in text else {4: 0.5, 5: 0.5}

    client = FakeChatClient(rated(score_of))
    samples = [
        {"id": "a", "instruction": "Say hi", "output": "hi"},
        {"id": "b", "instruction": "Say hi", "output": "wrong"},
        {"instruction": "Say hi"},  # no output: 3.0, id = its index
        "not an object",
    ]
    before = copy.deepcopy(samples)
    one = SelectitScorer(client, SelectitConfig(k=1), prompts=PROMPTS).score(samples)
    assert [(s.id, s.score, s.valid) for s in one] == [
        ("a", 4.5, True),
        ("b", 3.0, True),
        (2, DEFAULT_SCORE, False),
        (3, DEFAULT_SCORE, False),
    ]
    three = SelectitScorer(client, SelectitConfig(k=3), prompts=PROMPTS).score(samples)
    # a: 4.5, 5, 4.5 -> mu 4.6667, sigma 0.2357 -> 4.6667 / 1.04714
    mu, sigma = 14 / 3, math.sqrt(((4.5 - 14 / 3) ** 2 * 2 + (5 - 14 / 3) ** 2) / 3)
    assert three[0].score == pytest.approx(mu / (1 + 0.2 * sigma))
    assert three[0].prompt_scores == (4.5, 5.0, 4.5)
    assert three[0].record() == {"id": "a", "score": three[0].score}
    assert samples == before


def test_a_prompt_without_a_rating_is_left_out_and_all_failing_gives_3():
    def score_of(text):
        if "Rate B." in text:
            return LMError("http", "HTTP 500")
        return {5: 1.0} if "good" in text else {}

    client = FakeChatClient(rated(score_of))
    scores = SelectitScorer(client, SelectitConfig(k=2), prompts=PROMPTS).score(
        [{"instruction": "q", "output": "good"}, {"instruction": "q", "output": "bad"}]
    )
    assert scores[0].score == 5.0 and scores[0].prompt_scores == (5.0, None) and "HTTP 500" in scores[0].reason
    assert scores[1].score == DEFAULT_SCORE and not scores[1].valid and scores[1].prompt_scores == (None, None)
    assert "rating tokens hold 0.000" in scores[1].record(details=True)["reason"]


def test_k_times_n_prompts_of_a_batch_run_concurrently_and_batches_in_order():
    barrier = threading.Barrier(6, timeout=5)  # k = 2, batch_size = 3: six calls must be in flight together

    def score_of(text):
        barrier.wait()
        return {int(text.rsplit("Response: ", 1)[1]): 1.0}

    client = FakeChatClient(rated(score_of))
    samples = [{"id": i, "instruction": "n", "output": str(1 + i % 5)} for i in range(6)]
    scores = SelectitScorer(client, SelectitConfig(k=2, batch_size=3), prompts=PROMPTS).score(samples)
    assert [s.score for s in scores] == [1.0, 2.0, 3.0, 4.0, 5.0, 1.0]
    assert client.peak == 6


def test_workers_bound_concurrency():
    def slow(text):
        time.sleep(0.01)
        return {4: 1.0}

    client = FakeChatClient(rated(slow))
    SelectitScorer(client, SelectitConfig(k=3, batch_size=4, workers=2), prompts=PROMPTS).score(
        [{"instruction": "n", "output": "x"}] * 4
    )
    assert client.peak <= 2 and len(client.calls) == 12


def test_over_long_prompts_are_truncated_with_a_warning(caplog):
    client = FakeChatClient(rated(lambda text: {4: 1.0}))
    scorer = SelectitScorer(client, SelectitConfig(max_length=200), prompts=PROMPTS, tokenizer=CharTokenizer(1.0))
    with caplog.at_level(logging.WARNING, logger="judge.selectit"):
        score = scorer.score([{"id": 7, "instruction": "q", "output": "x" * 1000}])[0]
    assert score.truncated_from is not None and score.truncated_from > 1000 and score.score == 4.0
    sent = client.calls[0]["messages"][0]["content"]
    assert len(sent) + len(PREFILL) <= 200 and sent.startswith("Rate A.") and sent.endswith("x")
    assert "sample 7" in caplog.text and "exceeds max_length 200" in caplog.text


def test_scores_are_reproducible():
    client = FakeChatClient(rated(lambda text: {3: 0.2, 4: 0.5, 5: 0.3}))
    samples = [{"id": i, "instruction": "q", "output": f"a{i}"} for i in range(5)]
    runs = [
        [s.record() for s in SelectitScorer(client, SelectitConfig(k=2), prompts=PROMPTS).score(samples)]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_confidence_maps_1_5_to_0_1():
    client = FakeChatClient(rated(lambda text: {5: 1.0} if "great" in text else {1: 1.0}))
    scorer = SelectitScorer(client, SelectitConfig())
    assert scorer.confidence("Q?", "great") == 1.0
    assert [scorer.confidence("Q?", text) for text in ("bad", "great", "")] == [0.0, 1.0, 0.5]


def test_default_rating_prompts_file():
    prompts = load_rating_prompts(DEFAULT_RP_FILE)
    assert len(prompts) >= 5 and all("1" in p and "5" in p for p in prompts)
    assert not any(p.startswith("#") for p in prompts)


def test_rating_prompt_file_errors(tmp_path):
    empty = tmp_path / "rp.txt"
    empty.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="holds no prompt"):
        load_rating_prompts(empty)
    with pytest.raises(InputError, match="cannot read"):
        load_rating_prompts(tmp_path / "missing.txt")
    with pytest.raises(JudgeConfigError, match="k = 4 but .* holds only 3"):
        SelectitScorer(FakeChatClient(lambda *a, **k: ""), SelectitConfig(k=4), prompts=PROMPTS)


def test_seed_yaml_config(tmp_path):
    (tmp_path / "prompts.txt").write_text("Rate it.\nScore it.\n")
    path = tmp_path / "selectit.yaml"
    path.write_text(
        "name: SelectitTokenScorer\nmodel: local\nrp_file: prompts.txt\nk: 2\nalpha: 0.2\n"
        "max_length: 2048\nbatch_size: 8\n"
    )
    config = load_selectit_config(path)
    assert (config.k, config.alpha, config.max_length, config.batch_size) == (2, 0.2, 2048, 8)
    assert load_rating_prompts(config.rp_path) == ("Rate it.", "Score it.")  # found next to the YAML file
    assert load_selectit_config(None) == SelectitConfig()


@pytest.mark.parametrize(
    "text,match",
    [
        ("k: [1\n", r"selectit.yaml:\d+: malformed YAML"),
        ("- a\n- b\n", "expected a mapping"),
        ("k: 0\n", "selectit.k: must be >= 1"),
        ("k: two\n", "selectit.k: expected a number"),
        ("alpha: -1\n", "selectit.alpha"),
        ("colour: red\n", "selectit.colour: unknown setting"),
        ("model: meta-llama/Llama-3.1-8B\n", "selectit.model: expected 'local'"),
    ],
)
def test_bad_yaml_configs_name_the_problem(tmp_path, text, match):
    path = tmp_path / "selectit.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_selectit_config(path)


def test_max_length_must_hold_the_rating_prompt():
    with pytest.raises(JudgeConfigError, match="cannot hold the rating prompt"):
        SelectitScorer(
            FakeChatClient(lambda *a, **k: ""),
            SelectitConfig(max_length=32),
            prompts=("x" * 200,),
            tokenizer=CharTokenizer(1.0),
        )
