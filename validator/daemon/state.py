"""The daemon's state in its store: the ledger, and the round files it finds before it writes.

``DaemonState`` is the part of ``validator.daemon.daemon.Daemon`` that reads and saves it: the ledger is
read once at start (the store's copy, or the local mirror written beside it when the store is down
or behind; with neither, the store's outage is waited out) and saved after every round, to the
mirror and the store. A round file already stored under the daemon's id must carry the daemon's
marker for that sequence, else it is another daemon's and ``DaemonError`` stops the daemon. Every file is
read through the one reader (``validator.records.reader``: the ledger and the tick plan, the store's or the mirror's).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from storage import keys
from storage.base import KeyNotFound, PermanentStoreError, Store, StoreError
from storage.codec import dumps
from storage.files import write_atomic
from validator.daemon.committee_draw import TickPlan, linked_entities, plan_tick
from validator.records import evaluation_record as rec
from validator.records.ledger_entries import Ledger, identity_links
from validator.records.reader import RoundReader, decode_json, decode_ledger, decode_tick_plan
from validator.records.stored_round import InputMarker
from validator.settings import Settings

log = logging.getLogger("validator.daemon")  # the daemon's logger: its messages keep the name operators see


class DaemonError(RuntimeError):
    """The daemon cannot go on safely (a foreign round under its id, a corrupt ledger)."""


class DaemonState:
    """The ledger and the stored-round checks of ``validator.daemon.daemon.Daemon``, which sets these attributes."""

    store: Store
    settings: Settings
    stop: threading.Event
    mirror: Path | None  # the local copy of the ledger (``<state_dir>/ledger.json``), or None
    ledger: Ledger
    secret: bytes  # seeds the committees and the prompt order (validator.daemon.committee_secret); never stored
    roster: Callable[[], Sequence[tuple[str, str | None]]]  # the usable miners and their entities, at a tick's start
    _plan: TickPlan | None

    # ---- state -----------------------------------------------------------------------------------
    def _load_ledger(self, retry_s: float = 5.0) -> Ledger:
        """The stored ledger; while the store is down, the local mirror; with neither, wait for the store.

        Only an outage is waited out: a store that can never work (``PermanentStoreError``) is raised.
        """
        waiting_since: float | None = None
        while True:
            try:
                stored = RoundReader(self.store).ledger()
            except PermanentStoreError:
                raise
            except StoreError as exc:
                if self.mirror is not None and self.mirror.is_file():
                    log.warning("store unreachable (%s); resuming from the local ledger copy %s", exc, self.mirror)
                    return self._parse_ledger(self.mirror.read_bytes(), str(self.mirror))
                if waiting_since is None:  # once per outage, not once per retry
                    waiting_since = time.monotonic()
                    log.warning(
                        "store unreachable and no local ledger copy: retrying every %.0f s until it is back (%s)",
                        retry_s,
                        exc,
                    )
                if self.stop.wait(retry_s):
                    raise DaemonError("stopped while waiting for the store to read the ledger") from exc
                continue
            except ValueError as exc:  # LedgerError is a ValueError; it names the key
                raise DaemonError(f"{exc}; move it aside to start a new ledger") from exc
            if waiting_since is not None:
                log.warning("store is back after %.0f s; ledger read", time.monotonic() - waiting_since)
            if stored is None:
                if self.mirror is not None and self.mirror.is_file():
                    # the store lost its ledger (or a new bucket) but this machine has one: never restart at 1
                    raise DaemonError(
                        f"{keys.ledger()} is missing from the store but {self.mirror} exists; "
                        f"restore the ledger or delete the local copy to start over"
                    )
                return Ledger(
                    alpha=self.settings.daemon.moving_average_alpha, canary_alpha=self.settings.daemon.canary_alpha
                )
            ledger = stored
            if self.mirror is not None and self.mirror.is_file():
                local = self._parse_ledger(self.mirror.read_bytes(), str(self.mirror))
                if local.last_sequence > ledger.last_sequence:
                    ledger = local  # written after the store's copy (e.g. the store's was lost with a spool)
            if ledger.alpha != self.settings.daemon.moving_average_alpha:
                log.warning(
                    "ledger alpha %s differs from moving_average_alpha %s; the ledger's value is kept",
                    ledger.alpha,
                    self.settings.daemon.moving_average_alpha,
                )
            return ledger

    @staticmethod
    def _parse_ledger(raw: bytes, where: str) -> Ledger:
        try:
            return decode_ledger(raw, where)
        except ValueError as exc:  # LedgerError is a ValueError
            raise DaemonError(f"{exc}; move it aside to start a new ledger") from exc

    def _save_ledger(self) -> None:
        data = dumps(self.ledger.to_json())
        if self.mirror is not None:
            write_atomic(self.mirror, data)
        self.store.put(keys.ledger(), data, "application/json")

    def forget(self, miners: Iterable[str]) -> None:
        """Drop ``miners`` from the ledger and store it (chain mode: hotkeys that left the subnet, docs/chain.md).
        The ledger keeps them as ``forgotten`` until the next round, whose input and record say so."""
        ledger = self.ledger.without(miners)
        if ledger is not self.ledger:
            self.ledger = ledger
            self._save_ledger()

    # ---- the tick under way ------------------------------------------------------------------------
    def tick_plan(self, sequence: int) -> TickPlan:
        """The committees of the tick round ``sequence`` belongs to: drawn when the tick starts (seeded by the
        secret and the tick number) and kept in the store (and the local mirror) until its last committee is
        applied, so a restart mid-tick asks the same committees. Without a roster (a query that cannot say who
        its miners are) the tick is one committee of whoever the query asks (empty members)."""
        open_tick = self.ledger.open_tick
        tick = open_tick.tick if open_tick is not None else self.ledger.last_tick + 1
        first = sequence - (open_tick.done if open_tick is not None else 0)
        for plan in (self._plan, self._load_plan()):
            if plan is not None and plan.tick == tick and plan.first_sequence == first:
                self._plan = plan
                return plan
        roster = list(self.roster())
        if not roster:
            return TickPlan(tick, first, ((),))
        if open_tick is not None:
            log.warning("tick %d: its stored committees are gone; drawing them again from the secret", tick)
        names = [m for m, _ in roster]
        plan = plan_tick(
            self.secret, tick, first, names, self.draw_entities(roster), self.settings.daemon.committee_size
        )
        if open_tick is not None and len(plan.committees) != open_tick.committees:
            raise DaemonError(
                f"tick {tick}: its stored committees are gone and the miners or their links changed since it started; "
                f"restore {keys.tick_plan()} to resume it"
            )
        data = dumps(plan.to_json())
        if self.mirror is not None:
            write_atomic(self.mirror.with_name(keys.tick_plan()), data)
        self.store.put(keys.tick_plan(), data, "application/json")
        self._plan = plan
        return plan

    def draw_entities(self, roster: Sequence[tuple[str, str | None]]) -> dict[str, str | None]:
        """The entities the draw deals apart: the roster's declared ones united with the identity links of the ledger
        held now (the tick's start: ``validator.records.ledger_entries.identity_links``, none when ``identity_persistence`` is off), so
        identities the ledger has linked land in different committees (``daemon.committee_links``; docs/daemon.md)."""
        declared = dict(roster)
        if not self.settings.daemon.committee_links:
            return declared
        found = identity_links(self.ledger, self.settings.consensus, declared)
        return linked_entities(declared, [(link.first, link.second) for link in found])

    def _load_plan(self) -> TickPlan | None:
        """The stored plan of the tick under way (the store's, else the local mirror's); None when neither."""
        raw, where = self._stored_bytes(keys.tick_plan()), keys.tick_plan()
        if raw is None and self.mirror is not None and self.mirror.with_name(keys.tick_plan()).is_file():
            raw, where = self.mirror.with_name(keys.tick_plan()).read_bytes(), str(self.mirror.with_name(where))
        if raw is None:
            return None
        try:
            return decode_tick_plan(raw, where)
        except ValueError as exc:
            raise DaemonError(f"{exc}; move it aside to draw the tick again") from exc

    def round_id(self, sequence: int) -> str:
        return f"{self.settings.daemon.round_prefix}{sequence:06d}"

    def _stored_json(self, key: str) -> dict[str, Any] | None:
        """The JSON document under ``key`` (``validator.records.reader.decode_json``); None when it is not stored or the
        store cannot say (an outage)."""
        raw = self._stored_bytes(key)
        return None if raw is None else decode_json(raw, key)

    def _stored_bytes(self, key: str) -> bytes | None:
        try:
            return self.store.get(key)
        except KeyNotFound:
            return None
        except StoreError as exc:
            # Only a crash in the middle of this very round could have left something here; the
            # ledger never counted it, so asking again and overwriting it on upload is safe. A
            # spooling store logs the outage itself, once when it starts and once when it ends.
            quiet = getattr(self.store, "reports_outages", False)
            log.log(
                logging.DEBUG if quiet else logging.WARNING, "cannot check %s (%s); treating it as not stored", key, exc
            )
            return None

    def _check_ours(self, marker: InputMarker | None, key: str, sequence: int) -> None:
        """``marker`` (a record's or an input's daemon marker, ``validator.records.reader.marker_of``) must name this daemon's ``sequence``."""
        if marker is None or marker.sequence != sequence:
            raise DaemonError(
                f"{key} exists and was not written by this daemon for sequence {sequence}; "
                f"it is left untouched. Use another daemon.round_prefix or another store."
            )

    @staticmethod
    def _parse_record(doc: dict[str, Any], key: str) -> rec.RoundRecord:
        try:
            return rec.RoundRecord.from_json(doc, key)
        except rec.RecordError as exc:
            raise DaemonError(
                f"{exc}; the round cannot be resumed from it (move it aside to evaluate the round again)"
            ) from exc
