"""Reading a store for review: ``load_store``, ``load_round`` and the notebook helpers built on them.

The store is only read, never written, through the one reader
(``validator.records.reader.RoundReader``). Keys are built by ``storage.keys``
alone (key segments are unquoted for display, never turned back into ids);
anything unreadable becomes a ``Skipped`` entry instead of an error, so one
bad record does not hide the others.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from storage import keys
from storage.base import KeyNotFound, Store, StoreError
from validator.app import store_for
from validator.records.ledger_entries import LedgerError
from validator.records.reader import RoundReader
from validator.review.display import PNG, PNG_SIGNATURE, Table, display_text
from validator.review.rounds import RoundReview, RoundRow, parse_record
from validator.review.store import Skipped, StoreReview
from validator.settings import load_settings

__all__ = ["as_store", "ledger_frame", "load_heatmap", "load_round", "load_store", "load_texts", "miner_trends"]


def as_store(store: Store | str) -> Store:
    """``store`` itself, or the store its URI names (an ``s3://`` one reached with the ``[s3]`` settings)."""
    if not isinstance(store, str):
        return store

    return store_for(store, load_settings())


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _natural(text: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def _unquote(segment: str) -> str:
    """A readable form of a key segment (display only; ids are never rebuilt from segments)."""
    return unquote(segment, errors="replace")


def load_store(store: Store | str) -> StoreReview:
    """Every evaluated round of ``store`` (a ``Store`` or a URI), in order; unreadable records are listed in
    ``skipped``, never raised. Raises ``StoreError`` only when the store cannot be listed."""
    store = as_store(store)
    reader = RoundReader(store)
    records: dict[str, str] = {}  # key segment -> evaluation key
    inputs: set[str] = set()
    replays: dict[str, list[str]] = {}
    for key in store.list(keys.ROUNDS):
        parsed = keys.parse(key)
        if parsed is None:
            continue
        if parsed.replay is None and parsed.is_evaluation:
            records[parsed.segment] = key
        elif parsed.is_input:
            inputs.add(parsed.segment)
        elif parsed.replay is not None and parsed.is_evaluation:
            replays.setdefault(parsed.segment, []).append(parsed.replay)
    rounds: list[RoundRow] = []
    skipped: list[Skipped] = []
    alpha: float | None = None
    for segment, key in records.items():
        try:
            record = reader.record_at(key)
            view = parse_record(record, replays=[_unquote(r) for r in sorted(replays.get(segment, []))])
        except (StoreError, ValueError, UnicodeDecodeError) as exc:
            skipped.append(Skipped(key, f"unreadable: {exc}"))
            continue
        if keys.evaluation(view.round_id) != key:
            skipped.append(Skipped(key, f"the record names round {view.round_id!r}, stored under another key"))
            continue
        if alpha is None:
            alpha = _num(record.config.value("daemon", "moving_average_alpha"))
        rounds.append(view)
    rank = _replay_order(reader)
    rounds.sort(
        key=lambda r: (
            (0, r.sequence, ())
            if r.sequence is not None
            else (1, rank.get(r.round_id, len(rank)), _natural(r.round_id))
        )
    )
    rounds = [replace(r, order=i) for i, r in enumerate(rounds, start=1)]
    pending = [_pending_id(reader, segment) for segment in sorted(inputs - set(records))]
    ledger = None
    try:
        ledger = reader.ledger()
    except (StoreError, ValueError, UnicodeDecodeError, LedgerError) as exc:
        skipped.append(Skipped(keys.ledger(), f"unreadable: {exc}"))
    return StoreReview(tuple(rounds), ledger, tuple(skipped), tuple(pending), config_alpha=alpha)


def _pending_id(reader: RoundReader, segment: str) -> str:
    """The id of a round with an input but no evaluation: its input's ``round_id`` when that id's key is this
    input, else the unquoted key segment."""
    try:
        rid: str | None = reader.input_at(keys.input_of(segment)).round_id
    except (StoreError, ValueError, UnicodeDecodeError):
        rid = None
    return rid if rid is not None and keys.round_input(rid) == keys.input_of(segment) else _unquote(segment)


def _replay_order(reader: RoundReader) -> dict[str, int]:
    """Round id -> place in the file a replay read (``summary.json``'s ``evaluated``); empty without one."""
    try:
        summary = reader.summary()
    except (StoreError, ValueError, UnicodeDecodeError):
        return {}
    evaluated = summary.evaluated if summary is not None else ()
    return {rid: i for i, rid in reversed(list(enumerate(evaluated)))}


def load_texts(store: Store, stored: RoundRow) -> tuple[str | None, ...]:
    """The answers' texts by response index, from the round's ``input.json`` (``None`` where missing)."""
    texts: list[str | None] = [None] * len(stored.responses)
    try:
        answers = RoundReader(store).input(stored.round_id).responses
    except (StoreError, ValueError, UnicodeDecodeError):
        return tuple(texts)
    for row in stored.responses:
        if 0 <= row.index < len(answers) and row.index < len(texts) and answers[row.index].miner == row.miner:
            texts[row.index] = display_text(answers[row.index].text)
    return tuple(texts)


def load_heatmap(store: Store, stored: RoundRow) -> PNG | None:
    """The round's heatmap PNG, or ``None`` when there is none (or what is stored is not a PNG)."""
    if not stored.has_heatmap:
        return None
    try:
        data = RoundReader(store).heatmap(stored.round_id)
    except StoreError:
        return None
    return PNG(data) if data is not None and data.startswith(PNG_SIGNATURE) else None


def load_round(store: Store | str, round_id: str | None = None) -> RoundReview:
    """One round in full (``round_id=None``: the store's last round). ``KeyError`` if it is not stored."""
    store = as_store(store)
    if round_id is None:
        review = load_store(store)
        if not review.rounds:
            raise KeyError("the store holds no evaluated round")
        round_id = review.rounds[-1].round_id
    try:
        record = RoundReader(store).record(round_id)
    except KeyNotFound:
        raise KeyError(round_id) from None
    replays = sorted(
        {
            _unquote(parsed.replay)
            for parsed in map(keys.parse, store.list(keys.replays_prefix(round_id)))
            if parsed is not None and parsed.replay is not None and parsed.is_evaluation
        }
    )
    stored = parse_record(record, replays=replays)
    return RoundReview(stored, load_texts(store, stored), load_heatmap(store, stored), record)


def ledger_frame(store: Store | str) -> Table:
    """Per-miner ledger totals (rounds, answered, in consensus, emissions, EMA, weight) of ``store``."""
    return load_store(store).ledger_table()


def miner_trends(store: Store | str, *, top: int = 8) -> PNG:
    """Cumulative emissions and EMA score per round of the ``top`` miners by emissions, as a PNG."""
    # lazy: start-up cost, matplotlib (through validator.report.plots) takes 1.7 s to import
    from validator.report.plots import trends_png

    review = load_store(store)
    trajectory = review.ledger_trajectory()
    miners = list(review.miners())[:top]
    emissions = {m: [s.miners[m].emissions if m in s.miners else 0 for s in trajectory] for m in miners}
    ema = {m: [s.miners[m].ema if m in s.miners else 0.0 for s in trajectory] for m in miners}
    return PNG(trends_png(emissions, ema))
