"""validator.records.replay_summary: summary.json and replays/<id>.json as typed documents, written and read through one model."""

from __future__ import annotations

import pytest

from validator.records.replay_summary import (
    SCHEMA,
    EmbeddingModel,
    MinerTotals,
    ReplaySummaryFile,
    RoundDiffRow,
    RunSetup,
    StoreReplayFile,
    SummaryError,
)


def test_a_summary_reads_back_as_written():
    summary = ReplaySummaryFile(
        source="rounds.jsonl",
        evaluated=("r-2", "r-1"),
        failed=1,
        consensus_reached=2,
        failures=({"line": 3, "error": "line 3: malformed JSON"},),
        miners={"m": MinerTotals(2, 1, 0.5, 40.0, 900)},
        run=RunSetup(EmbeddingModel("minilm", "ab"), {"consensus": {"clustering": True}}),
    )
    doc = summary.to_json()
    assert doc["schema"] == SCHEMA and doc["rounds"] == {"evaluated": 2, "failed": 1, "consensus_reached": 2}
    assert list(doc)[-2:] == ["embedding", "config"] and doc["embedding"] == {
        "model": "minilm",
        "checksum_sha256": "ab",
    }
    assert ReplaySummaryFile.from_json(doc) == summary


@pytest.mark.parametrize(
    "doc,field",
    [
        ([], "not a replay summary"),
        ({"schema": "other"}, "not a replay summary"),
        ({"schema": SCHEMA, "evaluated": "r-1"}, "evaluated"),
        ({"schema": SCHEMA, "evaluated": [], "rounds": []}, "rounds"),
        ({"schema": SCHEMA, "evaluated": [], "miners": {"m": {"rounds": 1}}}, "miners.m: field 'in_consensus'"),
        ({"schema": SCHEMA, "evaluated": [], "embedding": {"model": 3}}, "field 'embedding.model': expected str"),
        ({"schema": SCHEMA, "evaluated": [], "config": []}, "field 'config': expected an object"),
    ],
)
def test_a_bad_summary_names_its_field(doc, field):
    with pytest.raises(SummaryError, match=field):
        ReplaySummaryFile.from_json(doc)


def test_a_store_replay_report_reads_back_as_written():
    report = StoreReplayFile(
        replay_id="replay-1",
        rounds=(RoundDiffRow("r-1", ("a",), ("b",), {"a": (0, 5), "b": (5, 0)}, 0.4, 0.6, True, True),),
        failures=({"round_id": "r-2", "error": "unreadable input"},),
        emission_changes={"a": 5, "b": -5},
        run=RunSetup(EmbeddingModel("minilm", "ab"), {"consensus": {}}),
    )
    doc = report.to_json()
    assert doc["rounds"][0]["emissions"]["a"] == {"before": 0, "after": 5, "change": 5}
    assert StoreReplayFile.from_json(doc, "replays/replay-1.json") == report


@pytest.mark.parametrize(
    "doc,field",
    [
        ({"schema": SCHEMA}, "not a store replay"),
        ({"schema": "consensus-validator/replay-diff/1", "rounds": {}}, "rounds"),
        ({"schema": "consensus-validator/replay-diff/1", "rounds": [{"round_id": "r"}]}, r"rounds\[0\]"),
        ({"schema": "consensus-validator/replay-diff/1", "rounds": [], "emission_changes": {"a": "x"}}, "emission"),
    ],
)
def test_a_bad_store_replay_report_names_its_field(doc, field):
    with pytest.raises(SummaryError, match=field):
        StoreReplayFile.from_json(doc, "replays/x.json")


def test_miner_totals_count_a_miners_answers_in_order():
    totals = MinerTotals.of([(True, 80.0, 600), (False, 20.0, 0), (True, 50.0, 300)])
    assert totals == MinerTotals(rounds=3, in_consensus=2, in_consensus_rate=2 / 3, mean_composite=50.0, emissions=900)
    assert MinerTotals.of([]) == MinerTotals(0, 0, 0.0, 0.0, 0)
