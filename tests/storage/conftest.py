"""S3 fixtures: a real S3-compatible server (SeaweedFS) on 127.0.0.1.

CI starts one (``.ci/run``) and exports ``VALIDATOR_TEST_S3_ENDPOINT``,
``VALIDATOR_TEST_S3_ACCESS_KEY_ID`` and ``VALIDATOR_TEST_S3_SECRET_ACCESS_KEY``;
without them the session starts its own through ``scripts/s3_server.py`` and
stops it at the end. Outage tests start dedicated instances (``s3_instance``)
so they can kill them without disturbing the rest.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# read now: the autouse clean_env fixture removes VALIDATOR_* variables before each test
_CI_SERVER = {
    name: os.environ.get(name, "")
    for name in (
        "VALIDATOR_TEST_S3_ENDPOINT",
        "VALIDATOR_TEST_S3_ACCESS_KEY_ID",
        "VALIDATOR_TEST_S3_SECRET_ACCESS_KEY",
        "VALIDATOR_TEST_S3_REGION",
    )
}


def load_s3_server():
    """``scripts/s3_server.py`` as a module (scripts/ is not a package)."""
    if "s3_server" not in sys.modules:
        spec = importlib.util.spec_from_file_location("s3_server", ROOT / "scripts" / "s3_server.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["s3_server"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules["s3_server"]


@dataclass(frozen=True)
class S3Endpoint:
    url: str
    access_key: str
    secret_key: str = field(repr=False)
    region: str = "us-east-1"

    def settings(self, **overrides):
        from storage.s3 import S3Settings

        values = dict(
            endpoint_url=self.url,
            region=self.region,
            access_key_id=self.access_key,
            secret_access_key=self.secret_key,
            connect_timeout_s=1.0,
            read_timeout_s=10.0,
            max_attempts=1,
        )
        values.update(overrides)
        return S3Settings(**values)


def _endpoint(server) -> S3Endpoint:
    return S3Endpoint(server.endpoint, server.access_key, server.secret_key)


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory):
    """The shared server: CI's if the variables are set, else one started for this session."""
    if _CI_SERVER["VALIDATOR_TEST_S3_ENDPOINT"]:
        missing = [
            n for n in ("VALIDATOR_TEST_S3_ACCESS_KEY_ID", "VALIDATOR_TEST_S3_SECRET_ACCESS_KEY") if not _CI_SERVER[n]
        ]
        if missing:
            pytest.fail(f"VALIDATOR_TEST_S3_ENDPOINT is set but {', '.join(missing)} is not")
        yield S3Endpoint(
            _CI_SERVER["VALIDATOR_TEST_S3_ENDPOINT"],
            _CI_SERVER["VALIDATOR_TEST_S3_ACCESS_KEY_ID"],
            _CI_SERVER["VALIDATOR_TEST_S3_SECRET_ACCESS_KEY"],
            _CI_SERVER["VALIDATOR_TEST_S3_REGION"] or "us-east-1",
        )
        return
    s3_server = load_s3_server()
    server = s3_server.start(tmp_path_factory.mktemp("s3server"))
    try:
        yield _endpoint(server)
    finally:
        s3_server.stop(server, kill=True)  # throwaway data: no need to wait for a graceful stop


@pytest.fixture
def bucket_name():
    """A fresh bucket name per test (created by the test's store)."""
    return f"test-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def s3_store(s3_endpoint, bucket_name):
    """An S3Store on a fresh bucket of the shared server, under a prefix."""
    from storage.s3 import S3Store

    store = S3Store(bucket_name, "validator/run-1", settings=s3_endpoint.settings())
    store.ensure_bucket()
    try:
        yield store
    finally:
        store.close()


class S3Instance:
    """A dedicated SeaweedFS instance a test can start, crash and restart on the same data and ports."""

    def __init__(self, dir: Path) -> None:
        self._s3_server = load_s3_server()
        self.server = self._s3_server.init(dir)
        self.endpoint = _endpoint(self.server)

    def start(self) -> float:
        """Start (or restart) and wait until ready; the seconds it took."""
        return self._s3_server.start(self.server).ready_s

    def kill(self) -> None:
        """SIGKILL: a crash, no shutdown."""
        self._s3_server.stop(self.server, kill=True)


@pytest.fixture
def s3_instance(tmp_path):
    """A dedicated server, set up (endpoint and key known) but *not started*; killed at the end."""
    instance = S3Instance(tmp_path / "s3instance")
    try:
        yield instance
    finally:
        instance.kill()
