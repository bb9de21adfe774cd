"""When to submit weights, and when to try again after the chain did not answer (pure).

``weights_due``: at most once per tempo, and never faster than the subnet's
``weights_rate_limit`` (the chain refuses an update from a hotkey fewer than
that many blocks after its previous one: ``since >= rate_limit`` passes). The
last update is the later of the chain's ``last_update`` for our uid and the
block of our own last submission that landed (subtensor's ``check_rate_limit``
counts from ``LastUpdate``, which a set and, since CRv4, a timelocked commit
move; our own record may be ahead of a lagging node).

``Backoff``: the delays between attempts while the chain does not answer,
doubling up to a ceiling; the daemon keeps evaluating rounds meanwhile and asks
``next_attempt`` whether it is time to try again (nothing here sleeps).

``blocks_until_inactive``: how long until a validator that stops setting weights
stops counting (``activity_cutoff`` blocks after its last update, the chain
no longer treats its weights as active; a validator that stays inactive loses
its dividends and, in time, its place).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Due:
    """Whether a weight submission may go now, and from which block it may."""

    due: bool
    next_block: int  # the first block at which a submission is allowed
    interval: int  # blocks between two submissions: max(tempo, weights_rate_limit)
    reason: str


def weights_due(
    *, block: int, tempo: int, weights_rate_limit: int, last_update: int | None, last_submitted: int | None = None
) -> Due:
    """Is a submission due at ``block``? (module docstring). ``last_update``/``last_submitted``: None or 0 = never."""
    if block < 0 or tempo < 0 or weights_rate_limit < 0:
        raise ValueError("block, tempo and weights_rate_limit are non-negative")
    interval = max(tempo, weights_rate_limit, 1)
    known = [b for b in (last_update, last_submitted) if b]
    if not known:
        return Due(True, block, interval, "no weights set yet")
    last = max(known)
    next_block = last + interval
    if block >= next_block:
        return Due(True, next_block, interval, f"{block - last} blocks since the last update (interval {interval})")
    return Due(
        False,
        next_block,
        interval,
        f"{block - last} blocks since the last update; the next is allowed at block {next_block}",
    )


def blocks_until_inactive(*, block: int, last_update: int, activity_cutoff: int) -> int | None:
    """Blocks left before a validator whose last weight update was at ``last_update`` counts as inactive.

    None when the cutoff is unknown (0); 0 or less: already inactive.
    """
    if activity_cutoff <= 0:
        return None
    return last_update + activity_cutoff - block


@dataclass(frozen=True)
class Backoff:
    """Delays between attempts while the chain does not answer: ``initial_s * factor**(failures - 1)``, capped."""

    initial_s: float = 12.0  # one block
    factor: float = 2.0
    max_s: float = 600.0

    def __post_init__(self) -> None:
        if not (self.initial_s > 0 and self.factor >= 1 and self.max_s >= self.initial_s):
            raise ValueError("Backoff needs initial_s > 0, factor >= 1 and max_s >= initial_s")

    def delay(self, failures: int) -> float:
        """Seconds to wait after ``failures`` consecutive failures (0 failures: no wait)."""
        if failures <= 0:
            return 0.0
        exponent = min(failures - 1, 64)  # the cap is reached long before; keeps the power finite
        return min(self.max_s, self.initial_s * self.factor**exponent)

    def next_attempt(self, failures: int, last_failure_at: float) -> float:
        """The time (same clock as ``last_failure_at``) from which the next attempt may go."""
        return last_failure_at + self.delay(failures)
