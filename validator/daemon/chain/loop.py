"""Between the rounds, in a thread of its own: the metagraph read every 100 blocks, the weights submitted when due.

``ChainMode.tick`` is one pass, and does nothing until something is due
(block numbers are estimated from the last snapshot and ``[chain]
block_time_s``):

- every ``[chain] refresh_blocks`` blocks (100, as the subnet template) the
  metagraph is read again: the miners of the next round are its served miners
  (``ChainMiners``), the ledger's hotkeys that are no longer registered are
  handed to the daemon to forget (``after_round``, on the daemon's thread: the
  ledger is the daemon's), and the validator's standing is checked again;
- when weights are due (``chain.schedule.weights_due``: once per tempo, never
  faster than ``weights_rate_limit``, counted from the chain's ``last_update``
  of our uid and our own last landed submission) the ledger's weights become
  the subnet's vector at that block (``chain.weights.weight_vector``) and are
  submitted with ``set_weights`` (the SDK picks a plain set or a commit), else
  only planned; every attempt is stored (``attempts.WeightsAttempt``).

The chain's weather is a state, never an exit: a chain that does not answer
is retried with backoff (``chain.schedule.Backoff``); a lost validator permit,
too little stake, or the hotkey deregistered (``standing``) stop the weights,
said once in a line, while the daemon keeps evaluating and storing rounds and
its ledger; each metagraph read checks again, and the weights go as soon as
the standing is back and the rate limit allows. Nothing here holds up a round.
Only what no waiting heals (a wallet that cannot sign, a subnet that no longer
exists) is kept in ``fatal`` and ``on_fatal`` is called (the daemon stops
before its next round and the command exits 2 with one line). Every read and
attempt feeds the chain metrics (``metrics.ChainMetrics``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from chain.errors import ChainError, PermanentChainError, TransientChainError, WeightsError
from chain.schedule import Backoff, blocks_until_inactive, weights_due
from chain.types import Submission
from chain.weights import WeightVector, problems, weight_vector
from validator.daemon.chain.attempts import WeightsAttempt, load_attempts, new_attempt, store_attempt
from validator.daemon.chain.metagraph_miners import ChainMiners
from validator.daemon.chain.metrics import ChainMetrics
from validator.daemon.chain.reveals import Reveals

if TYPE_CHECKING:
    from chain.base import Chain
    from chain.types import MetagraphSnapshot
    from emissions.ledger import Ledger
    from storage.base import Store

log = logging.getLogger(__name__)
KEEP_PLANNING = ("no validator permit", "not enough stake")  # a dry run goes on without them (no --set-weights)
STANDINGS = ("not registered", "no validator permit", "not enough stake")  # states that waiting may heal
# standings in which something is still sent when due: without a permit, the self-weight subtensor accepts from
# any registered hotkey (check_validator_permit), so the validator stays active for when its permit comes back
WEIGHING = ("ok", "no validator permit")


class ChainMode:
    """The chain side of a daemon (module docstring): ``query`` for the rounds, ``tick`` between them."""

    def __init__(
        self,
        edge: Chain,
        miners: ChainMiners,
        snapshot: MetagraphSnapshot,
        *,
        store: Store,
        ledger: Callable[[], Ledger],
        set_weights: bool,
        block_time_s: float,
        refresh_blocks: int = 100,
        clock: Callable[[], float] = time.time,
        backoff: Backoff = Backoff(),
        on_line: Callable[[str], None] | None = None,
        on_fatal: Callable[[], None] | None = None,
        metrics: ChainMetrics | None = None,
        version_key: int | None = None,
    ) -> None:
        """``version_key``: sent with every vector (``[chain] weights_version``; None: the subnet's, tests only)."""
        self.edge, self.query, self.store, self.ledger = edge, miners, store, ledger
        self.set_weights, self.block_time_s, self.clock, self.backoff = set_weights, block_time_s, clock, backoff
        self.refresh_blocks = refresh_blocks
        self.on_line = on_line or (lambda line: None)
        self.on_fatal = on_fatal or (lambda: None)
        self.metrics = metrics
        self.version_key = version_key
        self.fatal: PermanentChainError | None = None
        self.standing = "ok"  # or one of STANDINGS: only "ok" sends the ledger's weights (WEIGHING: what is sent)
        self._said = ""  # the last keep-alive reason said (each is said once)
        self.failures, self.failed_at = 0, 0.0
        self.not_before = 0  # no weights before this block (the last vector could not be sent)
        self._forget: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.landed_block: int | None = None  # the last submission that landed (what keeps the validator active)
        self.last_weights = self._last_weights_block(snapshot.netuid)
        self._refused_stake: float | None = None  # the stake the chain found too little ("not enough stake")
        self.reveals = Reveals()  # landed commits whose reveal is not checked yet (_last_weights_block: stored ones)
        if metrics is not None:
            metrics.watch(lambda: self.clock() - self.snapshot_at, self.blocks_until_inactive)
        self._use(snapshot)

    # ---- state -----------------------------------------------------------------------------------
    def _last_weights_block(self, netuid: int) -> int | None:
        """The block of the last submission that landed (or the last plan, planning only), from the store: a
        restarted daemon does not submit twice in one interval."""
        try:
            attempts = load_attempts(self.store, netuid, last=50)
        except (OSError, ValueError):
            return None
        mode = "submit" if self.set_weights else "plan"
        done = [a for a in attempts if a.mode == mode and (a.landed or (mode == "plan" and a.plan is not None))]
        landed = [a for a in attempts if a.landed and a.submission is not None]
        self.reveals = Reveals(landed)
        if landed:
            self.landed_block = landed[-1].submission.block or landed[-1].block  # type: ignore[union-attr]
            if self.metrics is not None:
                at = datetime.fromisoformat(landed[-1].attempted_at).timestamp()
                self.metrics.landed(self.landed_block, at)
                for attempt in landed:  # a restart keeps counting the keep-alives in a row
                    self.metrics.streak(attempt.kind)
        return max(((a.submission.block or a.block) if a.submission else a.block for a in done), default=None)

    def _use(self, snapshot: MetagraphSnapshot) -> None:
        self.snapshot, self.snapshot_at = snapshot, self.clock()
        before = {s.hotkey for s in self.query.specs}
        specs = self.query.update(snapshot, self.edge.hotkey)
        joined = len({s.hotkey for s in specs} - before)
        registered = {n.hotkey for n in snapshot.neurons}
        gone = {h for h in self.ledger().miners if h not in registered}
        if gone:
            with self._lock:
                self._forget |= gone
        log.info(
            "metagraph at block %d: %d miners (%d new), %d ledger hotkeys deregistered",
            snapshot.block,
            len(specs),
            joined,
            len(gone),
        )
        me = snapshot.by_hotkey(self.edge.hotkey)
        if self.metrics is not None:
            self.metrics.standing(permit=me.validator_permit if me else None, stake=me.stake if me else None, neuron=me)
        if me is None:
            self._stand("not registered", f"hotkey {self.edge.hotkey} is not registered on netuid {snapshot.netuid}")
        elif self.set_weights and not snapshot.may_set_weights(me.hotkey):
            self._stand("no validator permit", f"hotkey {self.edge.hotkey} (uid {me.uid}) has no validator permit")
        elif self.standing in ("not registered", "no validator permit") or (
            self.standing == "not enough stake" and me.stake != self._refused_stake  # its stake moved: try again
        ):
            self._stand("ok", f"uid {me.uid} {'holds a validator permit' if me.validator_permit else 'registered'}")

    def _stand(self, standing: str, why: str) -> None:
        """Move to ``standing`` (STANDINGS or "ok"), said once in a line when it changes."""
        if standing == self.standing:
            return
        self.standing = standing
        if standing == "ok":
            self.not_before = 0  # as soon as the rate limit allows
            self.on_line(f"chain: {why} again at block {self.snapshot.block}: weights resume")
            return
        meanwhile = "only the keep-alive self-weight" if standing in WEIGHING else "no weights"
        self.on_line(
            f"chain: {why} at block {self.snapshot.block}: {meanwhile} until it has; rounds go on, checked again "
            f"every {self.refresh_blocks} blocks"
        )

    def blocks_until_inactive(self) -> int | None:
        """Blocks left, at the estimated head, before the validator counts as inactive (None: unknown)."""
        me = self.snapshot.by_hotkey(self.edge.hotkey)
        if me is None:
            return None
        return blocks_until_inactive(
            block=self.estimated_block(),
            last_update=max(me.last_update, self.landed_block or 0),
            activity_cutoff=self.snapshot.hyperparameters.activity_cutoff,
        )

    def take_forgotten(self) -> set[str]:
        """The ledger's hotkeys no longer registered, since the last call (the daemon forgets them)."""
        with self._lock:
            gone, self._forget = self._forget, set()
        return gone

    def estimated_block(self) -> int:
        return self.snapshot.block + int(max(0.0, self.clock() - self.snapshot_at) / self.block_time_s)

    def _due(self, snapshot: MetagraphSnapshot, block: int):
        me = snapshot.by_hotkey(self.edge.hotkey)
        return weights_due(
            block=block,
            tempo=snapshot.tempo,
            weights_rate_limit=snapshot.hyperparameters.weights_rate_limit,
            last_update=me.last_update if me else None,
            last_submitted=self.last_weights,
        )

    # ---- one pass --------------------------------------------------------------------------------
    def tick(self) -> None:
        """Read the metagraph when ``refresh_blocks`` have passed or weights may be due; then set (or plan) them."""
        if self.fatal is not None:
            return
        now = self.clock()
        if self.failures and now < self.backoff.next_attempt(self.failures, self.failed_at):
            return
        block = self.estimated_block()
        refresh = block >= self.snapshot.block + self.refresh_blocks
        may = self.standing in WEIGHING and block >= self.not_before and self._due(self.snapshot, block).due
        if not refresh and not may:
            return
        try:
            snapshot = self.edge.snapshot()
            self._answered()
            self._use(snapshot)
            self.reveals.check(snapshot, self.edge, self.store, metrics=self.metrics, on_line=self.on_line)
            if (
                self.standing in WEIGHING
                and snapshot.block >= self.not_before
                and self._due(snapshot, snapshot.block).due
            ):
                self._weights(snapshot)
        except TransientChainError as exc:
            self._silent(exc)
        except PermanentChainError as exc:
            if exc.kind in STANDINGS:  # the chain refused for a standing the read did not show yet
                me = self.snapshot.by_hotkey(self.edge.hotkey)
                self._refused_stake = me.stake if me else None
                self._stand(exc.kind, " ".join(str(exc).split()))
                self._wait_an_interval()  # refused before sending (not_authorized): not again at every block
            else:
                self._fail(exc)

    def _wait_an_interval(self) -> None:
        """No weights before the next interval (a metagraph read that shows the standing back lifts it)."""
        hp, block = self.snapshot.hyperparameters, self.snapshot.block
        self.not_before = block + max(self.snapshot.tempo, hp.weights_rate_limit, 1)

    def _answered(self) -> None:
        if self.failures:
            self.on_line(f"chain: read again after {self.failures} failed attempt(s)")
        self.failures = 0

    def _silent(self, exc: BaseException) -> None:
        self.failures += 1
        self.failed_at = self.clock()
        delay = self.backoff.delay(self.failures)
        log.warning("chain: %s; retry in %.0f s (rounds go on)", " ".join(str(exc).split()), delay)

    def _fail(self, exc: PermanentChainError) -> None:
        self.fatal = exc  # the command prints it, as its one line, when the daemon has stopped
        log.debug("chain: %s", exc)
        self.on_fatal()

    # ---- weights ---------------------------------------------------------------------------------
    def _weights(self, snapshot: MetagraphSnapshot) -> None:
        ledger = self.ledger()
        vector = weight_vector(ledger.weights(), snapshot, self.edge.hotkey, version_key=self.version_key)
        if self.standing == "no validator permit":
            vector = weight_vector({}, snapshot, self.edge.hotkey, version_key=self.version_key)
            vector = replace(vector, reason="no validator permit: only a self-weight is accepted")
        if vector.reason != self._said:  # why a keep-alive self-weight instead of the ledger's: said once
            self._said = vector.reason
            if vector.reason:
                self.on_line(f"chain: sending the keep-alive self-weight: {vector.reason}")
        said = problems(vector, snapshot)
        mode = "submit" if self.set_weights else "plan"
        record = new_attempt(self.clock(), vector, mode, ledger.last_round_id, tuple(said))
        if said:  # the subnet would refuse it: stored and shown, tried again next interval
            self._wait_an_interval()  # (self.snapshot is snapshot: _use took it)
            self._store(record)
            return
        if not self.set_weights:
            self._plan(record, vector, snapshot)
            return
        try:
            submission = self.edge.submit(vector)
        except TransientChainError as exc:
            self._store(replace(record, submission=_failed(vector, self.edge.hotkey, str(exc), "transient")))
            raise
        except PermanentChainError as exc:
            failed = exc.submission or _failed(vector, self.edge.hotkey, str(exc), "permanent")
            self._store(replace(record, submission=failed))
            raise
        self._store(replace(record, submission=submission))
        self.reveals.add(replace(record, submission=submission))
        if submission.ok:
            self.last_weights = self.landed_block = submission.block
            if self.metrics is not None and submission.block is not None:
                self.metrics.landed(submission.block, self.clock())
        else:  # refused by the chain (too fast, wrong version key): read the subnet again after a backoff
            self._silent(ChainError(f"weights refused: {submission.error}"))

    def _plan(self, record: WeightsAttempt, vector: WeightVector, snapshot: MetagraphSnapshot) -> None:
        try:
            plan = self.edge.plan(vector)
        except PermanentChainError as exc:
            if exc.kind not in KEEP_PLANNING:
                raise
            record = replace(record, problems=(*record.problems, str(exc)))
        except WeightsError as exc:
            record = replace(record, problems=(*record.problems, str(exc)))
        else:
            record = replace(record, plan=plan)
        self.last_weights = snapshot.block
        self._store(record)

    def _store(self, attempt: WeightsAttempt) -> None:
        store_attempt(self.store, attempt)
        if self.metrics is not None:
            self.metrics.attempt(attempt.outcome, attempt.kind, landed=attempt.landed)
        sub, sent = attempt.submission, len([v for v in attempt.u16 if v])
        if sub is not None and sub.ok:
            self.on_line(
                f"chain: weights {sub.method} in block {sub.block}: {sent} uid(s), {attempt.kind}, "
                f"extrinsic {sub.extrinsic}"
            )
            return
        detail = (
            (sub.error if sub is not None else None)
            or "; ".join(attempt.problems)
            or ("; ".join(attempt.plan.violations) if attempt.plan is not None else "")
        )
        self.on_line(
            f"chain: weights {attempt.outcome} at block {attempt.block}: {sent} uid(s), {attempt.kind}"
            + (f" ({' '.join(detail.split())})" if detail else "")
        )

    def after_round(self, daemon) -> None:
        """On the daemon's thread, after each round: tick (unless the thread does), then the daemon forgets the
        hotkeys that left the subnet."""
        if self._thread is None:
            self.tick()
        gone = self.take_forgotten()
        if gone:
            daemon.forget(gone)
            self.on_line(f"chain: {len(gone)} deregistered hotkey(s) left the ledger")

    # ---- the thread ------------------------------------------------------------------------------
    def start(self, poll_s: float | None = None) -> ChainMode:
        """Tick in a background thread every ``poll_s`` seconds (default: one block, at most 12 s)."""
        poll = poll_s if poll_s is not None else min(self.block_time_s, 12.0)

        def run() -> None:
            while not self._stop.is_set() and self.fatal is None:
                try:
                    self.tick()
                except Exception:  # a bug here must not take the rounds down with it; logged, retried
                    log.exception("chain: unexpected error between rounds")
                    self._silent(ChainError("unexpected error"))
                self._stop.wait(poll)

        self._thread = threading.Thread(target=run, name="chain-mode", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(60.0, 3 * getattr(self.edge, "timeout_s", 60.0)))
            self._thread = None


def _failed(vector: WeightVector, signer: str, error: str, kind: str) -> Submission:
    return Submission(
        netuid=vector.netuid,
        block=None,
        signer=signer,
        method="commit" if vector.commit_reveal else "set",
        uids=vector.chain_uids,
        weights_u16=vector.chain_u16,
        version_key=vector.version_key,
        ok=False,
        error=" ".join(error.split()),
        error_kind=kind,
    )
