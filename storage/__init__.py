"""Stores: bytes by key, behind one interface (local directory, memory; S3 later)."""

from storage.base import KeyNotFound, Store, StoreError
from storage.local import LocalStore
from storage.memory import MemoryStore


def open_store(uri: str) -> Store:
    """A store from a URI: a local path (``./rounds``, ``file:///x``) or ``memory://``."""
    if uri.startswith("memory://"):
        return MemoryStore()
    if uri.startswith("file://"):
        return LocalStore(uri[len("file://"):])
    if "://" in uri:
        scheme = uri.split("://", 1)[0]
        raise ValueError(f"unsupported store URI scheme {scheme!r} in {uri!r} (supported: local path, file://, memory://)")
    return LocalStore(uri)


__all__ = ["KeyNotFound", "LocalStore", "MemoryStore", "Store", "StoreError", "open_store"]
