"""The llm_aaj section and the flags: entries, API key variables, modes, validation."""

from __future__ import annotations

import pytest

from consensus.errors import ConfigError
from judge.config import (
    LOCAL,
    LlmaajConfig,
    ModelSpec,
    build_config,
    endpoint_for,
    read_config_file,
    resolve_key,
    specs_from_flags,
    split_flag,
    template_for,
)
from judge.errors import JudgeConfigError
from judge.templates import DEFAULT_MODEL_TEMPLATE, SEED_JUDGE_TEMPLATE
from lm.config import Endpoint, Secret

SEED_LIKE = """\
llm_aaj:
  judges:
    - model: https://judge.example.com/v1
      name: gpt4
      api_key: JUDGE_KEY
      chat_template: None # if this is not specified it defaults to judge chat template shown above
  models:
    - model: https://model1.endpoint.com/v1 # defaults to a local model
      name: model1 # defaults to None
      api_key: MODEL1_KEY
      chat_template: "Q: {question}"
    - model: local
      chat_template: None
      name: model2
  score_output_format:
    - csv
    - jsonl
    - xlsx
  input_responses:
    - /path/to/a/model1-responses-1_1_24_1_11_43.csv
  input_qna:
    - /path/to/a/qna.yaml
"""


def test_the_seeds_layout(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(SEED_LIKE)
    config = build_config(read_config_file(path), {})
    assert config.mode == "ask+judge" and config.uses_local
    assert config.judges == (ModelSpec("https://judge.example.com/v1", "gpt4", "JUDGE_KEY", "", ""),)
    assert config.models[0].chat_template == "Q: {question}" and config.models[1].chat_template == ""  # "None"
    assert config.score_output_format == ("csv", "jsonl", "xlsx")
    assert template_for(config.judges[0], "judge") == SEED_JUDGE_TEMPLATE
    assert template_for(config.models[1], "model") == DEFAULT_MODEL_TEMPLATE


def test_flags_override_the_file(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(SEED_LIKE)
    config = build_config(read_config_file(path), {"score_output_format": ("jsonl",), "out": "x", "workers": 2})
    assert config.score_output_format == ("jsonl",) and config.out == "x" and config.workers == 2


def test_ilab_evaluate_section_is_accepted(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("evaluate:\n  " + SEED_LIKE.replace("\n", "\n  "))
    assert build_config(read_config_file(path), {}).judges[0].name == "gpt4"


@pytest.mark.parametrize(
    "text,match",
    [
        ("llm_aaj: [\n", r"config.yaml:\d+: malformed YAML"),
        ("other: 1\n", "expected an 'llm_aaj' section"),
        ("llm_aaj:\n  judge: []\n", r"llm_aaj.judge: unknown key"),
        (
            "llm_aaj:\n  models:\n    - model: local\n      temperature: 1\n",
            r"llm_aaj.models\[0\].temperature: unknown",
        ),
        (
            "llm_aaj:\n  models:\n    - model: ../models/model2_dir\n  input_qna: [q.csv]\n",
            "models on the file system are not served",
        ),
        ("llm_aaj:\n  models: local\n", "expected a list of entries"),
        (
            "llm_aaj:\n  judges:\n    - model: local\n      chat_template: 'Rate {answer}'\n  input_responses: [r.csv]\n",
            r"chat_template: the template has no \{question\}, \{reference_answer\}",
        ),
        (
            "llm_aaj:\n  judges: [local]\n  input_responses: [r.csv]\n  score_output_format: [pdf]\n",
            "unknown format 'pdf'",
        ),
    ],
)
def test_bad_config_files(tmp_path, text, match):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        build_config(read_config_file(path), {})


def test_modes():
    m, j = (ModelSpec(),), (ModelSpec(),)
    assert LlmaajConfig(models=m, judges=j, input_qna=("q",)).mode == "ask+judge"
    assert LlmaajConfig(models=m, input_qna=("q",)).mode == "ask"
    assert LlmaajConfig(judges=j, input_responses=("r",)).mode == "judge"
    for kwargs, match in [
        ({}, "nothing to do"),
        ({"models": m}, "models need questions"),
        ({"judges": j}, "judges need answers"),
        ({"judges": j, "input_qna": ("q",), "input_responses": ("r",)}, "only used to ask models"),
        ({"models": (ModelSpec(), ModelSpec()), "input_qna": ("q",)}, "two entries named 'local'"),
        ({"models": m, "input_qna": ("q",), "workers": 0}, "workers: must be >= 1"),
    ]:
        with pytest.raises(JudgeConfigError, match=match):
            LlmaajConfig(**kwargs)


def test_api_keys_line_up_with_endpoints_as_in_the_seed():
    # the seed: models url1,local,url2 with two keys -> the first and third model get them
    specs = specs_from_flags(
        ["https://a/v1", LOCAL, "https://b/v1"], ["m1", "granite", "m2"], ["KEY_A", "KEY_B"], None, "models"
    )
    assert [s.api_key for s in specs] == ["KEY_A", "", "KEY_B"]
    specs = specs_from_flags(["https://a/v1", LOCAL], None, ["KEY_A", ""], None, "models")  # one per model
    assert [s.api_key for s in specs] == ["KEY_A", ""]
    with pytest.raises(JudgeConfigError, match="--model-api-keys: 3 key variable"):
        specs_from_flags(["https://a/v1", LOCAL], None, ["A", "B", "C"], None, "models")
    with pytest.raises(JudgeConfigError, match="--judge-names: 1 name"):
        specs_from_flags(["https://a/v1", LOCAL], ["x"], None, None, "judges")


def test_a_pasted_key_is_refused_without_being_echoed():
    with pytest.raises(JudgeConfigError) as info:
        specs_from_flags(["https://a/v1"], None, ["sk-live-12345-SECRET"], None, "models")
    assert "NAME of an environment variable" in str(info.value) and "SECRET" not in str(info.value)


def test_keys_come_from_the_environment_only():
    spec = ModelSpec("https://a.example/v1", "a", "A_KEY", "", "gpt-x")
    key = resolve_key(spec, {"A_KEY": "sk-real"}, "model")
    assert key == Secret("sk-real") and "sk-real" not in repr(key)
    with pytest.raises(JudgeConfigError, match="A_KEY: the environment variable named by the api_key of model 'a'"):
        resolve_key(spec, {}, "model")
    endpoint = endpoint_for(spec, {"A_KEY": "sk-real"}, "model", None)
    assert endpoint.url == "https://a.example/v1" and endpoint.model == "gpt-x" and "sk-real" not in repr(endpoint)
    assert resolve_key(ModelSpec(LOCAL, api_key="A_KEY"), {}, "model") is None  # the embedded LM takes no key
    local = endpoint_for(ModelSpec(), {}, "judge", Endpoint("http://127.0.0.1:1/v1", None, "qwen", "local qwen"))
    assert local.url == "http://127.0.0.1:1/v1" and local.label == "local qwen as local"
    with pytest.raises(JudgeConfigError, match="not running"):
        endpoint_for(ModelSpec(), {}, "judge", None)


def test_default_names():
    assert ModelSpec().label() == "local"
    assert ModelSpec("https://api.example.com:8443/v1").label() == "api.example.com:8443"
    assert ModelSpec("https://api.example.com/v1", served_model="gpt-4o").label() == "api.example.com/gpt-4o"
    assert split_flag("a,,b") == ["a", "", "b"] and split_flag(None) is None
