"""validator.records.reader: the one reader of a store's files (absent optional files, unreadable ones named by key)."""

from __future__ import annotations

import pytest

from storage import MemoryStore, keys
from storage.base import KeyNotFound
from storage.codec import dumps
from validator.daemon.committee_draw import TickPlan
from validator.records.evaluation_record import RecordError
from validator.records.ledger_entries import Ledger, LedgerError
from validator.records.reader import RoundReader, decode_ledger, decode_tick_plan


def test_optional_files_absent_read_as_none():
    reader = RoundReader(MemoryStore())
    assert reader.ledger() is None and reader.tick_plan() is None and reader.summary() is None
    assert reader.evidence("r") is None and reader.heatmap("r") is None
    with pytest.raises(KeyNotFound):
        reader.record("r")
    with pytest.raises(KeyNotFound):
        reader.input("r")


def test_the_store_documents_read_back_as_written():
    store = MemoryStore()
    ledger = Ledger(alpha=0.2)
    plan = TickPlan(3, 7, (("a", "b"), ("c",)))
    store.put(keys.ledger(), dumps(ledger.to_json()), "application/json")
    store.put(keys.tick_plan(), dumps(plan.to_json()), "application/json")
    reader = RoundReader(store)
    assert reader.ledger() == ledger and reader.tick_plan() == plan


@pytest.mark.parametrize("raw", [b"{not json", b'{"schema": "other"}'])
def test_an_unreadable_document_names_its_key(raw):
    store = MemoryStore()
    for key in (keys.ledger(), keys.tick_plan(), keys.evaluation("r"), keys.round_input("r")):
        store.put(key, raw, "application/json")
    reader = RoundReader(store)
    with pytest.raises(LedgerError, match="ledger.json"):
        reader.ledger()
    with pytest.raises(ValueError, match="daemon-tick.json"):
        reader.tick_plan()
    with pytest.raises(RecordError, match="evaluation.json"):
        reader.record("r")
    with pytest.raises(ValueError, match="input.json"):
        reader.input("r")
    with pytest.raises(LedgerError, match="mirror"):
        decode_ledger(raw, "mirror")
    with pytest.raises(ValueError, match="mirror"):
        decode_tick_plan(raw, "mirror")
