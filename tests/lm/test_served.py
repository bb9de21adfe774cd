"""`validator lm serve` advertises its server; `validator lm score` and friends use it instead of starting one."""

from __future__ import annotations

import json
import os

import pytest

from lm.embedded import DEFAULT, QWEN05, LocalServer
from lm.running_server import SCHEMA, advert_path, running
from tests.lm.fake_server import FakeServer


def write_advert(cache, served_url, **change):
    doc = {"schema": SCHEMA, "url": served_url, "model": DEFAULT.name, "sha256": DEFAULT.sha256, "pid": os.getpid()}
    doc.update(change)
    path = advert_path(cache, DEFAULT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


@pytest.fixture
def server():
    with FakeServer(lambda body: {"text": "yes", "top": [["yes", -0.05], ["no", -3.0]]}) as fake:
        yield fake


def test_a_live_advert_is_found_and_named_as_the_local_model(tmp_path, server):
    assert running(tmp_path) is None
    write_advert(tmp_path, server.url)
    found = running(tmp_path)
    assert found is not None and found.url == server.url and found.model == DEFAULT.name
    assert found.label == f"local {DEFAULT.name} {DEFAULT.sha256[:12]}"  # the LM cache keys stay the same
    assert running(tmp_path, QWEN05) is None  # another model is not served


@pytest.mark.parametrize(
    "change", [{"sha256": "0" * 64}, {"schema": "other"}, {"url": "http://example.org:1/v1"}, {"pid": 2**22 + 12345}]
)
def test_a_stale_or_foreign_advert_is_ignored(tmp_path, server, change):
    write_advert(tmp_path, server.url, **change)
    assert running(tmp_path) is None


def test_an_advert_of_a_server_that_does_not_answer_is_ignored(tmp_path):
    write_advert(tmp_path, "http://127.0.0.1:9/v1")
    assert running(tmp_path) is None


def test_lm_score_uses_the_served_lm_and_starts_none(tmp_path, server, monkeypatch, capsys):
    from validator.cli.main import main

    def refuse(self):
        raise AssertionError("lm score started its own LM while `lm serve` runs")

    monkeypatch.setattr(LocalServer, "start", refuse)
    monkeypatch.setenv("VALIDATOR_CACHE_DIR", str(tmp_path))
    write_advert(tmp_path, server.url)
    assert main(["lm", "score", "The sky is blue.", "--question", "Is the statement true?"]) == 0
    assert capsys.readouterr().out.strip().isdigit() and server.chat_requests()


def test_lm_score_that_starts_its_own_lm_says_how_to_pay_that_once(tmp_path, server, monkeypatch, capsys):
    """Issue 36: each call paid 20 s of start-up and nothing said that `lm serve` avoids it."""
    import contextlib

    from lm.config import Endpoint
    from validator.cli.main import main

    @contextlib.contextmanager
    def started(self):  # stands in for the start (tests/lm/test_local.py starts the real one)
        yield type("Started", (), {"endpoint": Endpoint(url=server.url, token=None, model=DEFAULT.name)})()

    monkeypatch.setattr(LocalServer, "__enter__", lambda self: started(self).__enter__())
    monkeypatch.setattr(LocalServer, "__exit__", lambda self, *exc: None)
    monkeypatch.setenv("VALIDATOR_CACHE_DIR", str(tmp_path))
    assert main(["lm", "score", "The sky is blue.", "--question", "Is the statement true?"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().isdigit() and "`validator lm serve` in another terminal" in captured.err
    write_advert(tmp_path, server.url)
    assert main(["lm", "score", "The sky is blue.", "--question", "Is the statement true?"]) == 0
    assert "lm serve" not in capsys.readouterr().err  # served: no start-up, nothing to say


def test_lm_score_with_a_reference_asks_the_content_against_it(tmp_path, server, monkeypatch, capsys):
    from validator.cli.lm import with_reference
    from validator.cli.main import main

    assert with_reference(["a"], "Is it true?", None) == (["a"], "Is it true?")
    monkeypatch.setenv("VALIDATOR_CACHE_DIR", str(tmp_path))
    write_advert(tmp_path, server.url)
    argv = ["lm", "score", "Sydney is the capital of Australia.", "--question", "Is the statement true?"]
    assert main([*argv, "--reference", "The capital of Australia is Canberra."]) == 0
    assert capsys.readouterr().out.strip().isdigit()
    asked = server.chat_requests()[-1]["body"]["messages"][0]["content"]
    assert asked.startswith("Reference (known to be correct): The capital of Australia is Canberra.\n")
    assert "Statement: Sydney is the capital of Australia." in asked and "Judge it only by the reference." in asked
