"""validator.summary: summary.json as a typed document, written and read through one model."""

from __future__ import annotations

import pytest

from validator.summary import SCHEMA, MinerTotals, ReplaySummaryFile, SummaryError


def test_a_summary_reads_back_as_written():
    summary = ReplaySummaryFile(
        source="rounds.jsonl",
        evaluated=("r-2", "r-1"),
        failed=1,
        consensus_reached=2,
        failures=({"line": 3, "error": "line 3: malformed JSON"},),
        miners={"m": MinerTotals(2, 1, 0.5, 40.0, 900)},
        model="minilm",
        checksum_sha256="ab",
        config={"consensus": {"clustering": True}},
    )
    doc = summary.to_json()
    assert doc["schema"] == SCHEMA and doc["rounds"] == {"evaluated": 2, "failed": 1, "consensus_reached": 2}
    assert ReplaySummaryFile.from_json(doc) == summary


@pytest.mark.parametrize(
    "doc,field",
    [
        ([], "not a replay summary"),
        ({"schema": "other"}, "not a replay summary"),
        ({"schema": SCHEMA, "evaluated": "r-1"}, "evaluated"),
        ({"schema": SCHEMA, "evaluated": [], "rounds": []}, "rounds"),
        ({"schema": SCHEMA, "evaluated": [], "miners": {"m": {"rounds": 1}}}, "miners"),
    ],
)
def test_a_bad_summary_names_its_field(doc, field):
    with pytest.raises(SummaryError, match=field):
        ReplaySummaryFile.from_json(doc)
