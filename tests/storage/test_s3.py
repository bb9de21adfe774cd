"""S3Store against a real S3-compatible server, and SpoolingStore (fake primary and real outages).

Tests marked slow use SeaweedFS on 127.0.0.1 (see conftest.py); the rest need no server.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import urllib.error
import urllib.request

import pytest

from storage import KeyNotFound, MemoryStore, SpoolingStore, StoreError, keys, open_store
from storage.s3 import S3Settings, S3Store

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
KEY_ID = "AKIDEXAMPLE0123"


class FlakyStore(MemoryStore):
    """A primary that fails with StoreError while ``down``, and records the order of accepted puts."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.fail_after: int | None = None  # go down after this many more accepted puts
        self.attempts = 0
        self.order: list[str] = []

    def put(self, key, data, content_type="application/octet-stream"):
        self.attempts += 1
        if self.fail_after is not None:
            if self.fail_after == 0:
                self.down = True
            self.fail_after -= 1
        if self.down:
            raise StoreError(f"cannot write {key!r}: connection refused")
        super().put(key, data, content_type)
        self.order.append(key)

    def get(self, key):
        if self.down:
            raise StoreError(f"cannot read {key!r}: connection refused")
        return super().get(key)


class Recording:
    """Delegates to a real store and records the keys it accepted, in order."""

    def __init__(self, store) -> None:
        self.store = store
        self.order: list[str] = []

    def __repr__(self) -> str:
        return f"Recording({self.store!r})"

    def put(self, key, data, content_type="application/octet-stream"):
        self.store.put(key, data, content_type)
        self.order.append(key)

    def get(self, key):
        return self.store.get(key)

    def exists(self, key):
        return self.store.exists(key)

    def list(self, prefix=""):
        return self.store.list(prefix)

    def close(self):
        self.store.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spool_bytes(spool_dir) -> bytes:
    return b"".join(p.read_bytes() for p in spool_dir.rglob("*") if p.is_file())


# -- settings and URIs (no server) -------------------------------------------------------------

# reading these settings from the environment is tested in tests/validator/test_settings.py


def test_open_store_s3_uri(tmp_path):
    s3 = S3Settings(endpoint_url="http://127.0.0.1:1", access_key_id=KEY_ID, secret_access_key=SECRET)
    store = open_store("s3://my-bucket/validator/rounds/", s3=s3)
    try:
        assert isinstance(store, S3Store)
        assert (store.bucket, store.prefix, store.settings.endpoint_url) == (
            "my-bucket",
            "validator/rounds",
            "http://127.0.0.1:1",
        )
        assert store.object_key("rounds/r1/heatmap.png") == "validator/rounds/rounds/r1/heatmap.png"
        assert SECRET not in repr(store) and KEY_ID not in repr(store)
    finally:
        store.close()
    with open_store("s3://my-bucket", s3=s3, spool_dir=tmp_path / "spool") as spooled:
        assert isinstance(spooled, SpoolingStore) and spooled.primary.prefix == ""
    with pytest.raises(ValueError, match="no bucket"):
        open_store("s3:///prefix", s3=s3)
    with pytest.raises(ValueError):
        open_store("s3://b/../x", s3=s3)


def test_presign_is_local_and_holds_no_secret():
    settings = S3Settings(endpoint_url="http://127.0.0.1:1", access_key_id=KEY_ID, secret_access_key=SECRET)
    with S3Store("my-bucket", "p", settings=settings) as store:
        url = store.presign(keys.heatmap("r 1"), expires_s=600)
        assert url.startswith("http://127.0.0.1:1/my-bucket/p/rounds/r%25201/heatmap.png?")
        assert "X-Amz-Expires=600" in url and SECRET not in url
        for bad in (0, 7 * 24 * 3600 + 1):
            with pytest.raises(ValueError):
                store.presign("k", expires_s=bad)


def test_unreachable_endpoint_is_a_quick_store_error(caplog):
    caplog.set_level(logging.DEBUG)
    endpoint = f"http://127.0.0.1:{closed_port()}"
    default = S3Settings(endpoint_url=endpoint, access_key_id=KEY_ID, secret_access_key=SECRET)
    with S3Store("my-bucket", settings=default) as store:
        t0 = time.monotonic()
        with pytest.raises(StoreError, match="a/b.json.*127.0.0.1.*EndpointConnectionError"):
            store.put("a/b.json", b"{}")
        assert time.monotonic() - t0 < 5  # default settings: an outage shows within seconds
    once = S3Settings(endpoint_url=endpoint, access_key_id=KEY_ID, secret_access_key=SECRET, max_attempts=1)
    with S3Store("my-bucket", settings=once) as store:
        for op in (lambda: store.get("a/b.json"), lambda: store.exists("a/b.json"), lambda: store.list("a/")):
            with pytest.raises(StoreError) as info:
                op()
            assert not isinstance(info.value, KeyNotFound)
            assert "'a/" in str(info.value) and endpoint in str(info.value) and SECRET not in str(info.value)
    assert SECRET not in caplog.text


# -- SpoolingStore with a fake primary -------------------------------------------------------------


def test_spool_passes_through_while_the_primary_is_up(tmp_path):
    primary = FlakyStore()
    store = SpoolingStore(primary, tmp_path / "spool")
    store.put("a.json", b"1", "application/json")
    assert primary.objects == {"a.json": b"1"} and primary.content_types["a.json"] == "application/json"
    assert store.pending() == 0 and store.get("a.json") == b"1" and store.list() == ["a.json"]
    with pytest.raises(KeyNotFound):
        store.get("nope")


def test_outage_spools_serves_reads_and_uploads_in_order(tmp_path, caplog):
    primary = FlakyStore()
    store = SpoolingStore(primary, tmp_path / "spool", retry_after_s=0)
    store.put("r/0.json", b"zero")
    primary.down = True
    puts = [(f"r/{i}.json", f"v{i}".encode(), "application/json") for i in range(1, 6)]
    puts.append(("r/1.json", b"v1 again", "application/json"))  # a newer version of a spooled key
    with caplog.at_level(logging.INFO, logger="storage.spool"):
        for key, data, ct in puts:
            store.put(key, data, ct)  # the caller is not failed
        assert store.pending() == 6
        assert store.get("r/1.json") == b"v1 again" and store.exists("r/5.json")
        result = store.flush()
        assert (result.uploaded, result.pending) == (0, 6) and "connection refused" in result.error
        primary.down = False
        assert store.list("r/") == ["r/0.json", "r/1.json", "r/2.json", "r/3.json", "r/4.json", "r/5.json"]
        result = store.flush()
    assert (result.uploaded, result.pending, result.error) == (6, 0, None)
    assert primary.order == ["r/0.json"] + [k for k, _, _ in puts]
    assert primary.objects["r/1.json"] == b"v1 again" and store.pending() == 0
    assert [p.name for p in (tmp_path / "spool").iterdir()] == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2 and "unavailable" in warnings[0] and "back" in warnings[1]


def test_a_put_after_recovery_never_overtakes_the_backlog(tmp_path):
    primary = FlakyStore()
    store = SpoolingStore(primary, tmp_path / "spool", retry_after_s=0)
    primary.down = True
    store.put("a", b"1")
    store.put("b", b"2")
    primary.down = False
    store.put("c", b"3")  # flushes a and b first
    assert primary.order == ["a", "b", "c"] and store.pending() == 0


def test_flush_stops_at_the_first_failure_and_resumes_in_order(tmp_path):
    primary = FlakyStore()
    store = SpoolingStore(primary, tmp_path / "spool", retry_after_s=0)
    primary.down = True
    for i in range(5):
        store.put(f"k{i}", bytes([i]))
    primary.down, primary.fail_after = False, 2
    result = store.flush()
    assert (result.uploaded, result.pending) == (2, 3) and primary.order == ["k0", "k1"]
    primary.down, primary.fail_after = False, None
    assert store.flush().uploaded == 3
    assert primary.order == ["k0", "k1", "k2", "k3", "k4"]


def test_retry_interval_spares_the_primary_during_an_outage(tmp_path):
    primary = FlakyStore()
    store = SpoolingStore(primary, tmp_path / "spool", retry_after_s=3600)
    primary.down = True
    for i in range(10):
        store.put(f"k{i}", b"x")
    assert primary.attempts == 1 and store.pending() == 10
    primary.down = False
    assert store.flush().uploaded == 10  # flush() always tries


def test_spool_survives_a_new_instance(tmp_path):
    primary = FlakyStore()
    primary.down = True
    first = SpoolingStore(primary, tmp_path / "spool")
    for i in range(3):
        first.put(f"k{i}", f"v{i}".encode(), "text/plain")
    second = SpoolingStore(primary, tmp_path / "spool")  # e.g. the daemon restarted
    assert second.pending() == 3 and second.get("k2") == b"v2"
    second.put("k3", b"v3")  # numbered after the old backlog
    primary.down = False
    assert second.flush().uploaded == 4
    assert primary.order == ["k0", "k1", "k2", "k3"] and primary.content_types["k0"] == "text/plain"


def test_corrupt_entry_is_quarantined_not_uploaded(tmp_path, caplog):
    primary = FlakyStore()
    primary.down = True
    store = SpoolingStore(primary, tmp_path / "spool")
    store.put("good", b"ok")
    bad = tmp_path / "spool" / f"{0:020d}.obj"
    bad.write_bytes(b'SPOOL1 {"key": "x"}\ntruncated')
    primary.down = False
    with caplog.at_level(logging.ERROR, logger="storage.spool"):
        store = SpoolingStore(primary, tmp_path / "spool")
    assert store.pending() == 1 and store.flush().uploaded == 1 and primary.order == ["good"]
    assert (tmp_path / "spool" / "quarantine" / bad.name).exists() and "corrupt" in caplog.text


def test_spool_refuses_unsafe_keys_and_leaves_no_temp_files(tmp_path):
    primary = FlakyStore()
    primary.down = True
    store = SpoolingStore(primary, tmp_path / "spool")
    with pytest.raises(ValueError):
        store.put("../escape", b"x")
    store.put("ok", b"x")
    assert store.pending() == 1
    assert [p.name for p in (tmp_path / "spool").iterdir()] == [f"{1:020d}.obj"]
    (tmp_path / "spool" / ".00000000000000000002.obj.abc.tmp").write_bytes(b"half a wri")  # a crash mid-write
    assert SpoolingStore(primary, tmp_path / "spool").pending() == 1
    assert [p.name for p in (tmp_path / "spool").iterdir()] == [f"{1:020d}.obj"]


def test_a_failing_spool_fails_the_caller(tmp_path, monkeypatch):
    primary = FlakyStore()
    primary.down = True
    store = SpoolingStore(primary, tmp_path / "spool")

    def disk_full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "link", disk_full)
    with pytest.raises(StoreError, match="cannot spool 'k'.*No space"):
        store.put("k", b"x")
    assert store.pending() == 0 and list((tmp_path / "spool").iterdir()) == []


# -- the real server -------------------------------------------------------------------------------


@pytest.mark.slow
def test_round_trip_with_content_types(s3_store):
    s = s3_store
    assert s.list() == [] and not s.exists("rounds/r1/evaluation.json")
    s.put("rounds/r1/evaluation.json", b'{"a": 1}\n', "application/json")
    s.put("rounds/r1/heatmap.png", b"\x89PNG\r\n\x1a\n", "image/png")
    s.put("summary.json", b"{}", "application/json")
    s.put("blob", b"\x00\x01")  # the default type (SeaweedFS would guess one from a known extension)
    assert s.get("rounds/r1/heatmap.png") == b"\x89PNG\r\n\x1a\n" and s.exists("rounds/r1/evaluation.json")
    assert s.list() == ["blob", "rounds/r1/evaluation.json", "rounds/r1/heatmap.png", "summary.json"]
    assert s.list("rounds/") == ["rounds/r1/evaluation.json", "rounds/r1/heatmap.png"]
    head = s._client.head_object(Bucket=s.bucket, Key="validator/run-1/rounds/r1/heatmap.png")
    assert head["ContentType"] == "image/png" and head["ContentLength"] == 8
    assert s.content_type("rounds/r1/evaluation.json") == "application/json"
    assert s.content_type("blob") == "application/octet-stream"
    s.put("summary.json", b"new")
    assert s.get("summary.json") == b"new"


@pytest.mark.slow
def test_missing_key(s3_store):
    with pytest.raises(KeyNotFound, match="nope.json"):
        s3_store.get("nope.json")
    assert not s3_store.exists("nope.json")


@pytest.mark.slow
def test_percent_encoded_keys_round_trip(s3_store):
    ids = ["r 1", "ünïcødé/ключ", "a%2Fb", "../../etc", "x" * 500, "q?x=1&y#z+"]
    expected = {}
    for i, round_id in enumerate(ids):
        key = keys.heatmap(round_id)
        s3_store.put(key, bytes([i]) * 3, "image/png")
        expected[key] = bytes([i]) * 3
    assert s3_store.list("rounds/") == sorted(expected)
    for key, data in expected.items():
        assert s3_store.get(key) == data and s3_store.exists(key)
        with urllib.request.urlopen(s3_store.presign(key, expires_s=60), timeout=10) as resp:
            assert resp.read() == data


@pytest.mark.slow
def test_presigned_url_serves_the_bytes_without_credentials(s3_store, s3_endpoint):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    s3_store.put("rounds/r%201/heatmap.png", png, "image/png")
    url = s3_store.presign("rounds/r%201/heatmap.png", expires_s=300)
    assert s3_endpoint.secret_key not in url
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.read() == png and resp.headers["Content-Type"] == "image/png"
    tampered = url.replace("X-Amz-Expires=300", "X-Amz-Expires=301")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(tampered, timeout=10)
    info.value.close()
    assert info.value.code == 403


@pytest.mark.slow
@pytest.mark.parametrize("which", ["secret", "key id"])
def test_wrong_credentials_are_a_clear_error_without_the_secret(s3_endpoint, s3_store, which, caplog):
    caplog.set_level(logging.DEBUG)
    wrong_key = s3_endpoint.access_key if which == "secret" else "NOSUCHKEYID0001"
    settings = s3_endpoint.settings(access_key_id=wrong_key, secret_access_key=SECRET)
    with S3Store(s3_store.bucket, "validator/run-1", settings=settings) as bad:
        for op in (lambda: bad.put("rounds/r1/evaluation.json", b"{}"), lambda: bad.get("rounds/r1/x.json")):
            with pytest.raises(StoreError) as info:
                op()
            message = str(info.value)
            assert not isinstance(info.value, KeyNotFound)
            assert "rounds/r1/" in message
            assert ("SignatureDoesNotMatch" if which == "secret" else "InvalidAccessKeyId") in message
            assert SECRET not in message and s3_endpoint.secret_key not in message and wrong_key not in message
    assert SECRET not in caplog.text and s3_endpoint.secret_key not in caplog.text
    assert not s3_store.exists("rounds/r1/evaluation.json")


@pytest.mark.slow
def test_missing_bucket_is_an_error_unless_create_bucket(s3_endpoint, bucket_name):
    with S3Store(bucket_name, settings=s3_endpoint.settings()) as store:
        with pytest.raises(StoreError, match="NoSuchBucket"):
            store.put("k.json", b"{}")
    with S3Store(bucket_name, settings=s3_endpoint.settings(), create_bucket=True) as store:
        store.put("k.json", b"{}", "application/json")
        assert store.get("k.json") == b"{}"


def _objects(i: int) -> tuple[str, bytes, str]:
    if i % 2:
        return keys.heatmap(f"round {i}"), b"\x89PNG" + bytes([i]) * 50, "image/png"
    return keys.evaluation(f"round {i}"), f'{{"round": {i}}}\n'.encode(), "application/json"


def _check_on_server(endpoint, bucket, written: dict[str, tuple[bytes, str]]) -> None:
    with S3Store(bucket, "daemon", settings=endpoint.settings()) as fresh:
        assert fresh.list() == sorted(written)
        for key, (data, ct) in written.items():
            assert fresh.get(key) == data and fresh.content_type(key) == ct


@pytest.mark.slow
def test_s3_down_at_start_then_back_nothing_lost(s3_instance, bucket_name, tmp_path, caplog):
    """The daemon starts while S3 is down, restarts once during the outage, and S3 comes back."""
    caplog.set_level(logging.DEBUG)
    endpoint = s3_instance.endpoint
    spool = tmp_path / "spool"
    written: dict[str, tuple[bytes, str]] = {}
    primary = Recording(S3Store(bucket_name, "daemon", settings=endpoint.settings(), create_bucket=True))
    store = SpoolingStore(primary, spool, retry_after_s=0)
    t0 = time.monotonic()
    for i in range(6):
        key, data, ct = _objects(i)
        store.put(key, data, ct)  # S3 is down: no exception
        written[key] = (data, ct)
    assert time.monotonic() - t0 < 15  # each attempt fails fast (connection refused, one attempt)
    assert store.pending() == 6 and primary.order == []
    assert store.get(_objects(3)[0]) == _objects(3)[1]
    assert store.flush().pending == 6
    store.close()

    # the daemon restarts, still without S3: the new instance takes over the backlog
    primary = Recording(S3Store(bucket_name, "daemon", settings=endpoint.settings(), create_bucket=True))
    store = SpoolingStore(primary, spool, retry_after_s=0)
    assert store.pending() == 6
    for i in range(6, 9):
        key, data, ct = _objects(i)
        store.put(key, data, ct)
        written[key] = (data, ct)
    assert store.pending() == 9
    assert endpoint.secret_key.encode() not in spool_bytes(spool)

    s3_instance.start()
    result = store.flush()
    assert (result.uploaded, result.pending, result.error) == (9, 0, None)
    assert primary.order == [_objects(i)[0] for i in range(9)]
    store.put(*_objects(9))  # straight through now
    written[_objects(9)[0]] = _objects(9)[1:]
    assert store.pending() == 0 and primary.order[-1] == _objects(9)[0]
    store.close()
    _check_on_server(endpoint, bucket_name, written)
    assert list(spool.iterdir()) == []
    assert endpoint.secret_key not in caplog.text


@pytest.mark.slow
def test_s3_killed_mid_run_then_back_nothing_lost(s3_instance, bucket_name, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    s3_instance.start()
    endpoint = s3_instance.endpoint
    primary = Recording(S3Store(bucket_name, "daemon", settings=endpoint.settings(), create_bucket=True))
    store = SpoolingStore(primary, tmp_path / "spool", retry_after_s=0)
    written: dict[str, tuple[bytes, str]] = {}
    order = []

    def put(i: int, data: bytes | None = None) -> None:
        key, default, ct = _objects(i)
        store.put(key, data or default, ct)
        written[key] = (data or default, ct)
        order.append(key)

    for i in range(3):
        put(i)
    assert store.pending() == 0 and primary.order == order

    s3_instance.kill()  # a crash, mid-run
    for i in range(3, 8):
        put(i)
    put(1, b'{"round": 1, "rescored": true}\n')  # overwrite an uploaded object while down
    assert store.pending() == 6
    assert store.get(_objects(1)[0]) == b'{"round": 1, "rescored": true}\n'
    assert store.exists(_objects(5)[0])
    assert endpoint.secret_key.encode() not in spool_bytes(tmp_path / "spool")
    with pytest.raises(StoreError):  # a listing needs the primary: no partial answer while it is down
        store.list("rounds/")

    s3_instance.start()  # same data dir, same ports
    assert store.flush().uploaded == 6
    assert primary.order == order
    store.close()
    _check_on_server(endpoint, bucket_name, written)
    warnings = [r.getMessage() for r in caplog.records if r.name == "storage.spool" and r.levelno >= logging.WARNING]
    assert len(warnings) == 2  # one for "down", one for "back"
    assert endpoint.secret_key not in caplog.text
