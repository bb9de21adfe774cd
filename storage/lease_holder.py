"""Who holds a store's lease (``storage.lease``): host, process id and since when, and what tells machines apart
(the kernel's boot id, the pid namespace), so a holder killed on this very machine is recognised as gone; with
what both kinds of lease share (the lease document's schema, how often to try taking it, ``Held``: renewing
and releasing what a lease holds)."""

from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any, Generic, TypeVar

from storage.errors import LeaseLost

SCHEMA = "consensus-validator/lease/1"
TAKE_ATTEMPTS = 5  # a lease that changes hands this often while we try is reported as held
H = TypeVar("H")


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


@dataclass(frozen=True)
class Holder:
    """Who holds a lease: host name, process id and since when (ISO UTC), plus what tells machines apart."""

    host: str
    pid: int
    since: str
    boot: str = ""  # the kernel's boot id: a pid means nothing across reboots
    pidns: str = ""  # the pid namespace: a pid means nothing across containers

    @classmethod
    def me(cls) -> Holder:
        since = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        return cls(
            socket.gethostname(), os.getpid(), since, _read_text("/proc/sys/kernel/random/boot_id"), _pid_namespace()
        )

    def describe(self) -> str:
        return f"host {self.host}, pid {self.pid}, since {self.since}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Any) -> Holder | None:
        """The holder in a lease document, or None when it is not one (a torn or foreign file)."""
        try:
            return cls(
                str(doc["host"]),
                int(doc["pid"]),
                str(doc["since"]),
                str(doc.get("boot", "")),
                str(doc.get("pidns", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def gone_here(self) -> bool:
        """True when the holder ran on this machine, in this pid namespace, and its process no longer exists."""
        me = Holder.me()
        same = self.host == me.host and bool(self.boot) and self.boot == me.boot and self.pidns == me.pidns
        return same and not _alive(self.pid)


class Held(Generic[H]):
    """What a lease holds while it is this process's (the locked descriptor, the lease object's ETag): ``renew``
    starts from ``_holding``, and ``release`` gives it up once (``_let_go``), whichever the kind of lease."""

    _holds: H | None = None

    @property
    def what(self) -> str:
        """The lease as the errors name it."""
        raise NotImplementedError

    def _holding(self) -> H:
        """What is held; ``LeaseLost`` when this process does not hold the lease."""
        if self._holds is None:
            raise LeaseLost(f"{self.what} is not held by this process")
        return self._holds

    def _let_go(self, held: H) -> None:
        raise NotImplementedError

    def release(self) -> None:
        """Give it up (no error when it was lost meanwhile)."""
        held, self._holds = self._holds, None
        if held is not None:
            self._let_go(held)
