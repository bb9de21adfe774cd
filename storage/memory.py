"""An in-memory store for unit tests (same interface as the real ones, conditional requests included)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

from storage import keys
from storage.base import KeyNotFound
from storage.errors import ConditionFailed


class MemoryStore:
    """Objects in a dict. ``clock`` dates each write, for ``get_versioned``'s age (tests move it)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.objects: dict[str, bytes] = {}
        self.content_types: dict[str, str] = {}
        self.clock = clock
        self._written: dict[str, tuple[str, float]] = {}  # key -> (ETag, when written)
        self._writes = 0

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.objects[keys.check(key)] = bytes(data)
        self.content_types[key] = content_type
        self._writes += 1  # an ETag per write, as S3's differs for different bytes (and here for every write)
        digest = hashlib.md5(bytes(data) + str(self._writes).encode(), usedforsecurity=False).hexdigest()
        self._written[key] = (f'"{digest}"', self.clock())

    def get(self, key: str) -> bytes:
        try:
            return self.objects[key]
        except KeyError:
            raise KeyNotFound(f"no object {key!r} in memory store") from None

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)
        self.content_types.pop(key, None)
        self._written.pop(key, None)

    def exists(self, key: str) -> bool:
        return key in self.objects

    def list(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))

    # conditional requests, as storage.s3.S3Store has them (storage.lease uses them)
    def _etag(self, key: str) -> str | None:
        # an object set through ``objects`` directly (some tests do) has no recorded write: any ETag mismatches
        return self._written.get(key, ('"unrecorded"', 0.0))[0] if key in self.objects else None

    def put_new(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        if key in self.objects:
            raise ConditionFailed(f"{key!r} exists")
        self.put(key, data, content_type)
        return self._written[key][0]

    def replace(self, key: str, data: bytes, etag: str, content_type: str = "application/octet-stream") -> str:
        if self._etag(key) != etag:
            raise ConditionFailed(f"{key!r} is not at ETag {etag}")
        self.put(key, data, content_type)
        return self._written[key][0]

    def delete_if(self, key: str, etag: str) -> None:
        if self._etag(key) != etag:
            raise ConditionFailed(f"{key!r} is not at ETag {etag}")
        self.delete(key)

    def get_versioned(self, key: str) -> tuple[bytes, str, float]:
        data = self.get(key)
        etag, written = self._written.get(key, ('"unrecorded"', 0.0))
        return data, etag, max(0.0, self.clock() - written)
