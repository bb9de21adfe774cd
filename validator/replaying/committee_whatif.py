"""What committees would have done to stored rounds: each full round split as the daemon would split a tick.

``validator whatif STORE --committee-size K`` (``validator/cli/whatif.py``) takes every selected stored round
in which everyone answered one prompt (a rounds file replayed, a daemon before committees) as one tick: its
answers are split into committees with the daemon's draw (``validator.daemon.committee_draw.draw_committees``, entities
kept apart, seeded by ``HMAC(secret, tick)``), each committee evaluated as a round of its own (the same prompt:
the stored answers are all there is), and the ledger folded per tick as the daemon folds it. The originals
are folded beside it, one tick per round, so the operator sees every miner's weight and units both ways.
Nothing is written to the store. The committees are evaluated without the LM (a committee's LM evidence was
never asked); the original side is the stored records as they are.

The fixed worst case (everyone on one prompt, the answers of the same prompt split) overstates what
committees do against a farm: in the daemon each committee gets its own prompt.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from consensus.embedder import Embedder
from consensus.types import InputMarker, Round
from emissions.ledger import Ledger
from emissions.ticks import TickPart
from storage.base import KeyNotFound, Store
from validator.daemon.committee_draw import derive, draw_committees
from validator.records.ledger_entries import fold_record
from validator.records.reader import RoundReader
from validator.replaying.selection import RoundSelection, selected_keys
from validator.replaying.whatif_run import config_changes
from validator.round.evaluate import evaluate_stored
from validator.settings import Settings


def split_round(stored: Round, size: int, secret: bytes, tick: int) -> list[Round]:
    """``stored``'s answers in the committees the daemon would draw for tick ``tick`` (round ids ``<id>~c<k>``)."""
    responses = stored.responses
    miners = [r.miner for r in responses]
    drawn = draw_committees(miners, {r.miner: r.entity for r in responses}, size, derive(secret, "committees", tick))
    out = []
    for c, members in enumerate(drawn):
        inside = set(members)
        marker = InputMarker(
            sequence=None,
            started_at=stored.started_at,
            canary=stored.canary,
            task=stored.task,
            tick=tick,
            committee=c,
            committees=len(drawn),
        )
        failures = {m: d for m, d in stored.failures.items() if m in inside}
        out.append(
            Round(
                f"{stored.round_id}~c{c:02d}",
                stored.prompt,
                tuple(r for r in responses if r.miner in inside),
                stored.reference,
                failures,
                marker,
            )
        )
    return out


@dataclass
class CommitteeWhatIf:
    """Both ledgers after the selected rounds: as stored (one tick per round) and split into committees."""

    committee_size: int
    rounds: int = 0
    committees: int = 0
    original: Ledger = field(default_factory=Ledger)
    split: Ledger = field(default_factory=Ledger)
    # the recorded settings that differ between the stored rounds and their committees (validator.replaying.whatif_run's
    # config_changes: setting, old, new), from the first round that has both
    changes: list[dict[str, Any]] = field(default_factory=list)
    compared: bool = False  # the changes were read (a stored round and a committee of it)

    @property
    def pools(self) -> float:
        """How many more pools the committees paid than the rounds as stored: each committee is paid as a round."""
        return self.committees / self.rounds if self.rounds else 0.0

    def rows(self) -> list[tuple[str, float, float, int, int]]:
        """(miner, weight as stored, weight with committees, units as stored, units with committees)."""
        old, new = self.original.weights(), self.split.weights()
        miners = sorted(set(old) | set(new), key=lambda m: (-new.get(m, 0.0), m))
        return [
            (
                m,
                old.get(m, 0.0),
                new.get(m, 0.0),
                self.original.miners[m].emissions if m in self.original.miners else 0,
                self.split.miners[m].emissions if m in self.split.miners else 0,
            )
            for m in miners
        ]


def _plain(record: Any) -> dict[str, Any]:
    """A record's recorded settings as JSON values (as stored)."""
    return json.loads(json.dumps(record.config.as_plain()))


def committee_whatif(
    store: Store,
    settings: Settings,
    embedder: Embedder,
    *,
    committee_size: int,
    secret: bytes,
    selection: RoundSelection = RoundSelection(),
    on_total: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
) -> CommitteeWhatIf:
    """Fold the selected stored rounds as stored and split into committees (module docstring)."""
    found: Sequence[str] = selected_keys(store, selection)
    d = settings.daemon
    result = CommitteeWhatIf(
        committee_size,
        original=Ledger(alpha=d.moving_average_alpha, canary_alpha=d.canary_alpha),
        split=Ledger(alpha=d.moving_average_alpha, canary_alpha=d.canary_alpha),
    )
    if on_total is not None:
        on_total(len(found))
    offline = dataclasses.replace(settings, lm=dataclasses.replace(settings.lm, enabled=False))
    for key in found:
        stored = RoundReader(store).input_at(key, settings.input)
        if not selection.keeps(stored.round_id, stored.started_at):
            continue
        result.rounds += 1
        tick = result.rounds
        try:
            original = RoundReader(store).record(stored.round_id)
        except KeyNotFound:
            original = None
        if original is not None:
            result.original = fold_record(result.original, result.original.last_sequence + 1, original)
        for part in split_round(stored, committee_size, secret, tick):
            record, _ = evaluate_stored(part, offline, embedder)
            marker = part.daemon
            assert marker is not None and marker.tick is not None
            result.committees += 1
            tick_of = TickPart(marker.tick, marker.committee or 0, marker.committees or 1)
            result.split = fold_record(result.split, result.split.last_sequence + 1, record, tick_of)
            if original is not None and not result.compared:
                result.changes, result.compared = config_changes(_plain(original), _plain(record)), True
        if on_done is not None:
            on_done(1)
    return result
