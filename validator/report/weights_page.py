"""The report's weights page: every weight submission (or plan) the daemon made in chain mode, newest first.

``weight_attempts`` reads the store's ``chain/<netuid>/weights/`` records
(``validator.daemon.chain.attempts``); ``write_weights_page`` renders
``weights.html``: per attempt its time, subnet, block, mode (submitted or
planned), outcome (set, commit, planned, refused, not sent, no answer), the
vector's kind, the extrinsic or the error, and the uids with their hotkeys,
shares and u16 weights. Hotkeys and errors are escaped by the template.
"""

from __future__ import annotations

from storage.base import Store, StoreError
from validator.daemon.chain.attempts import WeightsAttempt, load_attempts


def weight_attempts(store: Store) -> list[WeightsAttempt]:
    """Every stored attempt, newest first (none when the store cannot be listed: the rounds still show)."""
    try:
        return sorted(load_attempts(store), key=lambda a: a.attempt_id, reverse=True)
    except StoreError:
        return []


def write_weights_page(writer, attempts: list[WeightsAttempt]) -> None:
    """Write ``weights.html`` with the builder's writer (``validator.report.builder``)."""
    landed = sum(1 for a in attempts if a.landed)
    latest = attempts[0] if attempts else None
    rows = list(zip(latest.uids, latest.hotkeys, latest.shares, latest.u16)) if latest else []
    writer.render("weights.html", "weights.html", attempts=attempts, landed=landed, latest=latest, rows=rows)
