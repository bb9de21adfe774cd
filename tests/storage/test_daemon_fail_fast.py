"""`validator daemon` against stores that can never work exits 2 at start with one line; an outage waits.

Runs the real command as a subprocess against the real S3 server (SeaweedFS) and the local disk.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

MINERS = '[[miner]]\nhotkey = "nobody"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'


def command(tmp_path, store: str, *extra: str) -> list[str]:
    miners = tmp_path / "miners.toml"
    miners.write_text(MINERS)
    return [
        sys.executable,
        "-m",
        "validator",
        "daemon",
        "--rounds",
        "1",
        "--store",
        store,
        "--no-lm",
        "--miners",
        str(miners),
        "--metrics-port",
        "-1",
        *extra,
    ]


def environment(tmp_path, endpoint, **values: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "VALIDATOR_S3"))}
    env.update(
        HF_HUB_OFFLINE="1",
        VALIDATOR_DAEMON__SPOOL_DIR=str(tmp_path / "state"),
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
    )  # no credentials from this machine's profile or instance role
    if endpoint is not None:
        env.update(
            VALIDATOR_S3_ENDPOINT=endpoint.url,
            AWS_ACCESS_KEY_ID=endpoint.access_key,
            AWS_SECRET_ACCESS_KEY=endpoint.secret_key,
            VALIDATOR_S3_REGION=endpoint.region,
        )
    for name, value in values.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run_fails_fast(cmd, env, cwd) -> str:
    started = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert elapsed < 10, elapsed
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_wrong_secret_exits_2(tmp_path, s3_endpoint, bucket_name):
    env = environment(tmp_path, s3_endpoint, AWS_SECRET_ACCESS_KEY="not-the-secret-at-all-0123456789")
    line = run_fails_fast(command(tmp_path, f"s3://{bucket_name}/net", "--create-bucket"), env, tmp_path)
    assert "authentication" in line and "SignatureDoesNotMatch" in line
    assert "not-the-secret" not in line and s3_endpoint.secret_key not in line


def test_no_credentials_exits_2(tmp_path, s3_endpoint, bucket_name):
    env = environment(tmp_path, s3_endpoint, AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)
    line = run_fails_fast(command(tmp_path, f"s3://{bucket_name}/net"), env, tmp_path)
    assert "no credentials" in line and "AWS_ACCESS_KEY_ID" in line


def test_missing_bucket_exits_2(tmp_path, s3_endpoint, bucket_name):
    line = run_fails_fast(command(tmp_path, f"s3://{bucket_name}/net"), environment(tmp_path, s3_endpoint), tmp_path)
    assert "missing bucket" in line and bucket_name in line and "--create-bucket" in line
    assert s3_endpoint.secret_key not in line


def test_a_store_path_through_a_regular_file_exits_2(tmp_path):
    (tmp_path / "afile").write_text("not a directory")
    line = run_fails_fast(command(tmp_path, str(tmp_path / "afile" / "runs")), environment(tmp_path, None), tmp_path)
    assert "unusable path" in line and "regular file" in line


def test_a_refused_connection_waits_until_stopped(tmp_path):
    env = environment(
        tmp_path,
        None,
        VALIDATOR_S3_ENDPOINT="http://127.0.0.1:9",
        AWS_ACCESS_KEY_ID="AKIDEXAMPLE12345",
        AWS_SECRET_ACCESS_KEY="example-secret-0123456789",
    )
    log = tmp_path / "stderr.txt"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            command(tmp_path, "s3://bucket/net"),
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
        )
    try:
        deadline = time.monotonic() + 90
        while "retrying every" not in log.read_text() and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.5)
        assert "retrying every" in log.read_text(), log.read_text()
        time.sleep(6)  # past one retry interval: still waiting, and the wait is logged once
        assert proc.poll() is None, log.read_text()
        text = log.read_text()
        assert text.count("retrying every") == 1 and "unreachable at start" in text
        assert "example-secret" not in text
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
