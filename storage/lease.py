"""One daemon per store: a lease a second daemon cannot take while the first holds it.

Two daemons writing rounds into one store overwrite each other's rounds and leave a ledger that
disagrees with the records. The daemon takes the store's lease before it writes anything, renews
it once per round and releases it when it stops::

    lease = open_lease(store, ttl_s=720)
    lease.acquire()        # LeaseHeld naming the holder (host, pid, since) when another process holds it
    lease.renew()          # once per round; LeaseLost when the lease is no longer this process's
    lease.release()        # at exit

**A local directory** (``FileLease``): the lock file ``daemon-lease.json`` in the store's root,
locked with ``flock`` for as long as the holder's process lives and carrying the holder as JSON.
The kernel drops the lock when the process ends, however it ends (``kill -9`` included), so the
next start takes it at once. The descriptor is not inherited by the servers the daemon starts
(Python opens files close-on-exec), so an orphaned LM server never keeps a store locked.

**S3** (``ObjectLease``: any store with conditional requests, ``S3Store`` and ``MemoryStore``):
the lease object ``daemon-lease.json`` holds the holder, a random token and a time to live. It is
created only while absent (``If-None-Match: *``), renewed or taken over only while its ETag is the
one read (``If-Match``) and deleted only while it is still this holder's (``If-Match`` on DELETE),
so of two daemons racing for it exactly one wins. A lease not renewed for its ``ttl_s`` seconds
has expired and may be taken over; its age is the server's ``Date`` minus the object's
``Last-Modified``, both the server's clock, so no machine's clock skew enters. A lease whose
holder ran on this very machine (same host name, boot id and pid namespace) and whose process is
gone may be taken over at once: a daemon killed and restarted on one machine does not wait for
the expiry. The SeaweedFS test server (4.48) answers 412 to a second create, a stale ``If-Match``
PUT and a stale ``If-Match`` DELETE (``tests/storage/test_lease.py``); AWS S3 documents all three.
A server that ignores ``If-Match`` is detected when the lease is taken (a write under a wrong ETag
must fail) and logged: the lease then cannot keep a second daemon out.

Limits: a holder cut off from S3 for longer than ``ttl_s`` may lose the lease to a daemon on
another machine; it learns so at its next renewal (``LeaseLost``) and stops, but a round it
spooled during the outage may upload before that renewal.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from storage import keys
from storage.errors import (
    ConditionFailed,
    KeyNotFound,
    LeaseError,
    LeaseHeld,
    LeaseLost,
    PermanentStoreError,
    StoreError,
    classify_os_error,
)
from storage.lease_holder import Holder

log = logging.getLogger(__name__)

SCHEMA = "consensus-validator/lease/1"
_TAKE_ATTEMPTS = 5  # a lease that changes hands this often while we try is reported as held


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Lease(Protocol):
    """What the daemon needs of a lease, whatever the store."""

    where: str

    def acquire(self) -> None:
        """Take the lease; ``LeaseHeld`` naming the holder when another process has it."""

    def renew(self) -> None:
        """Keep it (once per round); ``LeaseLost`` when it is no longer this process's."""

    def release(self) -> None:
        """Give it up (no error when it was lost meanwhile)."""


class FileLease:
    """The lock file of a local store, ``flock``-ed for the life of the holder's process."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.holder: Holder | None = None
        self._fd: int | None = None

    def __repr__(self) -> str:
        return f"FileLease({self.where!r})"

    def _same_file(self, fd: int) -> bool:
        """The locked descriptor is still the file at the path (nobody removed or replaced it)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        mine = os.fstat(fd)
        return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)

    def _read_holder(self, fd: int) -> Holder | None:
        # the holder writes its JSON right after locking: a read in that instant finds it empty or torn
        for _ in range(10):
            try:
                return Holder.from_json(json.loads(os.pread(fd, 65536, 0))["holder"])
            except (ValueError, KeyError, TypeError):
                time.sleep(0.02)
        return None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        for _ in range(_TAKE_ATTEMPTS):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                raise classify_os_error(f"cannot open the store's lock file {self.path}", exc) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._read_holder(fd)
                os.close(fd)
                who = holder.describe() if holder is not None else "holder unreadable"
                raise LeaseHeld(
                    f"store {self.path.parent} is in use by another daemon ({who}; lock file "
                    f"{self.path}); stop that daemon first, or use another store",
                    holder,
                ) from None
            except OSError as exc:
                os.close(fd)
                raise classify_os_error(f"cannot lock the store's lock file {self.path}", exc) from exc
            if not self._same_file(fd):  # removed or replaced between our open and our lock: open it again
                os.close(fd)
                continue
            holder = Holder.me()
            data = (json.dumps({"schema": SCHEMA, "holder": holder.to_json()}) + "\n").encode()
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, data, 0)
                os.fsync(fd)
            except OSError as exc:
                os.close(fd)
                raise classify_os_error(f"cannot write the store's lock file {self.path}", exc) from exc
            self._fd, self.holder = fd, holder
            return
        raise LeaseError(f"the store's lock file {self.path} kept being replaced while this daemon tried to lock it")

    def renew(self) -> None:
        if self._fd is None:
            raise LeaseLost(f"the store's lock file {self.path} is not held by this process")
        if not self._same_file(self._fd):
            raise LeaseLost(
                f"the store's lock file {self.path} was removed or replaced while this daemon held it; "
                f"another daemon may be writing to the store: stopping"
            )

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if self._same_file(fd):
                os.ftruncate(fd, 0)  # an empty lock file: nobody holds the store
        except OSError:
            pass  # closing drops the lock all the same
        os.close(fd)


class ConditionalStore(Protocol):
    """A store with conditional requests (``storage.s3.S3Store``, ``storage.memory.MemoryStore``)."""

    def put_new(self, key: str, data: bytes, content_type: str = ...) -> str: ...
    def replace(self, key: str, data: bytes, etag: str, content_type: str = ...) -> str: ...
    def delete_if(self, key: str, etag: str) -> None: ...
    def get_versioned(self, key: str) -> tuple[bytes, str, float]: ...


@dataclass(frozen=True)
class _Seen:
    """A lease object as read: its holder (None: unreadable), token, time to live and whether it was released."""

    holder: Holder | None
    token: str
    ttl_s: float
    released: bool

    @classmethod
    def parse(cls, data: bytes) -> _Seen:
        try:
            doc = json.loads(data)
            return cls(
                Holder.from_json(doc.get("holder")),
                str(doc.get("token", "")),
                float(doc["ttl_s"]),
                doc.get("released") is True,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return cls(None, "", 0.0, False)


class ObjectLease:
    """A lease object with conditional writes and an expiry (S3)."""

    def __init__(self, store: ConditionalStore, *, ttl_s: float, where: str) -> None:
        if not ttl_s > 0:
            raise ValueError(f"a lease's ttl_s must be > 0, got {ttl_s}")
        self.store = store
        self.ttl_s = float(ttl_s)
        self.where = where
        self.key = keys.lease()
        self.holder: Holder | None = None
        self._token = ""
        self._etag: str | None = None
        self._renewals = 0

    def __repr__(self) -> str:
        return f"ObjectLease({self.where!r}, ttl_s={self.ttl_s:g})"

    def _body(self, *, released: bool = False) -> bytes:
        assert self.holder is not None
        doc = {
            "schema": SCHEMA,
            "holder": self.holder.to_json(),
            "token": self._token,
            "ttl_s": self.ttl_s,
            "renewals": self._renewals,
            "released": released,
        }
        return (json.dumps(doc) + "\n").encode()

    def _free(self, seen: _Seen, age_s: float) -> str | None:
        """Why a lease someone else wrote may be taken over, or None when it is held."""
        if seen.released:
            return "it was released"
        ttl = seen.ttl_s if seen.holder is not None else self.ttl_s  # an unreadable lease: our own time to live
        if age_s > ttl:
            return f"it expired: not renewed for {age_s:.0f} s, its time to live {ttl:.0f} s"
        if seen.holder is not None and seen.holder.gone_here():
            return f"its holder ({seen.holder.describe()}) ran on this machine and is gone"
        return None

    def _held(self, seen: _Seen, age_s: float) -> LeaseHeld:
        who = seen.holder.describe() if seen.holder is not None else "holder unreadable"
        ttl = seen.ttl_s if seen.holder is not None else self.ttl_s
        return LeaseHeld(
            f"store {self.where} is in use by another daemon ({who}; lease {self.where}/{self.key} "
            f"renewed {age_s:.0f} s ago, expires in {max(0.0, ttl - age_s):.0f} s unless renewed); "
            f"stop that daemon first, or use another store",
            seen.holder,
        )

    def acquire(self) -> None:
        if self._etag is not None:
            return
        self.holder, self._token, self._renewals = Holder.me(), uuid.uuid4().hex, 0
        body = self._body()
        last: LeaseHeld | None = None
        for _ in range(_TAKE_ATTEMPTS):
            try:
                data, etag, age = self.store.get_versioned(self.key)
            except KeyNotFound:
                try:
                    self._etag = self.store.put_new(self.key, body, "application/json")
                except ConditionFailed:
                    continue  # another daemon created it between our read and our write: read it
                break
            seen = _Seen.parse(data)
            if seen.token == self._token:  # our own write, whose answer was lost
                self._etag = etag
                break
            why = self._free(seen, age)
            if why is None:
                raise self._held(seen, age)
            last = self._held(seen, age)
            try:
                self._etag = self.store.replace(self.key, body, etag, "application/json")
            except ConditionFailed:
                continue  # it changed hands meanwhile: read it again
            log.warning(
                "took over the lease of store %s from %s: %s",
                self.where,
                seen.holder.describe() if seen.holder is not None else "an unreadable holder",
                why,
            )
            break
        else:
            raise last or LeaseError(
                f"the lease of store {self.where} kept changing while this daemon tried to "
                f"take it; another daemon is starting: try again"
            )
        self._check_conditions()

    def _check_conditions(self) -> None:
        """A write under a wrong ETag must fail; a server that ignores If-Match cannot keep a second daemon out."""
        try:
            etag = self.store.replace(self.key, self._body(), '"00000000000000000000000000000000"', "application/json")
        except ConditionFailed:
            return
        except StoreError as exc:
            log.warning("could not check that the store honours conditional writes (%s)", _one_line(str(exc)))
            return
        self._etag = etag
        log.warning(
            "store %s ignores If-Match on writes: its lease cannot keep a second daemon out; make sure only "
            "one daemon writes to it",
            self.where,
        )

    def renew(self) -> None:
        if self._etag is None:
            raise LeaseLost(f"the lease of store {self.where} is not held by this process")
        self._renewals += 1
        try:
            self._etag = self.store.replace(self.key, self._body(), self._etag, "application/json")
            return
        except ConditionFailed:
            pass
        except PermanentStoreError:
            raise
        except StoreError as exc:  # an outage: the lease runs on until it expires; the next round tries again
            log.warning(
                "cannot renew the lease of store %s (%s); without a renewal it expires %.0f s after the last one",
                self.where,
                _one_line(str(exc)),
                self.ttl_s,
            )
            return
        try:
            data, etag, _age = self.store.get_versioned(self.key)
        except StoreError as exc:
            self._etag = None
            raise LeaseLost(
                f"the lease of store {self.where} is no longer this daemon's ({_one_line(str(exc))}); "
                f"another daemon may be writing to the store: stopping"
            ) from None
        seen = _Seen.parse(data)
        if seen.token == self._token:  # our previous renewal landed and its answer was lost
            self._etag = etag
            return
        self._etag = None
        who = seen.holder.describe() if seen.holder is not None else "an unreadable holder"
        raise LeaseLost(
            f"the lease of store {self.where} was taken over by another daemon ({who}) while this one held it: stopping"
        )

    def release(self) -> None:
        etag, self._etag = self._etag, None
        if etag is None:
            return
        try:
            self.store.delete_if(self.key, etag)
            return
        except ConditionFailed:
            return  # no longer ours: nothing to give up
        except StoreError as exc:
            first = exc
        try:  # a server without conditional deletes: mark it released with a conditional write instead
            self.store.replace(self.key, self._body(released=True), etag, "application/json")
        except ConditionFailed:
            return
        except StoreError:
            log.warning(
                "could not release the lease of store %s (%s); it expires %.0f s after its last renewal",
                self.where,
                _one_line(str(first)),
                self.ttl_s,
            )


AnyLease = FileLease | ObjectLease


def open_lease(store: object, *, ttl_s: float) -> AnyLease:
    """The lease of ``store``: a lock file in a local directory, a lease object where writes can be conditional.

    A ``SpoolingStore`` is leased through its primary (a lease is never spooled). ``ttl_s`` is how long
    an object lease lives without a renewal (a lock file lives as long as its process). ``TypeError`` for a
    store that can have neither.
    """
    from storage.local import LocalStore

    target = getattr(store, "primary", store)
    if isinstance(target, LocalStore):
        return FileLease(Path(target.root).joinpath(*keys.lease().split("/")))
    if all(callable(getattr(target, m, None)) for m in ("put_new", "replace", "delete_if", "get_versioned")):
        bucket = getattr(target, "bucket", None)
        if bucket is not None:
            prefix = getattr(target, "prefix", "")
            where = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
        else:
            where = "memory://"
        # ignore[arg-type]: ``target`` is an object store by the duck test above, not by its declared type
        return ObjectLease(target, ttl_s=ttl_s, where=where)  # type: ignore[arg-type]
    raise TypeError(f"{target!r} can hold no lease (neither a local directory nor a store with conditional writes)")
