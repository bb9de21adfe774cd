"""Store errors are classified by whether waiting can heal them (fast: local paths and canned S3 answers)."""

from __future__ import annotations

import os

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError, ReadTimeoutError

from storage import LocalStore, MemoryStore, SpoolingStore, keys
from storage.errors import KeyNotFound, PermanentStoreError, StoreError, TransientStoreError
from storage.probe import probe
from storage.s3 import S3Settings, S3Store

SECRET = "s3cr3t-value-that-must-not-leak"


def s3(create_bucket: bool = False) -> S3Store:
    return S3Store(
        "bucket",
        "pre",
        create_bucket=create_bucket,
        settings=S3Settings(
            endpoint_url="http://127.0.0.1:1", access_key_id="AKIDEXAMPLE12345", secret_access_key=SECRET
        ),
    )


def client_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": f"{code} happened"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "PutObject",
    )


def test_the_tree_derives_from_oserror():
    for cls in (StoreError, KeyNotFound, PermanentStoreError, TransientStoreError):
        assert issubclass(cls, OSError)
    assert issubclass(KeyNotFound, KeyError)


@pytest.mark.parametrize(
    "code,status,kind",
    [
        ("InvalidAccessKeyId", 403, "authentication"),
        ("SignatureDoesNotMatch", 403, "authentication"),
        ("AccessDenied", 403, "authorisation"),
        ("403", 403, "authorisation"),  # a HEAD: no body, only the status
        ("NoSuchBucket", 404, "missing bucket"),
    ],
)
def test_s3_errors_that_cannot_heal_are_permanent(code, status, kind):
    with s3() as store:
        err = store._error("PUT", "ledger.json", client_error(code, status))
    assert isinstance(err, PermanentStoreError) and err.kind == kind
    assert err.hint and SECRET not in str(err) and "ledger.json" in str(err)


def test_no_credentials_is_permanent():
    with s3() as store:
        err = store._error("PUT", "ledger.json", NoCredentialsError())
    assert isinstance(err, PermanentStoreError) and err.kind == "no credentials"
    assert "AWS_ACCESS_KEY_ID" in str(err)


@pytest.mark.parametrize(
    "exc",
    [
        client_error("InternalError", 500),
        client_error("SlowDown", 503),
        client_error("ServiceUnavailable", 503),
        EndpointConnectionError(endpoint_url="http://127.0.0.1:1"),
        ReadTimeoutError(endpoint_url="http://127.0.0.1:1"),
    ],
)
def test_connection_level_s3_errors_are_transient(exc):
    with s3() as store:
        err = store._error("PUT", "ledger.json", exc)
    assert isinstance(err, TransientStoreError) and not isinstance(err, PermanentStoreError)


def test_a_missing_bucket_is_no_error_when_the_store_creates_it():
    with s3(create_bucket=True) as store:
        assert isinstance(store._error("GET", "ledger.json", client_error("NoSuchBucket", 404)), KeyNotFound)


def test_refused_connection_is_transient_for_real():
    with s3() as store, pytest.raises(TransientStoreError):
        store.put("ledger.json", b"{}")


def test_a_path_through_a_regular_file_is_permanent(tmp_path):
    (tmp_path / "afile").write_text("x")
    store = LocalStore(tmp_path / "afile" / "runs")
    with pytest.raises(PermanentStoreError) as info:
        store.put(keys.ledger(), b"{}")
    assert info.value.kind == "unusable path" and "regular file" in str(info.value)
    with pytest.raises(PermanentStoreError):
        store.get(keys.ledger())


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_directory_is_permanent(tmp_path):
    root = tmp_path / "ro"
    root.mkdir()
    root.chmod(0o500)
    try:
        with pytest.raises(PermanentStoreError):
            probe(LocalStore(root))
    finally:
        root.chmod(0o700)


def test_probe_writes_reads_and_deletes(tmp_path):
    store = LocalStore(tmp_path / "runs")
    key = probe(store)
    assert key.startswith("probe/") and store.list() == []
    assert not (tmp_path / "runs" / "probe").exists()  # no empty folder left behind (a failed start left one)
    memory = MemoryStore()
    probe(memory)
    assert memory.objects == {}


def test_probe_of_a_spooling_store_checks_the_primary_and_never_spools(tmp_path):
    class Down(MemoryStore):
        def put(self, key, data, content_type="application/octet-stream"):
            raise TransientStoreError("refused")

    spool = SpoolingStore(Down(), tmp_path / "spool")
    with pytest.raises(TransientStoreError):
        probe(spool)
    assert spool.pending() == 0


def test_an_outage_is_logged_once_when_it_starts_and_once_when_it_ends(tmp_path, caplog):
    class Flaky(MemoryStore):
        up = True

        def _check(self):
            if not self.up:
                raise TransientStoreError("connection refused")

        def put(self, key, data, content_type="application/octet-stream"):
            self._check()
            super().put(key, data, content_type)

        def get(self, key):
            self._check()
            return super().get(key)

    primary = Flaky()
    spool = SpoolingStore(primary, tmp_path / "spool", retry_after_s=0)
    primary.up = False
    for i in range(3):  # three "rounds": reads and writes all fail
        with pytest.raises(TransientStoreError):
            spool.get(keys.evaluation(f"r{i}"))
        spool.put(keys.evaluation(f"r{i}"), b"{}")
        spool.put(keys.ledger(), b"{}")
    primary.up = True
    spool.put(keys.ledger(), b"{}")
    lines = [r.getMessage() for r in caplog.records if r.name == "storage.spool"]
    assert len(lines) == 2, lines
    assert "unavailable" in lines[0] and "is back: uploaded 6 spooled object(s)" in lines[1]
