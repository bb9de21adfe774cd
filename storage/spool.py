"""A store that never loses a write when its primary (S3) is down: a local spool.

``SpoolingStore(primary, spool_dir)`` is a ``Store``. A put goes to the
primary; when the primary fails with ``StoreError`` the object is written
atomically and durably to ``spool_dir`` instead and the caller carries on.
``flush()`` uploads spooled objects oldest first and stops at the first
failure, so the primary receives objects in the order they were put. While
anything is spooled, a put first tries to flush, and spools behind the
backlog if the primary is still down: a newer object never lands before an
older one.

Spooled objects are visible to ``get``/``exists``/``list`` before upload, and
the spool survives restarts (a new instance on the same directory picks up
the backlog). One process per spool directory.

On disk, one file per object, named by a sequence number that only grows::

    spool_dir/00000000000000000042.obj   header line (JSON: key, content type, size, sha256) + the bytes
    spool_dir/quarantine/                entries that failed their checksum (kept, never uploaded)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from storage import keys
from storage.base import KeyNotFound, Store, StoreError

logger = logging.getLogger(__name__)
T = TypeVar("T")

_MAGIC = b"SPOOL1 "
_SUFFIX = ".obj"
_SEQ_DIGITS = 20


@dataclass(frozen=True)
class FlushResult:
    uploaded: int
    """Objects uploaded (and removed from the spool) by this flush."""
    pending: int
    """Objects still spooled afterwards (0 unless the primary failed)."""
    error: str | None = None
    """The failure that stopped the flush, if any."""


@dataclass(frozen=True)
class _Entry:
    seq: int
    key: str
    content_type: str
    path: Path


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SpoolingStore:
    """``primary`` with a durable local spool under ``spool_dir`` for when it fails.

    ``retry_after_s``: after a failure, puts go straight to the spool (no
    attempt on the primary) until this many seconds have passed, so an outage
    costs one timeout per interval rather than one per object. ``flush()``
    always tries.
    """

    def __init__(self, primary: Store, spool_dir: str | os.PathLike[str], *, retry_after_s: float = 5.0) -> None:
        self.primary = primary
        self.spool_dir = Path(spool_dir)
        self.retry_after_s = retry_after_s
        self._lock = threading.RLock()
        self._entries: list[_Entry] = []  # by seq, oldest first
        self._latest: dict[str, _Entry] = {}  # key -> newest spooled version
        self._next_seq = 1
        self._down = False
        self._outage_uploaded = 0  # objects uploaded by flushes that stopped part-way in this outage
        self._failed_at = float("-inf")
        try:
            self.spool_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create spool directory {self.spool_dir}: {exc}") from exc
        self._load()
        if self._entries:
            self._down = True  # the backlog of an earlier outage; "back" is logged when it drains
            logger.warning(
                "store spool %s holds %d object(s) from an earlier run; they upload on the next flush",
                self.spool_dir,
                len(self._entries),
            )

    def __repr__(self) -> str:
        return f"SpoolingStore({self.primary!r}, {str(self.spool_dir)!r})"

    # -- the spool on disk ---------------------------------------------------------------

    def _load(self) -> None:
        for tmp in self.spool_dir.glob(".*.tmp"):  # a write cut short by a crash: never acknowledged
            tmp.unlink(missing_ok=True)
        for path in sorted(self.spool_dir.glob("*" + _SUFFIX)):
            stem = path.name[: -len(_SUFFIX)]
            if not (stem.isdigit() and len(stem) == _SEQ_DIGITS):
                continue
            try:
                key, content_type, _data = self._read(path)
            except StoreError as exc:
                self._quarantine(path, str(exc))
                continue
            self._add(_Entry(int(stem), key, content_type, path))
        if self._entries:
            self._next_seq = self._entries[-1].seq + 1

    def _add(self, entry: _Entry) -> None:
        self._entries.append(entry)
        self._latest[entry.key] = entry

    def _read(self, path: Path) -> tuple[str, str, bytes]:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise StoreError(f"cannot read spool entry {path}: {exc}") from exc
        head, sep, data = raw.partition(b"\n")
        try:
            if not (sep and head.startswith(_MAGIC)):
                raise ValueError("no spool header")
            meta = json.loads(head[len(_MAGIC) :])
            if len(data) != meta["size"] or hashlib.sha256(data).hexdigest() != meta["sha256"]:
                raise ValueError("size or checksum mismatch")
            return keys.check(meta["key"]), str(meta["content_type"]), data
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"corrupt spool entry {path}: {exc}") from exc

    def _quarantine(self, path: Path, reason: str) -> None:
        target = self.spool_dir / "quarantine" / path.name
        try:
            target.parent.mkdir(exist_ok=True)
            os.replace(path, target)
        except OSError as exc:
            reason += f" (and it cannot be moved to quarantine: {exc})"
        logger.error("store spool: %s; moved to %s, not uploaded", reason, target.parent)

    def _spool(self, key: str, data: bytes, content_type: str) -> None:
        header = json.dumps(
            {"key": key, "content_type": content_type, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()},
            ensure_ascii=True,
        )
        try:
            fd, tmp = tempfile.mkstemp(dir=self.spool_dir, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(_MAGIC + header.encode("ascii") + b"\n")
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                while True:
                    path = self.spool_dir / f"{self._next_seq:0{_SEQ_DIGITS}d}{_SUFFIX}"
                    self._next_seq += 1
                    try:
                        os.link(tmp, path)  # unlike os.replace, never overwrites an entry
                        break
                    except FileExistsError:
                        continue
            finally:
                Path(tmp).unlink(missing_ok=True)
            _fsync_dir(self.spool_dir)
        except OSError as exc:
            raise StoreError(f"cannot spool {key!r} to {self.spool_dir}: {exc}") from exc
        self._add(_Entry(int(path.name[: -len(_SUFFIX)]), key, content_type, path))

    def _remove(self, entry: _Entry) -> None:
        entry.path.unlink(missing_ok=True)
        self._entries.remove(entry)
        if self._latest.get(entry.key) is entry:
            del self._latest[entry.key]

    # -- outage bookkeeping: one log line per transition -----------------------------------

    reports_outages = True
    """This store logs an outage once when it starts and once when it ends: callers need not."""

    @property
    def down(self) -> bool:
        """True from the first failure of the primary until it answers again with nothing left to upload."""
        return self._down

    def _went_down(self, exc: StoreError) -> None:
        self._failed_at = time.monotonic()
        if not self._down:
            self._down = True
            self._outage_uploaded = 0
            logger.warning(
                "store %r unavailable, spooling to %s until it is back: %s", self.primary, self.spool_dir, exc
            )

    def _came_back(self, uploaded: int) -> None:
        if self._down:
            self._down = False
            logger.warning(
                "store %r is back: uploaded %d spooled object(s)", self.primary, self._outage_uploaded + uploaded
            )
        self._outage_uploaded = 0

    # -- Store ----------------------------------------------------------------------------

    def pending(self) -> int:
        """Objects spooled and not yet uploaded."""
        with self._lock:
            return len(self._entries)

    def flush(self) -> FlushResult:
        """Upload spooled objects oldest first; stop at the first failure (order is kept)."""
        with self._lock:
            uploaded = 0
            while self._entries:
                entry = self._entries[0]
                try:
                    key, content_type, data = self._read(entry.path)
                except StoreError as exc:  # not the primary's fault: set it aside and go on
                    self._quarantine(entry.path, str(exc))
                    self._remove(entry)
                    continue
                failed = self._put_primary(key, data, content_type)
                if failed is not None:
                    self._outage_uploaded += uploaded
                    self._went_down(failed)
                    return FlushResult(uploaded, len(self._entries), str(failed))
                self._remove(entry)  # only once the primary has it
                uploaded += 1
            self._came_back(uploaded)
            return FlushResult(uploaded, 0)

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Write to the primary, or to the spool if the primary fails (the caller is not failed)."""
        keys.check(key)
        data = bytes(data)
        with self._lock:
            if self._entries and time.monotonic() - self._failed_at >= self.retry_after_s:
                self.flush()
            if self._entries or time.monotonic() - self._failed_at < self.retry_after_s:
                self._spool(key, data, content_type)  # behind the backlog, or the primary just failed
                return
            failed = self._put_primary(key, data, content_type)
            if failed is not None:
                self._went_down(failed)
                self._spool(key, data, content_type)
                return
            self._came_back(0)

    def _put_primary(self, key: str, data: bytes, content_type: str) -> StoreError | None:
        """A write to the primary: None once it has the object, else the error of an outage (spool and retry);
        ``KeyNotFound`` (no such bucket) is raised, as waiting cannot fix it."""
        try:
            self.primary.put(key, data, content_type)
        except KeyNotFound:
            raise
        except StoreError as exc:
            return exc
        return None

    def _from_primary(self, read: Callable[[], T]) -> T:
        """A read of the primary that feeds the outage bookkeeping (reads fail first in an outage)."""
        try:
            result = read()
        except KeyNotFound:
            self._answered()
            raise
        except StoreError as exc:
            with self._lock:
                self._went_down(exc)
            raise
        self._answered()
        return result

    def _answered(self) -> None:
        with self._lock:
            if self._down and not self._entries:  # with a backlog, "back" waits for the flush that drains it
                self._came_back(0)

    def get(self, key: str) -> bytes:
        with self._lock:
            entry = self._latest.get(key)
            if entry is not None:
                return self._read(entry.path)[2]
        return self._from_primary(lambda: self.primary.get(key))

    def exists(self, key: str) -> bool:
        with self._lock:
            if key in self._latest:
                return True
        return self._from_primary(lambda: self.primary.exists(key))

    def list(self, prefix: str = "") -> list[str]:
        with self._lock:
            spooled = {k for k in self._latest if k.startswith(prefix)}
        return sorted(spooled.union(self._from_primary(lambda: self.primary.list(prefix))))

    def presign(self, key: str, expires_s: int = 7 * 24 * 3600) -> str:
        """The primary's presigned URL (a spooled object's URL works once it is uploaded)."""
        presign = getattr(self.primary, "presign", None)
        if presign is None:
            raise TypeError(f"{self.primary!r} cannot presign URLs")
        url: str = presign(key, expires_s=expires_s)
        return url

    def close(self) -> None:
        close = getattr(self.primary, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> SpoolingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
