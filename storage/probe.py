"""The start-up check of a store: write, read back and delete one small object.

The daemon runs it before it asks any miner, so a store that can never work
(wrong key, missing bucket, a path through a regular file) stops the process
at start with one line, instead of after a round's worth of work. A
``SpoolingStore`` is checked through its primary: a probe must never be
spooled (that would hide the very failure it looks for).
"""

from __future__ import annotations

import os
import socket
import uuid

from storage import keys
from storage.base import Store
from storage.errors import StoreError


def probe(store: Store) -> str:
    """Write, read back and delete a probe object in ``store``; the key it used.

    Raises the store's own error (``PermanentStoreError`` for what cannot heal,
    ``TransientStoreError`` / ``StoreError`` otherwise), or ``StoreError`` when
    the bytes read back differ from those written.
    """
    target = getattr(store, "primary", store)
    token = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    key = keys.probe(token)
    payload = f"consensus-validator store probe {token}\n".encode()
    delete = getattr(target, "delete", None)
    target.put(key, payload, "text/plain")
    try:
        back = target.get(key)
        if back != payload:
            raise StoreError(
                f"store {target!r}: the probe object {key!r} read back different bytes "
                f"({len(back)} instead of {len(payload)})"
            )
    except BaseException:
        if delete is not None:
            try:
                delete(key)
            except StoreError:
                pass  # the read's failure is the one to report
        raise
    if delete is not None:
        delete(key)
    return key
