"""Which stored rounds a replay or what-if re-evaluates: by round id, by start time, in the store's order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from storage import keys
from storage.base import Store


@dataclass(frozen=True)
class RoundSelection:
    round_ids: frozenset[str] | None = None
    since: str | None = None  # ISO 8601 UTC, inclusive (daemon rounds' started_at)
    until: str | None = None  # exclusive

    def keeps(self, round_id: str, started_at: str | None) -> bool:
        if self.round_ids is not None and round_id not in self.round_ids:
            return False
        if self.since is None and self.until is None:
            return True
        if started_at is None:
            return False  # rounds without a start time (replayed from files) are outside any time range
        moment = _parse_time(started_at)
        return (self.since is None or moment >= _parse_time(self.since)) and (
            self.until is None or moment < _parse_time(self.until)
        )


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def round_keys(store: Store) -> list[str]:
    """The ``input.json`` key of every stored round, in the store's (sorted) order: the fold's order."""
    out = []
    for key in store.list(keys.ROUNDS):
        parsed = keys.parse(key)
        if parsed is not None and parsed.is_input:
            out.append(key)
    return out


def select(found: list[str], selection: RoundSelection) -> list[str]:
    """The input keys among ``found`` to re-evaluate: a round-id filter is applied here, by key (the time
    range needs the stored input: the job applies it)."""
    if selection.round_ids is None:
        return list(found)
    wanted = {keys.round_input(rid) for rid in selection.round_ids}
    return [k for k in found if k in wanted]


def selected_keys(store: Store, selection: RoundSelection) -> list[str]:
    """``select`` over every stored round of ``store``."""
    return select(round_keys(store), selection)
