"""The store lease where writes can be conditional (S3, memory): ``ObjectLease``, re-exported by ``storage.lease``.

The lease object ``daemon-lease.json`` holds the holder, a random token and a time to live; it is
created only while absent, renewed, taken over or released only under the ETag last read, and may
be taken over once expired or once its holder is known gone from this machine. ``storage.lease``
describes the design, its limits and the local lock file beside it, and opens the right lease
for a store (``open_lease``).
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
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
)
from storage.lease_holder import SCHEMA, TAKE_ATTEMPTS, Held, Holder

# the lease's logger since before this module was split from storage.lease: logging settings name it
log = logging.getLogger("storage.lease")


def _one_line(text: str) -> str:
    return " ".join(text.split())


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


class ObjectLease(Held[str]):
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
        self._holds: str | None = None  # the lease object's ETag as this daemon last wrote it
        self._renewals = 0

    def __repr__(self) -> str:
        return f"ObjectLease({self.where!r}, ttl_s={self.ttl_s:g})"

    @property
    def what(self) -> str:
        return f"the lease of store {self.where}"

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
        if self._holds is not None:
            return
        self.holder, self._token, self._renewals = Holder.me(), uuid.uuid4().hex, 0
        body = self._body()
        last: LeaseHeld | None = None
        for _ in range(TAKE_ATTEMPTS):
            try:
                data, etag, age = self.store.get_versioned(self.key)
            except KeyNotFound:
                try:
                    self._holds = self.store.put_new(self.key, body, "application/json")
                except ConditionFailed:
                    continue  # another daemon created it between our read and our write: read it
                break
            seen = _Seen.parse(data)
            if seen.token == self._token:  # our own write, whose answer was lost
                self._holds = etag
                break
            why = self._free(seen, age)
            if why is None:
                raise self._held(seen, age)
            last = self._held(seen, age)
            try:
                self._holds = self.store.replace(self.key, body, etag, "application/json")
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
        self._holds = etag
        log.warning(
            "store %s ignores If-Match on writes: its lease cannot keep a second daemon out; make sure only "
            "one daemon writes to it",
            self.where,
        )

    def renew(self) -> None:
        held = self._holding()
        self._renewals += 1
        try:
            self._holds = self.store.replace(self.key, self._body(), held, "application/json")
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
            self._holds = None
            raise LeaseLost(
                f"the lease of store {self.where} is no longer this daemon's ({_one_line(str(exc))}); "
                f"another daemon may be writing to the store: stopping"
            ) from None
        seen = _Seen.parse(data)
        if seen.token == self._token:  # our previous renewal landed and its answer was lost
            self._holds = etag
            return
        self._holds = None
        who = seen.holder.describe() if seen.holder is not None else "an unreadable holder"
        raise LeaseLost(
            f"the lease of store {self.where} was taken over by another daemon ({who}) while this one held it: stopping"
        )

    def _let_go(self, etag: str) -> None:
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
