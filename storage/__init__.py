"""Stores: bytes by key, behind one interface (local directory, memory, S3), and a spool for outages."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from storage.base import KeyNotFound, Store, StoreError
from storage.local import LocalStore
from storage.memory import MemoryStore
from storage.spool import FlushResult, SpoolingStore

if TYPE_CHECKING:
    from storage.s3 import S3Settings, S3Store


def open_store(
    uri: str,
    *,
    s3: S3Settings | None = None,
    spool_dir: str | os.PathLike[str] | None = None,
    create_bucket: bool = False,
) -> Store:
    """A store from a URI: a local path (``./rounds``, ``file:///x``), ``memory://`` or ``s3://bucket/prefix``.

    For S3, the endpoint, region and credentials come from ``s3`` (the
    validator passes ``Settings.s3_settings()``; None: boto3's own chain) and
    ``create_bucket`` creates a missing bucket on first write. With
    ``spool_dir`` the store is wrapped in a ``SpoolingStore``: writes the
    backend refuses wait there and are uploaded, in order, by ``flush()``.
    """
    store: Store
    if uri.startswith("memory://"):
        store = MemoryStore()
    elif uri.startswith("file://"):
        store = LocalStore(uri[len("file://") :])
    elif uri.startswith("s3://"):
        from storage.s3 import S3Store  # boto3 loads only when S3 is used

        bucket, _, prefix = uri[len("s3://") :].partition("/")
        if not bucket:
            raise ValueError(f"store URI {uri!r} has no bucket (expected s3://bucket/prefix)")
        store = S3Store(bucket, prefix, settings=s3, create_bucket=create_bucket)
    elif "://" in uri:
        scheme = uri.split("://", 1)[0]
        raise ValueError(
            f"unsupported store URI scheme {scheme!r} in {uri!r} (supported: local path, file://, memory://, s3://)"
        )
    else:
        store = LocalStore(uri)
    return SpoolingStore(store, spool_dir) if spool_dir is not None else store


def __getattr__(name: str) -> Any:
    if name in ("S3Store", "S3Settings"):
        from storage import s3  # lazy: start-up cost, boto3 takes 1.2 s to import

        return getattr(s3, name)
    raise AttributeError(f"module 'storage' has no attribute {name!r}")


__all__ = [
    "FlushResult",
    "KeyNotFound",
    "LocalStore",
    "MemoryStore",
    "S3Settings",
    "S3Store",
    "SpoolingStore",
    "Store",
    "StoreError",
    "open_store",
]
