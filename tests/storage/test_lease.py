"""One daemon per store (storage.lease): a lock file on local disk, a lease object with conditional writes on S3.

The other holder is a real process (tests/storage/lease_holder.py) wherever the test is about two daemons.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storage import keys
from storage.errors import ConditionFailed, KeyNotFound, LeaseHeld, LeaseLost, StoreError, TransientStoreError
from storage.lease import FileLease, Holder, ObjectLease, open_lease
from storage.local import LocalStore
from storage.memory import MemoryStore
from storage.spool import SpoolingStore

ROOT = Path(__file__).resolve().parents[2]
HOLDER = ROOT / "tests" / "storage" / "lease_holder.py"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` and directory, with its bytes and modification time."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>", p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


class Holding:
    """A real process holding a store's lease (lease_holder.py) until ``release`` or ``kill``."""

    def __init__(self, mode: str, uri: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, str(HOLDER), mode, uri, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        )
        assert self.proc.stdout is not None
        self.first = self.proc.stdout.readline().strip()
        if not self.first.startswith("held "):
            self.proc.kill()
            raise AssertionError(f"the holder did not take the lease: {self.first!r} {self.proc.stderr.read()}")
        self.pid = self.proc.pid

    def release(self) -> str:
        out, _err = self.proc.communicate(timeout=30)
        return out.strip()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.communicate(timeout=30)  # reaped: a zombie would still count as alive


@pytest.fixture
def holder_processes():
    started: list[Holding] = []

    def start(*args, **kwargs) -> Holding:
        h = Holding(*args, **kwargs)
        started.append(h)
        return h

    yield start
    for h in started:
        if h.proc.poll() is None:
            h.kill()


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# ---- the holder ---------------------------------------------------------------------------------------------------
def test_holder_names_host_pid_and_since():
    me = Holder.me()
    assert me.host == socket.gethostname() and me.pid == os.getpid() and me.since.endswith("Z")
    assert me.describe() == f"host {me.host}, pid {me.pid}, since {me.since}"
    assert Holder.from_json(me.to_json()) == me
    assert Holder.from_json({"host": "h"}) is None and Holder.from_json(None) is None


def test_a_holder_is_gone_only_when_it_ran_here_and_its_process_ended():
    me = Holder.me()
    assert not me.gone_here()  # this process
    gone = Holder(me.host, dead_pid(), me.since, me.boot, me.pidns)
    assert gone.gone_here() == bool(me.boot)  # without a boot id nothing is known about pids
    assert not Holder("elsewhere", gone.pid, me.since, me.boot, me.pidns).gone_here()
    assert not Holder(me.host, gone.pid, me.since, "another-boot", me.pidns).gone_here()
    assert not Holder(me.host, gone.pid, me.since, me.boot, "pid:[1]").gone_here()


# ---- the lock file of a local store -------------------------------------------------------------------------------
def test_open_lease_picks_the_lock_file_for_a_directory_and_the_object_for_conditional_stores(tmp_path):
    assert isinstance(open_lease(LocalStore(tmp_path / "s"), ttl_s=60), FileLease)
    assert open_lease(LocalStore(tmp_path / "s"), ttl_s=60).path == tmp_path / "s" / keys.lease()
    assert isinstance(open_lease(MemoryStore(), ttl_s=60), ObjectLease)
    spooled = SpoolingStore(MemoryStore(), tmp_path / "spool")
    assert open_lease(spooled, ttl_s=60).store is spooled.primary  # never through the spool

    class Plain:
        pass

    with pytest.raises(TypeError, match="no lease"):
        open_lease(Plain(), ttl_s=60)


def test_a_second_lock_in_the_same_process_is_refused_naming_the_holder(tmp_path):
    first, second = FileLease(tmp_path / "store" / "lock"), FileLease(tmp_path / "store" / "lock")
    first.acquire()
    with pytest.raises(LeaseHeld) as err:
        second.acquire()
    assert err.value.holder == first.holder
    assert f"pid {os.getpid()}" in str(err.value) and first.holder.since in str(err.value)
    assert "\n" not in str(err.value) and isinstance(err.value, OSError)
    first.renew()
    first.release()
    assert (tmp_path / "store" / "lock").read_bytes() == b""  # an empty lock file: nobody holds the store
    second.acquire()
    second.release()


def test_another_process_holding_a_local_store_is_named_and_nothing_in_the_store_changes(tmp_path, holder_processes):
    root = tmp_path / "store"
    (root / "rounds" / "round-000001").mkdir(parents=True)
    (root / "rounds" / "round-000001" / "input.json").write_text("{}")
    other = holder_processes("storage", str(root))
    before = snapshot(root)
    t = time.perf_counter()
    with pytest.raises(LeaseHeld) as err:
        open_lease(LocalStore(root), ttl_s=60).acquire()
    assert time.perf_counter() - t < 1.0
    holder = err.value.holder
    assert (holder.host, holder.pid) == (socket.gethostname(), other.pid)
    assert f"host {holder.host}, pid {other.pid}, since {holder.since}" in str(err.value)
    assert snapshot(root) == before
    assert other.release() == "released"
    lease = open_lease(LocalStore(root), ttl_s=60)
    lease.acquire()  # released: taken at once
    lease.release()


def test_a_killed_holder_of_a_local_store_releases_it_at_once(tmp_path, holder_processes):
    root = tmp_path / "store"
    other = holder_processes("storage", str(root))
    other.kill()
    lease = open_lease(LocalStore(root), ttl_s=60)
    lease.acquire()  # the kernel dropped the dead process's lock
    assert json.loads((root / keys.lease()).read_text())["holder"]["pid"] == os.getpid()
    lease.release()


def test_a_replaced_lock_file_is_a_lost_lease(tmp_path):
    lease = FileLease(tmp_path / "lock")
    lease.acquire()
    (tmp_path / "lock").unlink()
    with pytest.raises(LeaseLost, match="removed or replaced"):
        lease.renew()
    lease.release()
    lease.release()  # twice: no error


def test_a_lock_file_on_an_impossible_path_is_a_permanent_error(tmp_path):
    from storage.errors import PermanentStoreError

    (tmp_path / "file").write_text("x")
    with pytest.raises(PermanentStoreError, match="lock file"):
        FileLease(tmp_path / "file" / "store" / "lock").acquire()


# ---- the lease object (MemoryStore: the same conditional requests as S3) -----------------------------------------
def test_a_live_lease_object_is_refused_with_its_holder_and_expiry():
    clock = Clock()
    store = MemoryStore(clock)
    first = ObjectLease(store, ttl_s=100, where="memory://")
    first.acquire()
    written = store.get(keys.lease())
    clock.now += 30
    with pytest.raises(LeaseHeld) as err:
        ObjectLease(store, ttl_s=100, where="memory://").acquire()
    assert err.value.holder == first.holder
    assert "renewed 30 s ago, expires in 70 s" in str(err.value) and first.holder.describe() in str(err.value)
    assert store.get(keys.lease()) == written  # the refused acquirer wrote nothing


def test_an_expired_lease_is_taken_over_and_its_old_holder_learns_it_at_renewal(caplog):
    clock = Clock()
    store = MemoryStore(clock)
    first = ObjectLease(store, ttl_s=100, where="memory://")
    first.acquire()
    clock.now += 50
    first.renew()  # renewed: lives 100 s from now
    clock.now += 99
    with pytest.raises(LeaseHeld):
        ObjectLease(store, ttl_s=100, where="memory://").acquire()
    clock.now += 2  # 101 s without a renewal
    second = ObjectLease(store, ttl_s=100, where="memory://")
    with caplog.at_level(logging.WARNING, "storage.lease"):
        second.acquire()
    assert "expired" in caplog.text
    with pytest.raises(LeaseLost, match="taken over"):
        first.renew()
    first.release()  # not its own any more: nothing is deleted
    assert json.loads(store.get(keys.lease()))["token"] == second._token
    second.renew()
    second.release()
    assert not store.exists(keys.lease())


def test_a_lease_of_a_dead_process_on_this_machine_is_taken_at_once():
    store = MemoryStore()
    me = Holder.me()
    if not me.boot:
        pytest.skip("no kernel boot id here: a dead pid cannot be told from a reused one")
    gone = Holder(me.host, dead_pid(), me.since, me.boot, me.pidns)
    store.put(keys.lease(), json.dumps({"holder": gone.to_json(), "token": "t", "ttl_s": 3600}).encode())
    lease = ObjectLease(store, ttl_s=3600, where="memory://")
    lease.acquire()
    assert json.loads(store.get(keys.lease()))["holder"]["pid"] == os.getpid()


def test_a_released_or_unreadable_lease_object():
    clock = Clock()
    store = MemoryStore(clock)
    store.put(
        keys.lease(),
        json.dumps(
            {"holder": Holder("elsewhere", 1, "x").to_json(), "token": "t", "ttl_s": 3600, "released": True}
        ).encode(),
    )
    ObjectLease(store, ttl_s=60, where="memory://").acquire()  # released: free
    store.put(keys.lease(), b"\x00garbage")
    with pytest.raises(LeaseHeld, match="holder unreadable"):
        ObjectLease(store, ttl_s=60, where="memory://").acquire()
    clock.now += 61  # unreadable: it expires on the acquirer's own time to live
    ObjectLease(store, ttl_s=60, where="memory://").acquire()


class Flaky(MemoryStore):
    """A store whose next conditional write lands but whose answer is lost (or that is down)."""

    def __init__(self) -> None:
        super().__init__()
        self.lose_answer = False
        self.down = False

    def replace(self, key, data, etag, content_type="application/octet-stream"):
        if self.down:
            raise TransientStoreError("connection refused")
        new = super().replace(key, data, etag, content_type)
        if self.lose_answer:
            self.lose_answer = False
            raise TransientStoreError("read timeout after the write")
        return new


def test_a_renewal_whose_answer_was_lost_is_recognised_by_its_token():
    store = Flaky()
    lease = ObjectLease(store, ttl_s=60, where="memory://")
    lease.acquire()
    store.lose_answer = True
    lease.renew()  # warned; the write landed, so the ETag we hold is stale
    lease.renew()  # 412, then the token read back says it is ours
    lease.renew()
    lease.release()
    assert not store.exists(keys.lease())


def test_an_outage_at_renewal_is_waited_out(caplog):
    store = Flaky()
    lease = ObjectLease(store, ttl_s=60, where="memory://")
    lease.acquire()
    store.down = True
    with caplog.at_level(logging.WARNING, "storage.lease"):
        lease.renew()
    assert "cannot renew" in caplog.text
    store.down = False
    lease.renew()


def test_a_server_that_ignores_if_match_is_reported(caplog):
    class Ignoring(MemoryStore):
        def replace(self, key, data, etag, content_type="application/octet-stream"):
            self.put(key, data, content_type)
            return self._written[key][0]

    with caplog.at_level(logging.WARNING, "storage.lease"):
        ObjectLease(Ignoring(), ttl_s=60, where="memory://").acquire()
    assert "ignores If-Match" in caplog.text


def test_the_memory_store_answers_conditional_requests_as_s3_does():
    check_conditional_requests(MemoryStore())


def check_conditional_requests(store) -> None:
    key = keys.lease()
    etag = store.put_new(key, b"one", "application/json")
    with pytest.raises(ConditionFailed):
        store.put_new(key, b"two", "application/json")
    data, seen, age = store.get_versioned(key)
    assert (data, seen) == (b"one", etag) and 0 <= age < 5
    newer = store.replace(key, b"two", etag, "application/json")
    assert newer != etag
    with pytest.raises(ConditionFailed):
        store.replace(key, b"three", etag, "application/json")  # a stale ETag
    with pytest.raises(ConditionFailed):
        store.delete_if(key, etag)
    assert store.get(key) == b"two"
    store.delete_if(key, newer)
    with pytest.raises(KeyNotFound):
        store.get_versioned(key)
    with pytest.raises(ConditionFailed):
        store.replace(key, b"four", newer, "application/json")  # If-Match on no object
    with pytest.raises(ConditionFailed):
        store.delete_if(key, newer)
    assert not isinstance(ConditionFailed("x"), TransientStoreError) and isinstance(ConditionFailed("x"), StoreError)


# ---- a real S3 server (SeaweedFS) ---------------------------------------------------------------------------------
def s3_env(s3_endpoint) -> dict[str, str]:
    return {
        "VALIDATOR_S3__ENDPOINT_URL": s3_endpoint.url,
        "AWS_ACCESS_KEY_ID": s3_endpoint.access_key,
        "AWS_SECRET_ACCESS_KEY": s3_endpoint.secret_key,
    }


@pytest.mark.slow
def test_the_s3_test_server_honours_conditional_writes_and_deletes(s3_store):
    check_conditional_requests(s3_store)


@pytest.mark.slow
def test_two_processes_on_s3_one_lease(s3_endpoint, s3_store, holder_processes):
    uri = f"s3://{s3_store.bucket}/{s3_store.prefix}"
    other = holder_processes("storage", uri, "600", env=s3_env(s3_endpoint))
    t = time.perf_counter()
    with pytest.raises(LeaseHeld) as err:
        ObjectLease(s3_store, ttl_s=600, where=uri).acquire()
    assert time.perf_counter() - t < 2.0
    assert (err.value.holder.host, err.value.holder.pid) == (socket.gethostname(), other.pid)
    assert f"pid {other.pid}" in str(err.value) and "expires in" in str(err.value)
    # a second process refused too, and the refusal wrote nothing
    etag_before = s3_store.get_versioned(keys.lease())[1]
    refused = subprocess.run(
        [sys.executable, str(HOLDER), "storage", uri, "600"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **s3_env(s3_endpoint)},
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert refused.returncode == 2 and f"pid {other.pid}" in refused.stdout
    assert s3_store.get_versioned(keys.lease())[1] == etag_before
    assert s3_endpoint.secret_key not in refused.stdout + refused.stderr
    # killed on this machine: taken over at once, not after its 600 s
    other.kill()
    mine = ObjectLease(s3_store, ttl_s=600, where=uri)
    mine.acquire()
    mine.renew()
    mine.release()
    assert not s3_store.exists(keys.lease())
    # released: the next process takes it
    again = holder_processes("storage", uri, "600", env=s3_env(s3_endpoint))
    assert again.release() == "released"


@pytest.mark.slow
def test_an_s3_lease_expires_by_the_servers_clock(s3_store):
    uri = f"s3://{s3_store.bucket}/{s3_store.prefix}"
    elsewhere = Holder("another-machine", 4242, "2026-01-01T00:00:00Z", "boot", "pid:[1]")
    s3_store.put(keys.lease(), json.dumps({"holder": elsewhere.to_json(), "token": "t", "ttl_s": 2}).encode())
    with pytest.raises(LeaseHeld, match="host another-machine, pid 4242"):
        ObjectLease(s3_store, ttl_s=600, where=uri).acquire()
    time.sleep(3.2)  # Last-Modified has whole seconds
    lease = ObjectLease(s3_store, ttl_s=600, where=uri)
    lease.acquire()
    taken = ObjectLease(s3_store, ttl_s=600, where=uri)
    with pytest.raises(LeaseHeld):
        taken.acquire()
    lease.release()


@pytest.mark.slow
def test_a_second_daemon_on_an_s3_store_exits_2_at_once_naming_the_holder(
    s3_endpoint, s3_store, holder_processes, tmp_path
):
    uri = f"s3://{s3_store.bucket}/{s3_store.prefix}"
    env = {**s3_env(s3_endpoint), "VALIDATOR_CACHE_DIR": str(tmp_path / "cache")}
    first = holder_processes("daemon", uri, env=env, cwd=tmp_path)  # as `validator daemon` takes it
    before = {k: s3_store.get_versioned(k)[:2] for k in s3_store.list()}
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "validator", "daemon", "--rounds", "1", "--store", uri],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", **env},
    )
    seconds = time.perf_counter() - t
    assert done.returncode == 2 and seconds < 5.0, (seconds, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"host {socket.gethostname()}, pid {first.pid}, since " in lines[0]
    assert f"lease {uri}/{keys.lease()}" in lines[0] and s3_endpoint.secret_key not in done.stderr
    assert {k: s3_store.get_versioned(k)[:2] for k in s3_store.list()} == before
    assert first.release() == "released"
    assert not s3_store.exists(keys.lease())
