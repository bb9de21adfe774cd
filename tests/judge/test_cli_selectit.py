"""``validator selectit`` against a scripted server with llama.cpp's /tokenize."""

from __future__ import annotations

import json
import math

from lm.fake import user_text
from tests.lm.fake_server import FakeServer
from validator.cli.main import main

LN = math.log


def rater(body):
    assert body["messages"][-1] == {"role": "assistant", "content": "The answer is:"}
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    response = user_text(body).rsplit("Response: ", 1)[1]
    dist = [("5", LN(0.7)), ("4", LN(0.3))] if "Paris" in response else [("1", LN(0.6)), ("2", LN(0.4))]
    return {"positions": [[(" ", LN(0.99))], dist]}


def test_selectit_cli_writes_id_and_score_per_sample(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SELECTIT_KEY", "sk-selectit-SECRET")
    data = tmp_path / "data.jsonl"
    data.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": 1, "instruction": "Capital of France?", "output": "Paris."},
                {"id": "two", "instruction": "Capital of France?", "output": "Rome."},
                {"instruction": "Capital of France?"},
            ]
        )
        + "\n"
    )
    with FakeServer(rater) as server:
        config = tmp_path / "selectit.yaml"
        config.write_text(
            f"name: SelectitTokenScorer\nmodel: {server.url}\napi_key: SELECTIT_KEY\nk: 1\n"
            f"alpha: 0.2\nmax_length: 2048\nbatch_size: 8\n"
        )
        out = tmp_path / "scores.jsonl"
        assert main(["selectit", str(data), "--config", str(config), "--out", str(out), "--no-progress"]) == 0
        assert {r["auth"] for r in server.requests} == {"Bearer sk-selectit-SECRET"}
        assert any(r["path"] == "/tokenize" for r in server.requests)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == [{"id": 1, "score": 4.7}, {"id": "two", "score": 1.4}, {"id": 2, "score": 3.0}]
    err = capsys.readouterr().err
    assert "3 sample(s)" in err and "1 at the default 3.0" in err and "rating tokens from the tokenizer" in err
    assert "SECRET" not in err and "SECRET" not in out.read_text()


def test_selectit_cli_details_and_stdout(tmp_path, capsys):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": 9, "instruction": "Capital?", "output": "Paris"}) + "\n")
    with FakeServer(rater, tokenize=False) as server:
        config = tmp_path / "s.yaml"
        config.write_text(f"model: {server.url}\n")
        assert main(["selectit", str(data), "--config", str(config), "--details", "--no-progress"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record == {
        "id": 9,
        "score": 4.7,
        "prompt_scores": [4.7],
        "valid": True,
        "reason": None,
        "truncated_from": None,
    }


def test_selectit_cli_bad_inputs(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["selectit", str(empty)]) == 2
    assert "no samples" in capsys.readouterr().err
    config = tmp_path / "s.yaml"
    config.write_text("k: [\n")
    assert main(["selectit", str(empty), "--config", str(config)]) == 2
    assert "malformed YAML" in capsys.readouterr().err
    data = tmp_path / "d.jsonl"
    data.write_text('{"instruction": "a", "output": "b"}\n')
    config.write_text("model: https://api.example.com/v1\napi_key: UNSET_SELECTIT_KEY\n")
    assert main(["selectit", str(data), "--config", str(config)]) == 2
    assert "UNSET_SELECTIT_KEY: the environment variable" in capsys.readouterr().err
