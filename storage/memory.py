"""An in-memory store for unit tests (same interface as the real ones)."""

from __future__ import annotations

from storage import keys
from storage.base import KeyNotFound


class MemoryStore:
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.content_types: dict[str, str] = {}

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.objects[keys.check(key)] = bytes(data)
        self.content_types[key] = content_type

    def get(self, key: str) -> bytes:
        try:
            return self.objects[key]
        except KeyError:
            raise KeyNotFound(f"no object {key!r} in memory store") from None

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)
        self.content_types.pop(key, None)

    def exists(self, key: str) -> bool:
        return key in self.objects

    def list(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))
