"""What can go wrong with a store, split by whether waiting can fix it.

The daemon waits out an outage (the round is spooled, the ledger read is
retried) but must stop at once on what no amount of waiting heals: a wrong
key, a bucket that does not exist, a path it can never write. Every store
raises one of these; all derive from ``OSError`` so ``except OSError`` still
catches them::

    OSError
    └── StoreError                  a store operation failed (the message names the key and the cause)
        ├── KeyNotFound (+KeyError) no object under that key
        ├── TransientStoreError     connection refused or reset, timeout, HTTP 5xx / throttling: retry later
        ├── PermanentStoreError     authentication, authorisation, missing bucket, no credentials,
        │                           an impossible local path: fix the configuration, then restart
        ├── ConditionFailed         a conditional write or delete found the object changed (or absent, or
        │                           present for a create-if-absent): S3 If-Match / If-None-Match
        └── LeaseError              one daemon per store (``storage.lease``)
            ├── LeaseHeld           another process holds the store's lease; ``holder`` names it
            └── LeaseLost           this process's lease was taken over (or its lock file replaced)

A plain ``StoreError`` is one nobody classified; callers treat it as
transient (waiting is the safe default when in doubt, failing fast is
reserved for causes we recognise). ``PermanentStoreError.kind`` names the
cause in words an operator knows, and ``hint`` says what to change.
"""

from __future__ import annotations

import errno


class StoreError(OSError):
    """A store operation failed; the message names the key."""


class KeyNotFound(StoreError, KeyError):
    """No object under that key."""


class TransientStoreError(StoreError):
    """The store is unreachable or overloaded right now (refused, timed out, 5xx): retrying may succeed."""


class PermanentStoreError(StoreError):
    """The store can never work as configured: waiting will not help, the operator must change something.

    ``kind``: "authentication", "authorisation", "missing bucket", "no credentials" or "unusable path".
    """

    def __init__(self, message: str, *, kind: str, hint: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.hint = hint

    def __str__(self) -> str:
        text = OSError.__str__(self)
        return f"{text} ({self.hint})" if self.hint else text


class ConditionFailed(StoreError):
    """A conditional write or delete did not apply: the object is not in the state the caller named."""


class LeaseError(StoreError):
    """One daemon per store: the store's lease could not be taken or kept (``storage.lease``)."""


class LeaseHeld(LeaseError):
    """Another process holds the store's lease; ``holder`` is who (host, pid, since), None when unreadable."""

    def __init__(self, message: str, holder: object = None) -> None:
        super().__init__(message)
        self.holder = holder


class LeaseLost(LeaseError):
    """The lease this process held is no longer its own: another took it over, or its lock file was replaced."""


# local file-system errors that no retry fixes: the path itself is impossible or forbidden
_PERMANENT_ERRNO = {
    errno.ENOTDIR: "a component of the path is a regular file, not a directory",
    errno.EISDIR: "the path is a directory where a file is needed",
    errno.EEXIST: "a file is in the way of a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the path is too long",
    errno.ELOOP: "the path loops through symbolic links",
}


def classify_os_error(message: str, exc: OSError) -> StoreError:
    """A local file-system failure as a ``PermanentStoreError`` (bad path, no permission) or a ``StoreError``.

    Disk full, I/O errors and stale network mounts stay unclassified (they may heal).
    """
    reason = _PERMANENT_ERRNO.get(exc.errno or 0)
    if reason is None:
        return StoreError(f"{message}: {exc}")
    return PermanentStoreError(
        f"{message}: {exc}", kind="unusable path", hint=f"{reason}; choose another --store directory"
    )
