"""Retry with exponential backoff on HTTP 429 and 5xx, in front of any chat client.

``lm.client.OpenAIChatClient`` makes one request per call (``max_retries=0``)
and maps every failure to ``LMError``; the HTTP status stays reachable
through the exception's cause (the ``openai`` library's ``APIStatusError``),
so no change to the client is needed. ``BackoffClient`` wraps a client and
retries rate limits (429) and server errors (5xx), honouring a numeric
``Retry-After`` header; other failures (4xx, timeouts, connection errors)
go straight to the caller, where checked generation counts them as attempts.

Jitter comes from a seeded generator: waits differ between clients that share
a server, yet a test can predict them.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lm.client import ChatClient, Completion, Message, Meter
from lm.errors import LMError

log = logging.getLogger(__name__)


def status_of(exc: LMError) -> int | None:
    """The HTTP status behind an ``LMError``, or None when the failure was not an HTTP answer."""
    if exc.kind != "http":
        return None
    status = getattr(exc.__cause__, "status_code", None)
    if isinstance(status, int):
        return status
    found = re.search(r"HTTP (\d{3})", str(exc))
    return int(found.group(1)) if found else None


def retry_after_s(exc: LMError) -> float | None:
    """A numeric ``Retry-After`` header (seconds) of the failed response, if any (HTTP dates are ignored)."""
    headers = getattr(getattr(exc.__cause__, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        value = float(str(headers.get("retry-after", "")).strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def retryable(status: int | None) -> bool:
    return status is not None and (status == 429 or 500 <= status <= 599)


@dataclass(frozen=True)
class Backoff:
    """How often and how long to wait: attempt i (from 0) waits base_s * 2**i, at most cap_s, times 0.5..1."""

    attempts: int = 5  # calls in all, the first one included
    base_s: float = 0.5
    cap_s: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("Backoff.attempts must be >= 1")
        if not (0 <= self.base_s <= self.cap_s):
            raise ValueError("Backoff needs 0 <= base_s <= cap_s")

    def delay(self, attempt: int, jitter: float) -> float:
        """The wait after failed attempt ``attempt`` (0-based); ``jitter`` in [0, 1)."""
        return min(self.cap_s, self.base_s * (2**attempt)) * (0.5 + 0.5 * jitter)


class BackoffClient:
    """A ``ChatClient`` that retries 429 and 5xx answers of ``inner`` with backoff."""

    def __init__(
        self,
        inner: ChatClient,
        policy: Backoff = Backoff(),
        *,
        seed: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.meter: Meter = getattr(inner, "meter", None) or Meter()
        self.policy = policy
        self.sleep = sleep
        self.retries = 0  # waits taken, across threads
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        for attempt in range(self.policy.attempts):
            try:
                return self.inner.complete(messages, **params)
            except LMError as exc:
                status = status_of(exc)
                if not retryable(status) or attempt == self.policy.attempts - 1:
                    raise
                with self._lock:
                    jitter = self._rng.random()
                    self.retries += 1
                hinted = retry_after_s(exc)
                wait = min(self.policy.cap_s, hinted) if hinted is not None else self.policy.delay(attempt, jitter)
                log.info(
                    "%s answered HTTP %s; retrying in %.2f s (attempt %d/%d)",
                    self.name,
                    status,
                    wait,
                    attempt + 2,
                    self.policy.attempts,
                )
                self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover
