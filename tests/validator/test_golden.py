"""Every number of ``validator replay examples/rounds.jsonl`` is today's (issue 11: behaviour stays the same).

The replay runs for real (the CLI, the real model) with ``--profile seed`` (the seed's behaviour: the shipped
profile ``validator/settings/profiles/seed.toml``, where a changed default keeps its old value) and each record is compared with the one the code before the typed record wrote
(``tests/golden/records/replay``, provenance in tests/golden/README.md) within what a replay promises on
another CPU (``tests.replay_tolerance``: booleans, nulls, small integers and words exactly, floats within 1e-6
relatively or absolutely, emission units within 1e-6 of their value, numbers in strings as numbers). The records
were written on another host: the real model's floats differ in their last bits between CPU kernels (OpenVINO
picks AVX2 or AVX-512 code by the processor), so bytes are not what is promised here. Only the declared fields
below may differ.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import pytest

from consensus.params import resolve
from storage import LocalStore, keys
from tests.replay_tolerance import differences
from validator.records.evaluation_record import RoundRecord

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "examples" / "rounds.jsonl"
# top-level fields a new version may write differently: the schema string and the producing package's version
DECLARED = {"schema", "producer"}
# settings a record keeps that decide no number beyond what a replay promises: the embedding's thread count
# (VALIDATOR_TEST_THREADS=N replays on N; the records were written with 0, one per core: the same numbers within
# tests.replay_tolerance, docs/round-format.md "What a replay promises")
HOW_FAST = {("embedding", "threads")}

pytestmark = pytest.mark.slow


def added_fields(cls: type = RoundRecord, seen: set | None = None) -> set[str]:
    """JSON names of the record's fields added after schema 1.0 (a new optional section may appear)."""
    seen = set() if seen is None else seen
    names: set[str] = set()
    if cls in seen:
        return names
    seen.add(cls)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.metadata.get("since", 0) > 0:
            names.add(f.metadata.get("key") or f.name)
        stack = [hints[f.name]]
        while stack:
            tp = stack.pop()
            if dataclasses.is_dataclass(tp):
                names |= added_fields(tp, seen)
            stack.extend(typing.get_args(tp))
    return names


def config_differences(old: dict, new: dict) -> list[str]:
    """Every old setting whose value the new record does not carry: under its name of today (a renamed one,
    ``consensus.params.resolve``), or as the constant it was retired into; one moved out of the recorded sections
    (``heatmap``: [output]) decides no number."""
    from validator.settings import SECTIONS

    out = []
    for section, values in old.items():
        for name, value in values.items():
            if (section, name) in HOW_FAST:
                continue
            today, mark, _ = resolve(SECTIONS[section], name)
            if today is None and mark is not None:
                if mark.new is None and (type(mark.value) is not type(value) or mark.value != value):
                    out.append(f"config.{section}.{name}: {value!r}, retired as {mark.note} = {mark.value!r}")
                continue
            now = new.get(section, {}).get(name if today is None else today.rpartition(".")[2], "(gone)")
            if type(now) is not type(value) or now != value:
                out.append(f"config.{section}.{name}: {value!r} -> {now!r} (put the old value in the seed profile)")
    return out


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Path:
    from validator.cli.main import main

    out = tmp_path_factory.mktemp("golden-replay")
    code = main(["replay", str(EXAMPLES), "--out", str(out), "--profile", "seed", "--no-progress"])
    assert code == 0
    return out


GOLDEN_RECORDS = sorted((GOLDEN / "records" / "replay").glob("*.json"))


def test_the_replay_writes_the_same_rounds(replayed):
    stored = {k.split("/")[1] for k in LocalStore(replayed).list("rounds/") if k.endswith("/evaluation.json")}
    assert stored == {p.stem for p in GOLDEN_RECORDS}


@pytest.mark.parametrize("path", GOLDEN_RECORDS, ids=lambda p: p.stem)
def test_every_number_is_todays(replayed, path):
    old = json.loads(path.read_text(encoding="utf-8"))
    data = LocalStore(replayed).get(keys.evaluation(old["round_id"]))
    new = json.loads(data)
    RoundRecord.from_json(new, path.stem)  # and it is a valid record of the current schema
    extra_ok = added_fields()
    found = []
    for key in old:
        if key in DECLARED:
            continue
        if key == "config":  # every old setting keeps its value; new settings (and sections) may appear
            found += config_differences(old[key], new.get(key, {}))
            continue
        found += list(differences(old[key], new.get(key), key, extra_ok)) if key in new else [f"{key}: missing"]
    found += [f"{key}: new field (not declared)" for key in set(new) - set(old) - DECLARED - extra_ok]
    assert not found, f"{len(found)} difference(s) from today's record:\n" + "\n".join(found[:40])


def test_the_embeddings_are_stored_beside_the_records(replayed):
    from storage.embeddings import decode_embeddings

    store = LocalStore(replayed)
    for path in GOLDEN_RECORDS:
        old = json.loads(path.read_text(encoding="utf-8"))
        emb = decode_embeddings(store.get(keys.embeddings(old["round_id"])))
        assert emb.vectors.shape == (len(old["responses"]), 384)
        assert emb.model_checksum == old["embedding"]["checksum_sha256"]
        assert [int(t) for t in emb.tokens] == [r["tokens"] for r in old["responses"]]
