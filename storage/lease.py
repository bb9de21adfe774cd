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

**S3** (``ObjectLease``, ``storage.lease_object``: any store with conditional requests, ``S3Store`` and ``MemoryStore``):
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
import os
import time
from pathlib import Path
from typing import Protocol

from storage import keys
from storage.errors import LeaseError, LeaseHeld, LeaseLost, classify_os_error
from storage.lease_holder import SCHEMA as SCHEMA
from storage.lease_holder import TAKE_ATTEMPTS, Held, Holder
from storage.lease_object import ConditionalStore as ConditionalStore
from storage.lease_object import ObjectLease
from storage.local import LocalStore


class Lease(Protocol):
    """What the daemon needs of a lease, whatever the store."""

    where: str

    def acquire(self) -> None:
        """Take the lease; ``LeaseHeld`` naming the holder when another process has it."""

    def renew(self) -> None:
        """Keep it (once per round); ``LeaseLost`` when it is no longer this process's."""

    def release(self) -> None:
        """Give it up (no error when it was lost meanwhile)."""


class FileLease(Held[int]):
    """The lock file of a local store, ``flock``-ed for the life of the holder's process."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.holder: Holder | None = None
        self._holds: int | None = None  # the locked descriptor

    def __repr__(self) -> str:
        return f"FileLease({self.where!r})"

    @property
    def what(self) -> str:
        return f"the store's lock file {self.path}"

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
        if self._holds is not None:
            return
        for _ in range(TAKE_ATTEMPTS):
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
            self._holds, self.holder = fd, holder
            return
        raise LeaseError(f"the store's lock file {self.path} kept being replaced while this daemon tried to lock it")

    def renew(self) -> None:
        if not self._same_file(self._holding()):
            raise LeaseLost(
                f"{self.what} was removed or replaced while this daemon held it; "
                f"another daemon may be writing to the store: stopping"
            )

    def _let_go(self, fd: int) -> None:
        try:
            if self._same_file(fd):
                os.ftruncate(fd, 0)  # an empty lock file: nobody holds the store
        except OSError:
            pass  # closing drops the lock all the same
        os.close(fd)


AnyLease = FileLease | ObjectLease


def open_lease(store: object, *, ttl_s: float) -> AnyLease:
    """The lease of ``store``: a lock file in a local directory, a lease object where writes can be conditional.

    A ``SpoolingStore`` is leased through its primary (a lease is never spooled). ``ttl_s`` is how long
    an object lease lives without a renewal (a lock file lives as long as its process). ``TypeError`` for a
    store that can have neither.
    """

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
