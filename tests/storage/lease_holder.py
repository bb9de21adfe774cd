"""The other daemon of the lease tests: a process that holds a store's lease until its stdin closes.

    python tests/storage/lease_holder.py storage URI [TTL_S]   # storage.lease.open_lease, as is
    python tests/storage/lease_holder.py daemon URI            # validator.daemon.daemon.store_lease, as the daemon takes it

It prints ``held <pid>`` once it holds the lease (``refused: <message>`` when it cannot), then
waits; when stdin closes it releases the lease and prints ``released``. S3 credentials come from
the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; VALIDATOR_S3__ENDPOINT_URL for the
endpoint), never from arguments.
"""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def _storage_lease(uri: str, ttl_s: float):
    from storage import open_store
    from storage.lease import open_lease

    s3 = None
    if uri.startswith("s3://"):
        from storage.s3 import S3Settings

        s3 = S3Settings(
            endpoint_url=os.environ["VALIDATOR_S3__ENDPOINT_URL"],
            access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
            secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
            max_attempts=1,
        )
    lease = open_lease(open_store(uri, s3=s3), ttl_s=ttl_s)
    lease.acquire()
    try:
        yield lease.renew
    finally:
        lease.release()


def main(argv: list[str]) -> int:
    from storage.errors import LeaseError

    mode, uri = argv[0], argv[1]
    if mode == "daemon":
        from validator.daemon.daemon import store_lease
        from validator.settings import load_settings

        held = store_lease(uri, load_settings())
    else:
        held = _storage_lease(uri, float(argv[2]) if len(argv) > 2 else 60.0)
    try:
        with held:
            print(f"held {os.getpid()}", flush=True)
            sys.stdin.read()
    except LeaseError as exc:
        print(f"refused: {exc}", flush=True)
        return 2
    print("released", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
