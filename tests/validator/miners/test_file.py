"""The miners file: TOML and YAML, every error naming the file, the entry and the field; keys resolved, never shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from consensus.errors import ConfigError
from lm.config import Secret
from tests.validator.miners.support import KEY
from validator.miners import MinersFileError, MinerSpec, load_miners

TOML = """
[[miner]]
hotkey = "5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQX"
base_url = "http://127.0.0.1:8001/v1/"
model = "qwen2.5"
api_key_env = "MINER_A_KEY"
timeout_s = 20

[[miner]]
hotkey = "team/bob"
base_url = "https://miner.example.org/v1"
model = "llama-3"
"""

YAML = """
miners:
  - hotkey: 5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQX
    base_url: http://127.0.0.1:8001/v1/
    model: qwen2.5
    api_key_env: MINER_A_KEY
    timeout_s: 20
  - hotkey: team/bob
    base_url: https://miner.example.org/v1
    model: llama-3
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name, text", [("miners.toml", TOML), ("miners.yaml", YAML), ("miners.yml", YAML)])
def test_load_miners(tmp_path, name, text):
    specs = load_miners(write(tmp_path, name, text), {"MINER_A_KEY": f" {KEY}\n"})
    assert [s.hotkey for s in specs] == ["5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQX", "team/bob"]
    assert specs[0].base_url == "http://127.0.0.1:8001/v1" and specs[0].chat_url.endswith("/v1/chat/completions")
    assert specs[0].api_key == Secret(KEY) and specs[0].api_key_env == "MINER_A_KEY"
    assert specs[0].timeout_s == 20.0 and specs[1].timeout_s is None and specs[1].api_key is None
    assert KEY not in repr(specs)


def test_the_example_miners_file_loads():
    path = Path(__file__).resolve().parents[3] / "examples" / "miners.toml"
    specs = load_miners(path, {"EXAMPLE_MINER_KEY": "sk-example"})
    assert len(specs) >= 2 and all(s.base_url.startswith("http://127.0.0.1") for s in specs)


def entry(**fields):
    lines = ["[[miner]]"]
    for key, value in {"hotkey": "alice", "base_url": "http://127.0.0.1:8001/v1", "model": "m", **fields}.items():
        if value is not ...:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text, field, message",
    [
        (entry(base_url="ftp://127.0.0.1/v1"), "base_url", "expected an http(s) URL with a host"),
        (entry(base_url="http:///v1"), "base_url", "expected an http(s) URL with a host"),
        (entry(base_url="localhost:8000"), "base_url", "expected an http(s) URL"),
        (entry(base_url="http://user:pw@127.0.0.1/v1"), "base_url", "user:password@"),
        (entry(base_url="http://127.0.0.1:99999/v1"), "base_url", "malformed URL"),
        (entry(base_url="http://127.0.0.1/v1?x=1"), "base_url", "query"),
        (entry(base_url=""), "base_url", "expected an http(s) URL"),
        (entry(api_key_env="MINER_ALICE_KEY"), "api_key_env", "MINER_ALICE_KEY is not set"),
        (entry(api_key_env="EMPTY_KEY"), "api_key_env", "EMPTY_KEY is empty"),
        (entry(api_key_env="not a name"), "api_key_env", "expected an environment variable name"),
        (entry(timeout_s=-1), "timeout_s", "must be > 0"),
        (entry(timeout_s=0), "timeout_s", "must be > 0"),
        (entry(timeout_s=1e9), "timeout_s", "<= 3600"),
        (entry(timeout_s="fast"), "timeout_s", "must be a number"),
        (entry(timeout_s=True), "timeout_s", "must be a number"),
        (entry(url="http://x"), "url", "unknown key"),
        (entry(model=...), "model", "missing"),
        (entry(model=""), "model", "empty"),
        (entry(hotkey="evil\u001b[31m"), "hotkey", "control or format character U+001B"),
        (entry(hotkey="rtl\u202eevil"), "hotkey", "U+202E"),
        (entry(hotkey="line\nbreak"), "hotkey", "U+000A"),
        (entry(hotkey="h" * 257), "hotkey", "more than the limit of 256"),
        (entry(hotkey=" padded"), "hotkey", "whitespace"),
        (entry(hotkey=7), "hotkey", "must be a string, got int"),
        (entry(entity=""), "entity", "empty"),
        (entry(entity=42), "entity", "must be a string, got int"),
        (entry(entity="op\u202e"), "entity", "U+202E"),
        (entry(entity="e" * 257), "entity", "more than the limit of 256"),
    ],
)
def test_miners_file_errors_name_file_entry_and_field(tmp_path, text, field, message):
    path = write(tmp_path, "miners.toml", entry(hotkey="first") + text)
    with pytest.raises(MinersFileError) as info:
        load_miners(path, {"EMPTY_KEY": "  "})
    text_ = str(info.value)
    assert str(path) in text_ and "entry #2" in text_ and f"field {field!r}" in text_ and message in text_
    assert info.value.index == 1 and info.value.field_name == field
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)


def test_duplicate_hotkey_names_both_entries(tmp_path):
    path = write(tmp_path, "miners.toml", entry() + entry(base_url="http://127.0.0.1:8002/v1"))
    with pytest.raises(
        MinersFileError,
        match=r"entry #2 \(hotkey 'alice'\), field 'hotkey': "
        r"duplicate hotkey, first used by entry #1",
    ):
        load_miners(path, {})


def test_missing_key_variable_is_named_and_the_key_value_never_shown(tmp_path):
    path = write(
        tmp_path,
        "miners.yaml",
        "miners:\n  - {hotkey: a, base_url: 'http://127.0.0.1:1/v1', model: m, api_key_env: MINER_A_KEY}\n",
    )
    with pytest.raises(MinersFileError, match="MINER_A_KEY is not set"):
        load_miners(path, {})
    with pytest.raises(MinersFileError, match="MINER_A_KEY contains control characters") as info:
        load_miners(path, {"MINER_A_KEY": KEY + "\r\nX-Evil: 1"})
    assert KEY not in str(info.value)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("miners.json", "{}", "unknown miners file type '.json'"),
        ("miners.toml", "[[miner]\nhotkey=", "invalid TOML"),
        ("miners.yaml", "miners: [\n", "invalid YAML"),
        ("miners.toml", "", "no miners"),
        ("miners.toml", "[[miners]]\nhotkey = 'a'\n", "unknown top-level key 'miners' (expected [[miner]] tables)"),
        ("miners.yaml", "- hotkey: a\n", "expected a list under 'miners:', got list"),
        ("miners.yaml", "miners: []\n", "no miners"),
        ("miners.yaml", "miners:\n  - just a string\n", "miner entry #1: must be a table of hotkey, base_url"),
    ],
)
def test_miners_file_shape_errors(tmp_path, name, text, message):
    path = write(tmp_path, name, text)
    with pytest.raises(MinersFileError) as info:
        load_miners(path, {})
    assert str(path) in str(info.value) and message in str(info.value)


def test_unreadable_miners_file(tmp_path):
    with pytest.raises(MinersFileError, match="cannot read the miners file"):
        load_miners(tmp_path / "absent.toml", {})


def test_spec_validation_outside_a_file():
    with pytest.raises(ConfigError, match="hotkey"):
        MinerSpec("bad\x00key", "http://127.0.0.1:1/v1", "m")
    with pytest.raises(ConfigError, match="base_url"):
        MinerSpec("a", "file:///etc/passwd", "m")
    with pytest.raises(ConfigError, match="api_key"):
        MinerSpec("a", "http://127.0.0.1:1/v1", "m", api_key=KEY)  # a bare string would print


def test_entity_is_optional_and_kept(tmp_path):
    text = (
        entry(hotkey="a", entity="operator-7")
        + entry(hotkey="b", entity="5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY")
        + entry(hotkey="c", entity="203.0.113.9")
        + entry(hotkey="d")
    )
    specs = load_miners(write(tmp_path, "miners.toml", text), {})
    assert [s.entity for s in specs] == [
        "operator-7",
        "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY",
        "203.0.113.9",
        None,
    ]
    yaml_specs = load_miners(
        write(
            tmp_path,
            "miners.yaml",
            "miners:\n  - {hotkey: a, base_url: 'http://127.0.0.1:1/v1', model: m, entity: team-red}\n",
        ),
        {},
    )
    assert yaml_specs[0].entity == "team-red"
    with pytest.raises(ConfigError, match="entity"):
        MinerSpec("a", "http://127.0.0.1:1/v1", "m", entity=" padded")


def test_every_mistake_of_the_file_in_one_report(tmp_path):
    text = (
        entry(hotkey="a", base_url="ftp://x/v1", timeout_s=-1)
        + entry(hotkey="b")
        + entry(hotkey="a", api_key_env="MISSING_KEY")
        + entry(hotkey="c", colour="red")
    )
    path = write(tmp_path, "miners.toml", text)
    with pytest.raises(MinersFileError) as info:
        load_miners(path, {})
    lines = str(info.value).splitlines()
    assert lines[0] == f"{path}: 5 mistakes:"
    assert lines[1:] == [
        "  miner entry #1 (hotkey 'a'), field 'base_url': expected an http(s) URL with a host, such as "
        "http://127.0.0.1:8000/v1, got 'ftp://x/v1'",
        "  miner entry #1 (hotkey 'a'), field 'timeout_s': must be > 0 and <= 3600 seconds, got -1.0",
        "  miner entry #3 (hotkey 'a'), field 'hotkey': duplicate hotkey, first used by entry #1",
        "  miner entry #3 (hotkey 'a'), field 'api_key_env': environment variable MISSING_KEY is not set "
        "(it should hold this miner's API key)",
        "  miner entry #4 (hotkey 'c'), field 'colour': unknown key (known: hotkey, base_url, model, api_key_env, "
        "timeout_s, entity)",
    ]
    assert info.value.index == 0 and info.value.field_name == "base_url" and len(info.value.problems) == 5
