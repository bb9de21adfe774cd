"""Every number of ``validator replay examples/rounds.jsonl`` is today's (issue 11: behaviour stays the same).

The replay runs for real (the CLI, the real model) with ``tests/golden/legacy.toml`` (where a changed default
keeps its old value) and each record is compared with the one the code before the typed record wrote
(``tests/golden/records/replay``, provenance in tests/golden/README.md): booleans, nulls and small integers
exactly, floats within ``REL`` relatively (``ABS`` near zero), large integers (emission units) within ``REL`` of
their value, strings exactly but for the numbers in them (compared as numbers). Only the declared fields below
may differ.

Why ``REL`` is 1e-6 and not exact: the real model's embeddings differ by about 1e-8 relatively between CPU
kernels (OpenVINO picks AVX2 or AVX-512 code by the processor; records written on one EPYC generation replay
on another with cosines 1e-8 apart, and a pool of 952M units then splits 2-7 units differently). A change of
behaviour moves these numbers by far more than 1e-6.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from consensus.params import resolve
from storage import LocalStore, keys
from validator.record import RoundRecord

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "examples" / "rounds.jsonl"
REL, ABS = 1e-6, 1e-12
# a difference of two near values loses the relative precision of both: it is compared absolutely
DIFFERENCES, DIFFERENCE_ABS = {"top_diff"}, 1e-5
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
# top-level fields a new version may write differently: the schema string and the producing package's version
DECLARED = {"schema", "producer"}

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


def differences(old: Any, new: Any, path: str, extra_ok: set[str]) -> Iterator[str]:
    """Every place where ``new`` does not carry ``old``'s value (keys of ``extra_ok`` may be added)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                yield f"{path}.{key}: missing"
            else:
                yield from differences(old[key], new[key], f"{path}.{key}", extra_ok)
        for key in set(new) - set(old) - extra_ok:
            yield f"{path}.{key}: new field (not declared)"
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            yield f"{path}: {len(old)} items, now {len(new)}"
        for i, (a, b) in enumerate(zip(old, new)):
            yield from differences(a, b, f"{path}[{i}]", extra_ok)
    elif isinstance(old, float) and isinstance(new, float):
        near = DIFFERENCE_ABS if path.rsplit(".", 1)[-1] in DIFFERENCES else ABS
        if not math.isclose(old, new, rel_tol=REL, abs_tol=near):
            yield f"{path}: {old!r} -> {new!r}"
    elif type(old) is int and type(new) is int:
        if abs(old - new) > REL * abs(old):  # below 1e6 this is exact
            yield f"{path}: {old!r} -> {new!r}"
    elif isinstance(old, str) and isinstance(new, str):
        if not same_text(old, new):
            yield f"{path}: {old!r} -> {new!r}"
    elif type(old) is not type(new) or old != new:
        yield f"{path}: {old!r} -> {new!r}"


def same_text(old: str, new: str) -> bool:
    """The same words, and the same numbers within ``REL`` ("952,170,945" and "952,170,952" are one pool)."""
    if NUMBER.split(old) != NUMBER.split(new):
        return False
    pairs = zip(NUMBER.findall(old), NUMBER.findall(new))
    return all(math.isclose(float(a.replace(",", "")), float(b.replace(",", "")), rel_tol=REL) for a, b in pairs)


def config_differences(old: dict, new: dict) -> list[str]:
    """Every old setting whose value the new record does not carry: under its name of today (a renamed one,
    ``consensus.params.resolve``), or as the constant it was retired into; one moved out of the recorded sections
    (``heatmap``: [output]) decides no number."""
    from validator.settings import SECTIONS

    out = []
    for section, values in old.items():
        for name, value in values.items():
            today, mark, _ = resolve(SECTIONS[section], name)
            if today is None and mark is not None:
                if mark.new is None and (type(mark.value) is not type(value) or mark.value != value):
                    out.append(f"config.{section}.{name}: {value!r}, retired as {mark.note} = {mark.value!r}")
                continue
            now = new.get(section, {}).get(name if today is None else today.rpartition(".")[2], "(gone)")
            if type(now) is not type(value) or now != value:
                out.append(f"config.{section}.{name}: {value!r} -> {now!r} (put the old value in legacy.toml)")
    return out


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Path:
    from validator.cli.main import main

    out = tmp_path_factory.mktemp("golden-replay")
    code = main(["replay", str(EXAMPLES), "--out", str(out), "--config", str(GOLDEN / "legacy.toml"), "--no-progress"])
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


def test_the_comparison_tolerates_kernel_noise_and_nothing_more():
    assert (
        list(
            differences(
                {"a": 952170945, "t": "952,170,945 units"}, {"a": 952170952, "t": "952,170,952 units"}, "r", set()
            )
        )
        == []
    )
    assert list(differences({"a": 952170945}, {"a": 952180945}, "r", set())) == ["r.a: 952170945 -> 952180945"]
    assert list(differences({"n": 7}, {"n": 8}, "r", set())) == ["r.n: 7 -> 8"]
    assert list(differences({"t": "0.904 of 4"}, {"t": "0.904 of 5"}, "r", set())) != []
    assert list(differences({"t": "paid 4"}, {"t": "paid four"}, "r", set())) != []
    assert list(differences({"x": 0.5}, {"x": 0.5 + 1e-7}, "r", set())) == []
    assert list(differences({"x": 0.5}, {"x": 0.5001}, "r", set())) != []
    assert list(differences({"top_diff": 0.0386597}, {"top_diff": 0.0386615}, "r", set())) == []
    assert list(differences({"top_diff": 0.0386597}, {"top_diff": 0.0387}, "r", set())) != []
