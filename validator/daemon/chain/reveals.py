"""Commit-reveal, checked: each landed commit compared with the weights on chain once its reveal window has passed.

On a commit-reveal subnet "landed" means the timelocked commit was included;
the chain reveals it by itself at the drand round, and drops a reveal it
cannot make (a round it lacks, a runtime upgrade) without telling anyone.
``Reveals`` keeps the landed commits not checked yet (``loop.ChainMode``
adds each one, and those a restarted daemon finds in the store); at each
metagraph read, a commit whose window (``reveal_period`` epochs after its
own, and one more) has passed is compared with our uid's ``Weights`` row
(``Chain.weights_row``): ``revealed`` or ``missing``, stored on its attempt
(``attempts.WeightsAttempt.reveal``), counted (``validator_chain_reveals_total``)
and, when missing, said in a line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from validator.daemon.chain.attempts import WeightsAttempt, store_attempt

if TYPE_CHECKING:
    from chain.base import Chain
    from chain.types import MetagraphSnapshot
    from storage.base import Store
    from validator.daemon.chain.metrics import ChainMetrics


def same_weights(row: dict[int, int], uids: tuple[int, ...], u16: tuple[int, ...]) -> bool:
    """Are the weights on chain (``row``: uid -> u16, max-upscaled) those committed (``uids``, ``u16``)? The same
    uids, and each weight over the largest equal within a u16 unit."""
    sent = {u: w for u, w in zip(uids, u16) if w}
    if not sent or set(row) != set(sent) or not max(row.values()):
        return False
    top_row, top_sent = max(row.values()), max(sent.values())
    return all(abs(row[u] / top_row - sent[u] / top_sent) <= 2 / 65535 for u in sent)


class Reveals:
    """The landed commits whose reveal is not checked yet (module docstring)."""

    def __init__(self, attempts: list[WeightsAttempt] = ()) -> None:  # type: ignore[assignment]
        self.pending = [a for a in attempts if a.landed and a.submission and a.submission.method == "commit"]
        self.pending = [a for a in self.pending if not a.reveal]

    def add(self, attempt: WeightsAttempt) -> None:
        if attempt.landed and attempt.submission is not None and attempt.submission.method == "commit":
            self.pending.append(attempt)

    def check(
        self,
        snapshot: MetagraphSnapshot,
        edge: Chain,
        store: Store,
        *,
        metrics: ChainMetrics | None = None,
        on_line: Callable[[str], None] = lambda line: None,
    ) -> None:
        """Every pending commit whose window has passed at ``snapshot``'s block, against the chain (one read)."""
        window = (snapshot.hyperparameters.reveal_period + 1) * (snapshot.tempo + 1)
        due = [a for a in self.pending if _block(a) + window <= snapshot.block]
        me = snapshot.by_hotkey(edge.hotkey)
        if not due or me is None:
            return
        row = dict(edge.weights_row(me.uid))
        for attempt in due:
            # a later commit revealed since overwrites the row: any of them found there shows the reveals work
            later = [a.submission for a in self.pending if a.submission and _block(a) >= _block(attempt)]
            revealed = any(same_weights(row, s.uids, s.weights_u16) for s in later)
            self.pending.remove(attempt)
            store_attempt(store, replace(attempt, reveal="revealed" if revealed else "missing"))
            if metrics is not None:
                metrics.reveals.labels(outcome="revealed" if revealed else "missing").inc()
            if not revealed:
                sub = attempt.submission
                assert sub is not None
                on_line(
                    f"chain: the weights committed in block {sub.block} (extrinsic {sub.extrinsic}) were not revealed "
                    f"by block {snapshot.block}: the weights on chain are not what was committed, and the epochs "
                    f"used older ones"
                )


def _block(attempt: WeightsAttempt) -> int:
    """The block a commit landed in (the attempt's own when the record has none)."""
    sub = attempt.submission
    return (sub.block if sub is not None else None) or attempt.block
