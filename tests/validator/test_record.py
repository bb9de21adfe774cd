"""The typed evaluation record: round trips, records written before it (tests/golden/records), clear errors."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from storage.codec import dumps
from tests.validator.records import make_record
from validator.records import evaluation_record as rec
from validator.records.evaluation_record import (
    SCHEMA,
    SCHEMA_VERSION,
    RecordError,
    RoundRecord,
    load_record,
    parse_schema,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "records"
RECORDS = sorted(GOLDEN.glob("*/*.json"))


def golden(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_golden_records_are_there():
    kinds = {p.parent.name for p in RECORDS}
    assert kinds == {"replay", "daemon", "lm"} and len([p for p in RECORDS if p.parent.name == "replay"]) == 22


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_record_written_before_the_typed_record_loads_and_writes_back_the_same(path):
    data = golden(path)
    record = RoundRecord.from_json(data, str(path))
    assert record.round_id == data["round_id"] and len(record.responses) == len(data["responses"])
    # what writing it again changes: the schema string, and a daemon record's "heatmap.url": null (no
    # presigned URL) is no longer written
    expected = {**data, "schema": SCHEMA}
    if data.get("heatmap", {}).get("url", "absent") is None:
        expected["heatmap"] = {k: v for k, v in data["heatmap"].items() if k != "url"}
    assert record.to_json() == expected
    assert RoundRecord.from_json(record.to_json()) == record


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("replay/*.json")), ids=lambda p: p.stem)
def test_a_replay_record_is_written_byte_for_byte_as_before_but_for_the_schema(path):
    raw = path.read_bytes()
    rewritten = dumps(load_record(raw, str(path)).to_json())
    old_line = b'"schema": "consensus-validator/evaluation/1",'
    assert rewritten == raw.replace(old_line, f'"schema": "{SCHEMA}",'.encode())


def test_round_trip_of_a_built_record():
    record = make_record("r-1", [("a", True, 600), ("b", False, 0), ("c", True, 400)], status="ok", sequence=3)
    assert RoundRecord.from_json(record.to_json()) == record
    assert RoundRecord.from_json(json.loads(dumps(record.to_json()))) == record
    assert record.to_json()["schema"] == SCHEMA and record.top_miner is None and record.evaluated


def test_a_no_quorum_record_leaves_out_what_only_an_evaluation_has():
    data = golden(GOLDEN / "daemon" / "round-000002-no-quorum.json")
    record = RoundRecord.from_json(data)
    assert not record.evaluated and record.embedding is None and record.responses[0].cluster is None
    out = record.to_json()
    assert "embedding" not in out and "filters" not in out and "polarity_checks" not in out
    assert set(out["responses"][0]) == set(data["responses"][0])
    assert set(out["responses"][0]["score"]) == {"composite"} and set(out["consensus"]) == {"score", "reached", "note"}


def test_an_evaluated_record_needs_its_evaluation_parts():
    data = golden(GOLDEN / "replay" / "r-0001.json")
    del data["responses"][2]["tokens"]
    with pytest.raises(RecordError, match=r"r-0001\.json: field 'responses\[2\]\.tokens': missing \(every evaluated"):
        RoundRecord.from_json(data, "rounds/r-0001.json")


@pytest.mark.parametrize(
    ("path", "value", "named", "why"),
    [
        (("round_id",), None, "round_id", "expected str, got null"),
        (("responses", 1, "words"), 2.5, "responses[1].words", "expected int, got float"),
        (("responses", 1, "in_consensus"), "yes", "responses[1].in_consensus", "expected bool, got str"),
        (("responses", 0, "emissions", "amount"), True, "responses[0].emissions.amount", "expected int, got bool"),
        (("responses", 0, "score", "composite"), float("nan"), "responses[0].score.composite", "finite"),
        (("consensus", "score"), "high", "consensus.score", "expected float, got str"),
        (("members",), {"0": 1}, "members", "expected a list"),
        (("narrative",), "text", "narrative", "expected an object"),
        (("config",), [], "config", "expected an object"),
    ],
)
def test_a_wrongly_typed_field_is_named(path, value, named, why):
    data = golden(GOLDEN / "replay" / "r-0003.json")
    target = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    with pytest.raises(RecordError) as err:
        RoundRecord.from_json(data, "rounds/r-0003/evaluation.json")
    assert str(err.value).startswith(f"rounds/r-0003/evaluation.json: field {named!r}: ") and why in str(err.value)


def test_missing_and_unknown_fields_are_named():
    data = golden(GOLDEN / "replay" / "r-0004.json")
    missing = copy.deepcopy(data)
    del missing["narrative"]["kind"]
    with pytest.raises(RecordError, match=r"field 'narrative\.kind': missing$"):
        RoundRecord.from_json(missing, "x")
    unknown = copy.deepcopy(data)
    unknown["responses"][0]["score"]["bribe"] = 1.0
    with pytest.raises(RecordError, match=r"field 'responses\[0\]\.score\.bribe': unknown field$"):
        RoundRecord.from_json(unknown, "x")
    newer = {**copy.deepcopy(unknown), "schema": f"{rec.SCHEMA_NAME}/{SCHEMA_VERSION[0]}.{SCHEMA_VERSION[1] + 1}"}
    with pytest.raises(RecordError, match="unknown field .*newer than this code"):
        RoundRecord.from_json(newer, "x")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (None, "missing or not a string"),
        ("consensus-validator/ledger/1", "is not an evaluation record"),
        ("consensus-validator/evaluation/2", "major version 2 cannot be read"),
        ("consensus-validator/evaluation/1.x", "is not an evaluation record"),
    ],
)
def test_another_schema_is_refused(schema, message):
    data = golden(GOLDEN / "replay" / "r-0005.json")
    data["schema"] = schema
    with pytest.raises(RecordError, match=message):
        RoundRecord.from_json(data, "x")


def test_schema_strings():
    assert parse_schema("consensus-validator/evaluation/1") == (1, 0)
    assert parse_schema("consensus-validator/evaluation/1.7") == (1, 7)
    assert rec.schema_string((1, 0)) == "consensus-validator/evaluation/1" and parse_schema(SCHEMA) == SCHEMA_VERSION


@pytest.mark.parametrize("data", [None, [], "record", 3])
def test_a_non_object_is_refused(data):
    with pytest.raises(RecordError, match="not an evaluation record"):
        RoundRecord.from_json(data, "x")


def test_bytes_that_are_not_json_are_a_record_error():
    with pytest.raises(RecordError, match="^k: not JSON"):
        load_record(b"{not json", "k")
    with pytest.raises(RecordError, match="^k: not JSON"):
        load_record(b"\xff\xfe", "k")


def _record_classes(cls=RoundRecord, seen=None):
    import typing

    seen = set() if seen is None else seen
    if cls in seen:
        return seen
    seen.add(cls)
    for tp in typing.get_type_hints(cls).values():
        for arg in (tp, *typing.get_args(tp), *(a for t in typing.get_args(tp) for a in typing.get_args(t))):
            if dataclasses.is_dataclass(arg):
                _record_classes(arg, seen)
    return seen


def test_every_field_added_after_1_0_is_optional_and_not_newer_than_the_schema():
    # the rule that keeps older records loading (module docstring of validator.records.evaluation_record)
    for cls in _record_classes():
        for f in dataclasses.fields(cls):
            since = f.metadata.get("since", 0)
            assert since <= SCHEMA_VERSION[1], (cls.__name__, f.name)
            if since > 0:
                assert f.default is not dataclasses.MISSING and f.metadata.get("omit_none"), (cls.__name__, f.name)


def test_reading_does_not_modify_the_input():
    data = golden(GOLDEN / "lm" / "r-0002.json")
    before = copy.deepcopy(data)
    record = RoundRecord.from_json(data)
    assert data == before and record.polarity_checks and record.reference_checks
    assert record.responses[3].confidence_source == "selectit"


def test_typed_parts_are_frozen():
    record = make_record("r", [("a", True, 1)])
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.round_id = "other"  # type: ignore[misc]


def test_todays_daemon_resumes_from_a_record_the_old_daemon_stored(embedder):
    from storage import MemoryStore, keys
    from tests.validator.test_daemon import make

    store = MemoryStore()
    raw = (GOLDEN / "daemon" / "round-000001.json").read_bytes()
    store.put(keys.evaluation("round-000001"), raw)

    def never(prompt):
        raise AssertionError("the stored evaluation must be applied, not asked again")

    daemon = make(store, embedder, never)
    report = daemon.run_one()
    old = json.loads(raw)
    assert report.recovered == "evaluation" and report.status == "ok"
    assert report.paid == old["emissions"]["total"] and report.top_miner == "bob"
    assert daemon.ledger.emitted == old["emissions"]["total"] and daemon.ledger.last_sequence == 1
    assert store.get(keys.evaluation("round-000001")) == raw  # applied, never rewritten


def test_the_daemon_stops_on_an_unreadable_record_of_its_own(embedder):
    from storage import MemoryStore, keys
    from tests.validator.test_daemon import make
    from validator.daemon.daemon import DaemonError

    data = golden(GOLDEN / "daemon" / "round-000001.json")
    del data["responses"][0]["score"]["composite"]
    store = MemoryStore()
    store.put(keys.evaluation("round-000001"), json.dumps(data).encode())
    with pytest.raises(DaemonError, match=r"round-000001/evaluation.json: field 'responses\[0\]\.score\.composite'"):
        make(store, embedder).run_one()


def test_the_review_reads_every_old_record():
    from storage import MemoryStore, keys
    from validator.review import load_round, load_store

    store = MemoryStore()
    chosen = [p for p in RECORDS if p.parent.name == "replay" or p.stem in ("round-000001", "round-000002-no-quorum")]
    for path in chosen:
        store.put(keys.evaluation(golden(path)["round_id"]), path.read_bytes())
    review = load_store(store)
    assert not review.skipped and len(review.rounds) == len(chosen) == 24
    no_quorum = review.round("round-000002")
    assert no_quorum.status == "no_quorum" and no_quorum.score is None and no_quorum.emitted == 0
    r1 = load_round(store, "r-0001")
    assert r1.round.emitted == r1.record.emissions.total and r1.record.responses[0].score.weights is not None


def test_the_config_is_the_settings_own_types_and_an_older_record_says_what_it_did_not_hold():
    from consensus.config import ConsensusConfig
    from validator.records.recorded_config import RecordedConfig
    from validator.settings import Settings

    data = golden(GOLDEN / "replay" / "r-0001.json")
    config = RoundRecord.from_json(data, "r-0001").config
    assert (
        isinstance(config.consensus, ConsensusConfig) and config.consensus.filters.lof_keep_central is True
    )  # today's
    assert config.value("consensus", "lof_keep_central") is None  # ... but the record predates the setting
    assert config.value("daemon", "moving_average_alpha") == 0.1 == config.daemon.moving_average_alpha
    assert config.__to_plain__() == data["config"]  # written again as it was read
    # read as today's settings: a renamed one under its new name, one retired into a constant left out
    assert config.as_plain()["consensus"]["length_tolerance"] == data["config"]["consensus"]["quality_sensitivity"]
    assert (
        "quality_sensitivity" not in config.as_plain()["consensus"] and "lof_neighbors" in data["config"]["consensus"]
    )
    assert "lof_neighbors" not in config.as_plain()["consensus"] and "heatmap" not in config.as_plain()["consensus"]
    today = RecordedConfig.of(Settings())
    assert not today.absent and dumps(today.as_plain()) == dumps(Settings().as_dict())


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"chain": {}}, "config.chain"),
        ({"daemon": {"no_such_setting": 1}}, "config.daemon.no_such_setting"),
        ({"daemon": {"quorum": 1}}, "config.daemon"),  # below its declared limit
    ],
)
def test_a_config_the_settings_cannot_hold_is_named(change, named):
    data = golden(GOLDEN / "replay" / "r-0002.json")
    data["config"] = {**data["config"], **change}
    with pytest.raises(RecordError, match=f"field '{named}'"):
        RoundRecord.from_json(data, "r-0002")
