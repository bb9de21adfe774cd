"""The store interface every backend implements: bytes by key.

Keys are '/'-separated strings built only by ``storage.keys``. Local
directories, memory and S3 (``storage.s3``) all look the same to callers; the
spool (``storage.spool``) wraps any of them for outages.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

# the error tree lives in storage.errors; re-exported here, where callers have always imported it
from storage.errors import KeyNotFound, PermanentStoreError, StoreError, TransientStoreError

__all__ = ["KeyNotFound", "PermanentStoreError", "Store", "StoreError", "TransientStoreError"]


@runtime_checkable
class Store(Protocol):
    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Write ``data`` under ``key`` atomically (readers see the old or the new bytes, never a mix)."""

    def get(self, key: str) -> bytes:
        """The bytes under ``key``; raises ``KeyNotFound``."""

    def exists(self, key: str) -> bool: ...

    def list(self, prefix: str = "") -> list[str]:
        """Every key starting with ``prefix``, sorted."""
