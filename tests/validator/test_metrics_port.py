"""The daemon's metrics port: fixed by default (Prometheus finds a restarted daemon), a busy one is one clear line."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.validator.test_daemon_cli import network  # noqa: F401  (a fixture)
from validator.cli.main import main
from validator.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_metrics_port_is_fixed_and_documented():
    port = load_settings(None, env={}, dotenv_path=None).daemon.metrics_port
    assert port == 9478
    assert f"127.0.0.1:{port}/metrics" in (ROOT / "docs" / "daemon.md").read_text()


def test_a_metrics_port_in_use_stops_the_daemon_with_one_line(network, tmp_path, capsys):  # noqa: F811
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(
            [
                "daemon",
                "--rounds",
                "1",
                "--store",
                str(tmp_path / "rounds"),
                "--miners",
                str(network),
                "--no-lm",
                "--metrics-port",
                str(port),
            ]
        )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"validator daemon: cannot serve metrics on 127.0.0.1:{port}: ")
    assert "--metrics-port" in err[0]
