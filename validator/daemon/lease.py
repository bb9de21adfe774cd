"""One daemon per store: ``store_lease`` holds the store's lease (``storage.lease``) while the daemon runs.

The lease is taken before anything is written, renewed after every round and released at exit;
``LEASE_MARGIN_S`` is how long an S3 lease outlives the longest a round and its wait can take.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

from storage.base import PermanentStoreError, StoreError
from storage.errors import LeaseError
from storage.lease import open_lease
from validator.app import store_for
from validator.daemon.state import DaemonError
from validator.settings import Settings

log = logging.getLogger("validator.daemon")  # the daemon's logger: its messages keep the name operators see


LEASE_MARGIN_S = 600.0  # an S3 lease's time to live beyond the longest a round and its wait can take


@contextlib.contextmanager
def store_lease(
    uri: str,
    settings: Settings,
    *,
    create_bucket: bool = False,
    stop: threading.Event | None = None,
    retry_s: float = 5.0,
) -> Iterator[Callable[[], None]]:
    """One daemon per store: hold the store's lease (``storage.lease``) for the block; yields ``renew``.

    Taken before anything is written (enter this before ``open_app``: its store probe writes): a
    store another daemon holds raises ``LeaseHeld`` naming it (host, pid, since), and the command
    exits 2. Call ``renew`` after every round; ``LeaseLost`` means another daemon took the store
    over, and the daemon stops before its next round. An S3 lease lives ``LEASE_MARGIN_S`` beyond
    the longest a round and the wait after it can take without a renewal, so only a killed holder's
    lease expires; one killed on this machine is taken over at once. While the store cannot be
    reached the lease is retried every ``retry_s`` seconds and nothing starts: without it the
    daemon cannot know that no other daemon writes there.
    """

    d = settings.daemon
    ttl_s = LEASE_MARGIN_S + d.interval_s + d.round_deadline_s + 2 * settings.lm.round_budget_s
    store = store_for(uri, settings, create_bucket=create_bucket)
    lease = open_lease(store, ttl_s=ttl_s)
    try:
        waiting = False
        while True:
            try:
                lease.acquire()
                break
            except LeaseError:
                raise
            except PermanentStoreError as exc:  # worded as the store check at start words it (validator.app)
                if exc.kind == "missing bucket":
                    exc.hint += "; or pass --create-bucket"
                raise PermanentStoreError(
                    f"store {uri} is unusable: {exc.kind}: {' '.join(str(exc).split())}", kind=exc.kind
                ) from None
            except StoreError as exc:
                if not waiting:
                    waiting = True
                    log.warning(
                        "store %s unreachable at start; retrying every %.0f s to take its lease (%s)",
                        uri,
                        retry_s,
                        " ".join(str(exc).split()),
                    )
                if (stop or threading.Event()).wait(retry_s):
                    raise DaemonError(f"stopped while waiting for store {uri} to take its lease") from exc
        try:
            yield lease.renew
        finally:
            lease.release()
    finally:
        getattr(store, "close", lambda: None)()
