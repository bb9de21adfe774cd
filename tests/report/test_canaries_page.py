"""The report's canary page: per canary round whether consensus was right, and the running rate."""

from __future__ import annotations

from storage.memory import MemoryStore
from tests.validator.test_canaries import Scripted, make
from validator.daemon.committee_draw import canary_round
from validator.daemon.committee_secret import PUBLIC
from validator.report.builder import build_report
from validator.report.canaries_page import canary_rows
from validator.review import load_store


def test_canary_page_counts_how_often_consensus_was_right(embedder, tmp_path):
    store = MemoryStore()
    make(store, embedder, Scripted(), canary_rate=0.3, canary_seed=0).run(rounds=6)
    expected = [s for s in range(1, 7) if canary_round(PUBLIC, s, 0.3, 0)]  # the daemon has no secret: the empty key
    rows = canary_rows(load_store(store).rounds)
    assert [r.order for r in rows] == expected
    # the canary's reference decides (consensus.reference): the wrong majority cannot win a canary round, so
    # consensus was right in each, and the running rate says so round after round
    assert all(r.consensus_right is True for r in rows)
    assert [(r.right_so_far, r.judged_so_far) for r in rows] == [(k, k) for k in range(1, len(rows) + 1)]
    build_report(store, tmp_path / "site")
    page = (tmp_path / "site" / "canaries.html").read_text()
    assert f"Consensus was right in {len(rows)} of {len(rows)}" in page
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'href="canaries.html"' in index and "Canary accuracy" in index


def test_no_canaries_no_rows(embedder, tmp_path):
    store = MemoryStore()
    make(store, embedder, Scripted(), canary_rate=0.0).run(rounds=2)
    assert canary_rows(load_store(store).rounds) == []
    build_report(store, tmp_path / "site")
    assert "No canary round in this store" in (tmp_path / "site" / "canaries.html").read_text()
