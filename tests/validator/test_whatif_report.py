"""validator.records.whatif_report: whatif.json as a typed document, written and read through one model."""

from __future__ import annotations

import pytest

from validator.records.whatif_report import SCHEMA, ConfigChange, MinerMove, WhatIfError, WhatIfFile, WhatIfRow


def report() -> WhatIfFile:
    return WhatIfFile(
        whatif_id="whatif-1",
        source="runs/daemon",
        round_ids=("r-1", "r-2"),
        since="2026-11-01T00:00:00Z",
        failed=1,
        skipped=2,
        config_changes=(ConfigChange("consensus.lambda_sigma", 0.5, 1.0),),
        miners={"a": MinerMove(10, 4, -6, 0.5, 0.25, -0.25, 1, 2, -1)},
        rounds=(WhatIfRow("r-1", True, True, False, 0.8, None, (), ("a",), True),),
        failures=({"round_id": "r-2", "error": "unreadable input"},),
        config={"consensus": {"lambda_sigma": 1.0}},
    )


def test_a_whatif_reads_back_as_written():
    doc = report().to_json()
    assert doc["schema"] == SCHEMA and doc["summary"]["rounds"] == 1 and doc["summary"]["membership_changed"] == 1
    assert doc["summary"]["reached_old"] == 1 and doc["summary"]["reached_new"] == 0
    assert WhatIfFile.from_json(doc) == report() and WhatIfFile.from_json(doc).to_json() == doc


@pytest.mark.parametrize(
    "change,field",
    [
        (lambda d: d.update(schema="other"), "not a whatif.json"),
        (lambda d: d.update(rounds={}), "rounds"),
        (lambda d: d["rounds"][0].pop("reached_new"), r"rounds\[0\]"),
        (lambda d: d["miners"]["a"].update(rank_old="first"), "miners.a"),
        (lambda d: d["selection"].update(round_ids="r-1"), "selection.round_ids"),
        (lambda d: d["summary"].update(failed=True), "summary.failed"),
        (lambda d: d["rounds"][0].update(original="yes"), r"rounds\[0\]: field 'original': expected bool"),
        (lambda d: d["config_changes"][0].pop("new"), r"config_changes\[0\]: field 'new': missing"),
    ],
)
def test_a_bad_whatif_names_its_field(change, field):
    doc = report().to_json()
    change(doc)
    with pytest.raises(WhatIfError, match=field):
        WhatIfFile.from_json(doc, "out/whatif.json")
