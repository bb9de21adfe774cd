"""`validator report`: build, errors, and the loopback server."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request

import pytest

from validator.cli.main import main
from validator.report import CSP, round_page
from validator.report.serve import make_server


def test_report_builds_the_site_and_says_where(daemon_dir, tmp_path, capsys):
    out = tmp_path / "site"
    code = main(["report", str(daemon_dir), "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert (out / "index.html").is_file() and (out / round_page("round-000003")).is_file()
    assert "3 round(s), 4 miner(s)" in printed and str(out / "index.html") in printed


def test_report_defaults_to_runs_report(daemon_dir, tmp_path):
    assert main(["report", f"file://{daemon_dir}", "--no-progress"]) == 0
    assert (tmp_path / "runs" / "report" / "index.html").is_file()   # cwd is tmp_path


@pytest.mark.parametrize("argv, code, message", [
    (["report"], 2, "give a STORE"),
    (["report", "does-not-exist"], 2, "not a directory"),
    (["report", "ftp://x/y"], 2, "unsupported store URI scheme"),
    (["report", "--serve", "--out", "nothing-here"], 2, "no built report"),
    (["report", ".", "--port", "70000"], 2, "--port"),
])
def test_report_usage_errors_are_clear(argv, code, message, capsys):
    assert main(argv) == code
    assert message in capsys.readouterr().err


def test_report_on_a_store_without_rounds_fails(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--no-progress"]) == 1
    assert "no evaluated rounds" in capsys.readouterr().err


def test_server_serves_the_site_on_loopback_with_the_csp(hostile_site):
    server = make_server(hostile_site, 0)
    host, port = server.server_address[:2]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        assert host == "127.0.0.1"
        base = f"http://127.0.0.1:{port}/"
        with urllib.request.urlopen(base + "index.html", timeout=10) as resp:
            assert resp.headers["Content-Security-Policy"] == CSP
            assert resp.headers["X-Content-Type-Options"] == "nosniff"
            assert b"<h1>Rounds</h1>" in resp.read()
        href = "miner/%252E%252E%252F%252E%252E%252Fetc%252Fpasswd/index.html"   # as the pages link it
        with urllib.request.urlopen(base + href, timeout=10) as resp:
            assert b"../../etc/passwd" in resp.read()
        for path in ("round/", "../../../etc/passwd", "%2E%2E/%2E%2E/etc/passwd"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + path, timeout=10)
            assert err.value.code == 404
            err.value.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
