"""`validator report`: build and errors (the loopback server is tested beside the hostile site, test_builder.py)."""

from __future__ import annotations

import pytest

from validator.cli.main import main
from validator.report import round_page


def test_report_builds_the_site_and_says_where(daemon_dir, tmp_path, capsys):
    out = tmp_path / "site"
    code = main(["report", str(daemon_dir), "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert (out / "index.html").is_file() and (out / round_page("round-000003")).is_file()
    assert "3 round(s), 4 miner(s)" in printed and str(out / "index.html") in printed


def test_report_defaults_to_runs_report(daemon_dir, tmp_path):
    assert main(["report", f"file://{daemon_dir}", "--no-progress"]) == 0
    assert (tmp_path / "runs" / "report" / "index.html").is_file()  # cwd is tmp_path


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["report"], 2, "give a STORE"),
        (["report", "does-not-exist"], 2, "not a directory"),
        (["report", "ftp://x/y"], 2, "unsupported store URI scheme"),
        (["report", "--serve", "--out", "nothing-here"], 2, "no built report"),
        (["report", ".", "--port", "70000"], 2, "--port"),
    ],
)
def test_report_usage_errors_are_clear(argv, code, message, capsys):
    assert main(argv) == code
    assert message in capsys.readouterr().err


def test_report_on_a_store_without_rounds_fails(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--no-progress"]) == 1
    assert "no evaluated rounds" in capsys.readouterr().err
