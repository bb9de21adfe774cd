"""The ``validator`` program's exit: ``run`` exits with ``main``'s code, after freezing the heap."""

import pytest

from validator.cli import main as cli


def test_run_exits_with_the_code_of_main_after_freezing_the_heap(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(cli.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(("main", argv)) or 3)
    with pytest.raises(SystemExit) as ended:
        cli.run(["replay", "x.jsonl"])
    assert ended.value.code == 3
    assert calls == [("main", ["replay", "x.jsonl"]), "freeze"]


def test_run_without_a_command_prints_help_and_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(cli.gc, "freeze", lambda: None)  # the test process keeps collecting
    with pytest.raises(SystemExit) as ended:
        cli.run([])
    assert ended.value.code == 2
    assert "usage: validator" in capsys.readouterr().out
