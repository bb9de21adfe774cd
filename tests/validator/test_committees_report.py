"""validator.replaying.committees_report: committees.json as a typed document, written and read through one model."""

from __future__ import annotations

import json

import pytest

from emissions.ledger import Ledger
from storage.codec import dumps
from validator.replaying.committee_whatif import CommitteeWhatIf
from validator.replaying.committees_report import SCHEMA, CommitteeMiner, CommitteesFile, CommitteesFileError


def report() -> CommitteesFile:
    return CommitteesFile(
        committee_size=4,
        rounds=3,
        committees=9,
        miners=(CommitteeMiner("a", 0.25, 0.5, 100, 180), CommitteeMiner("b", 0.75, 0.5, 300, 220)),
    )


def test_committees_json_reads_back_as_written(tmp_path):
    doc = report().to_json()
    assert list(doc) == ["schema", "committee_size", "rounds", "committees", "miners"] and doc["schema"] == SCHEMA
    assert doc["miners"][0] == {
        "miner": "a",
        "weight_before": 0.25,
        "weight_after": 0.5,
        "units_before": 100,
        "units_after": 180,
    }
    path = tmp_path / "committees.json"
    path.write_bytes(dumps(doc))
    assert CommitteesFile.read(path) == report() and CommitteesFile.from_json(doc).to_json() == doc


class Folded(CommitteeWhatIf):
    """A committee what-if whose ledgers are already folded: these rows."""

    def rows(self):
        return [("b", 0.75, 0.5, 300, 220), ("a", 0.25, 0.5, 100, 180)]


def test_the_file_of_a_committee_whatif_keeps_its_rows_in_order():
    result = Folded(4, rounds=3, committees=9, original=Ledger(), split=Ledger())
    made = CommitteesFile.of(result)
    assert made == CommitteesFile(4, 3, 9, tuple(reversed(report().miners)))
    assert [m["miner"] for m in made.to_json()["miners"]] == ["b", "a"]
    assert CommitteesFile.of(CommitteeWhatIf(2)).miners == ()  # nothing folded: no miner


@pytest.mark.parametrize(
    "change,field",
    [
        (lambda d: d.update(schema="other"), "not a committees.json"),
        (lambda d: d.pop("rounds"), "field 'rounds': missing"),
        (lambda d: d.update(committees="9"), "field 'committees': expected int, got str"),
        (lambda d: d["miners"][1].update(weight_after=None), r"field 'miners\[1\].weight_after': expected float"),
        (lambda d: d["miners"][0].update(units_before=True), r"field 'miners\[0\].units_before': expected int"),
        (lambda d: d["miners"][0].update(stake=1), r"field 'miners\[0\].stake': unknown field"),
        (lambda d: d.update(miners={}), "field 'miners': expected a list"),
    ],
)
def test_a_malformed_committees_json_names_the_file_and_field_in_one_line(tmp_path, change, field):
    doc = report().to_json()
    change(doc)
    path = tmp_path / "committees.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CommitteesFileError, match=field) as caught:
        CommitteesFile.read(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message


@pytest.mark.parametrize("text,why", [("{", "not JSON"), (None, "cannot be read")])
def test_an_unreadable_committees_json_names_the_file(tmp_path, text, why):
    path = tmp_path / "committees.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(CommitteesFileError, match=why) as caught:
        CommitteesFile.read(path)
    assert str(caught.value).startswith(f"{path}: ") and "\n" not in str(caught.value)
