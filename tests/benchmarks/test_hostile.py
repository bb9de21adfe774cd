"""The hostile bench's own logic: case files, attack transforms, expectation checks (no model, no LM)."""

from __future__ import annotations

import json
import unicodedata

import pytest

from benchmarks import attacks
from benchmarks.hostile_spec import (
    CASES_DIR,
    KINDS,
    CaseError,
    Expectation,
    Paid,
    case_files,
    check,
    dump_json,
    load_cases,
    parse_case,
)

SOURCE = (
    "Seasons happen because the axis is tilted. The Sun climbs higher in summer!\n"
    "- Days are longer then.\n- In winter the light is oblique."
)


# --- the case files ---------------------------------------------------------------------------------


def test_every_case_file_loads_with_unique_names_and_known_kinds():
    cases = load_cases()
    assert len(cases) >= 30
    assert len({c.name for c in cases}) == len(cases)
    assert {c.issue for c in cases} == {24, 25, 38, 45, 46}
    assert {e.kind for c in cases for e in c.expect} <= set(KINDS)
    for c in cases:
        assert c.round.round_id == c.name
        assert all(r.latency_s > 0 for r in c.round.responses)


def test_every_derived_text_is_what_its_made_by_computes():
    checked = 0
    for path, data in case_files():
        texts = {r["miner"]: r["text"] for r in data["round"]["responses"]}
        for miner, made in data.get("made_by", {}).items():
            expected = attacks.derive(made, texts)
            if expected is not None:
                assert texts[miner] == expected, f"{path.name}: {miner} differs from its made_by"
                checked += 1
    assert checked >= 8


def test_every_lm_paraphrase_is_written_and_says_how():
    for path, data in case_files():
        texts = {r["miner"]: r["text"] for r in data["round"]["responses"]}
        for miner, made in data.get("made_by", {}).items():
            if made["op"] == "llm_paraphrase":
                assert texts[miner].strip(), (
                    f"{path.name}: {miner} has no text (python -m benchmarks.hostile_make cases)"
                )
                assert made.get("model") and made.get("notes") and "seconds" in made


def test_case_files_are_written_as_dump_json_writes_them():
    """Invisible and look-alike characters stay visible in diffs: the files are dump_json's output."""
    for path in sorted(CASES_DIR.glob("*.json")):
        raw = path.read_text(encoding="utf-8")
        assert raw == dump_json(json.loads(raw)), path.name


def test_dump_json_escapes_invisible_and_look_alike_letters_only():
    text = "Caf\u00e9 \u2014 100 \u00b0C, w\u200bord, \u0430pple"
    raw = dump_json({"t": text})
    assert "\\u200b" in raw and "\\u0430" in raw and "\u00e9" in raw and "\u00b0" in raw and "\u2014" in raw
    assert json.loads(raw)["t"] == text


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["roles"].update(ghost=["nobody"]), "roles.ghost"),
        (lambda d: d["expect"].append({"kind": "maybe", "who": "honest", "text": "x"}), "kind"),
        (
            lambda d: d["expect"].append({"kind": "each_below_mean", "who": "honest", "than": "honest", "text": "x"}),
            "bound",
        ),
        (lambda d: d["expect"].append({"kind": "keeps_pay", "who": "honest", "bound": 1, "text": "x"}), "without"),
        (lambda d: d["expect"].append({"kind": "all_paid", "who": "villains", "text": "x"}), "no role"),
        (lambda d: d.update(modes=["sometimes"]), "modes"),
        (lambda d: d["round"]["responses"][0].update(latency_s=-1), "latency_s"),
    ],
)
def test_a_broken_case_is_refused_naming_the_field(change, message):
    data = toy_case_json()
    change(data)
    with pytest.raises(CaseError, match=message):
        parse_case(data, "toy.json")


def test_unknown_case_names_are_refused():
    with pytest.raises(CaseError, match="no such case"):
        load_cases(CASES_DIR, ["no-such-case"])


def test_the_counterfactual_round_leaves_out_one_role():
    case = parse_case(toy_case_json())
    without = case.without("wrong")
    assert [r.miner for r in without.responses] == ["h-0", "h-1"]
    assert without.round_id != case.round.round_id and without.prompt == case.round.prompt


# --- the transforms -----------------------------------------------------------------------------------


def test_zero_width_hides_characters_a_reader_does_not_see():
    out = attacks.zero_width(SOURCE, seed=1)
    assert out != SOURCE and "".join(ch for ch in out if ch not in attacks.INVISIBLE) == SOURCE
    assert attacks.jaccard(out, SOURCE) < 0.2  # the word bag no longer matches
    assert out == attacks.zero_width(SOURCE, seed=1) and out != attacks.zero_width(SOURCE, seed=2)


def test_zero_width_in_function_words_leaves_the_content_words():
    out = attacks.zero_width(SOURCE, seed=1, function_only=True)
    plain = set(attacks.words(out))
    assert {"seasons", "tilted", "oblique"} <= plain and "the" not in plain
    assert "".join(ch for ch in out if ch not in attacks.INVISIBLE) == SOURCE


def test_homoglyphs_look_alike_and_map_back():
    out = attacks.homoglyphs(SOURCE, seed=2)
    back = {v: k for k, v in attacks.CONFUSABLE.items()}
    assert out != SOURCE and "".join(back.get(ch, ch) for ch in out) == SOURCE
    assert all(unicodedata.category(ch).startswith("L") for ch in out if ch in back)
    light = attacks.homoglyphs(SOURCE, seed=2, rate=0.3)
    assert 0 < sum(a != b for a, b in zip(light, SOURCE)) < sum(a != b for a, b in zip(out, SOURCE))


def test_union_blend_and_copy_plus():
    a, b = "One fact. Two facts. Three facts.", "Alpha here. Beta here."
    assert attacks.union([a, b]) == a + "\n\n" + b
    mixed = attacks.blend(a, b, seed=3)
    assert any(s in mixed for s in attacks.sentences(a)) and any(s in mixed for s in attacks.sentences(b))
    assert mixed == attacks.blend(a, b, seed=3)
    assert attacks.copy_plus(a + "\n", "More.") == a + "\n\nMore."


def test_perturb_shuffles_and_drops_about_the_share_asked():
    text = " ".join(f"Sentence {k} has exactly seven words here." for k in range(60))
    out = attacks.perturb(text, seed=0, drop=0.15)
    kept = len(out.split()) / len(text.split())
    assert 0.78 < kept < 0.92
    assert out == attacks.perturb(text, seed=0) and out != attacks.perturb(text, seed=1)
    assert attacks.perturb(text, seed=0, drop=0.0) != text  # shuffled
    assert sorted(attacks.perturb(text, seed=0, drop=0.0).split()) == sorted(text.split())


def test_derive_refuses_an_unknown_op():
    with pytest.raises(ValueError, match="unknown made_by op"):
        attacks.derive({"op": "telepathy"}, {})


# --- the expectations -------------------------------------------------------------------------------


def toy_case_json() -> dict:
    return {
        "case": "toy",
        "issue": 24,
        "title": "toy",
        "modes": ["off"],
        "round": {
            "round_id": "toy",
            "prompt": "Q?",
            "responses": [
                {"miner": "h-0", "text": "a", "latency_s": 1.0},
                {"miner": "h-1", "text": "b", "latency_s": 1.0},
                {"miner": "w-0", "text": "c", "latency_s": 1.0},
                {"miner": "w-1", "text": "d", "latency_s": 1.0},
            ],
        },
        "roles": {"honest": ["h-0", "h-1"], "wrong": ["w-0", "w-1"]},
        "expect": [{"kind": "all_paid", "who": "honest", "text": "paid"}],
    }


def paid(amounts: dict[str, int], reasons: dict[str, str] | None = None, groups=(), copy_of=None) -> Paid:
    total = sum(amounts.values())
    return Paid(
        amounts,
        {m: a / total if total else 0.0 for m, a in amounts.items()},
        reasons or {m: "in_consensus" for m in amounts},
        tuple(frozenset(g) for g in groups),
        copy_of or {},
    )


CASE = parse_case(toy_case_json())
ROUND = {"h-0": 30, "h-1": 10, "w-0": 10, "w-1": 0}  # honest mean 20 of 50 units


@pytest.mark.parametrize(
    "e, passed, value",
    [
        (Expectation("each_below_mean", "wrong", "", "honest", 0.5), False, 0.5),  # 10 / 20 is not < 0.5
        (Expectation("each_below_mean", "wrong", "", "honest", 0.51), True, 0.5),
        (Expectation("total_at_most_mean", "wrong", "", "honest", 0.5), True, 0.5),  # at the bound passes
        (Expectation("total_at_most_mean", "wrong", "", "honest", 0.49), False, 0.5),
        (Expectation("total_below", "wrong", "", "honest"), True, 0.25),
        (Expectation("each_above", "honest", "", "wrong"), False, 1.0),  # a tie is not "more"
        (Expectation("all_paid", "honest", ""), True, 2.0),
        (Expectation("all_paid", "wrong", ""), False, 1.0),
        (Expectation("zero", "wrong", ""), False, 0.2),
    ],
)
def test_expectations_on_a_hand_checked_round(e, passed, value):
    v = check(CASE, e, paid(ROUND))
    assert v.passed is passed and v.value == pytest.approx(value)


def test_each_above_and_zero_when_they_hold():
    p = paid({"h-0": 30, "h-1": 20, "w-0": 0, "w-1": 0})
    assert check(CASE, Expectation("each_above", "honest", "", "wrong"), p).passed
    assert check(CASE, Expectation("zero", "wrong", ""), p).passed


def test_nobody_paid_fails_the_ratios_instead_of_dividing_by_zero():
    p = paid({"h-0": 0, "h-1": 0, "w-0": 5, "w-1": 5})
    v = check(CASE, Expectation("each_below_mean", "wrong", "", "honest", 0.5), p)
    assert not v.passed and v.value == float("inf") and "honest mean 0" in v.measured
    assert not check(CASE, Expectation("total_at_most_mean", "wrong", "", "honest", 1.5), p).passed


def test_not_merged_sees_groups_and_copies_among_its_role_only():
    e = Expectation("not_merged", "honest", "")
    assert check(CASE, e, paid(ROUND, groups=[{"w-0", "w-1"}, {"h-0", "w-0"}])).passed
    assert not check(CASE, e, paid(ROUND, groups=[{"h-0", "h-1", "w-0"}])).passed
    v = check(CASE, e, paid(ROUND, copy_of={"h-1": "h-0"}))
    assert not v.passed and "h-1<-h-0" in v.measured


def test_keeps_pay_compares_with_the_counterfactual_round():
    e = Expectation("keeps_pay", "honest", "", bound=0.99, without="wrong")
    before = paid({"h-0": 100, "h-1": 100})
    assert check(CASE, e, paid({"h-0": 100, "h-1": 99, "w-0": 1, "w-1": 0}), before).passed
    v = check(CASE, e, paid({"h-0": 100, "h-1": 70, "w-0": 30, "w-1": 0}), before)
    assert not v.passed and v.value == pytest.approx(0.7)
    with pytest.raises(ValueError, match="without"):
        check(CASE, e, paid(ROUND))


def test_check_does_not_modify_its_inputs():
    p = paid(ROUND, groups=[{"h-0", "h-1"}])
    before = (dict(p.amounts), dict(p.shares), p.groups)
    for kind in KINDS:
        e = Expectation(kind, "honest", "", "wrong", 0.5, "wrong")
        check(CASE, e, p, p)
    assert (dict(p.amounts), dict(p.shares), p.groups) == before


def test_the_table_counts_every_status():
    from benchmarks.hostile import Row, format_table

    rows = [
        Row("a", 24, "off", "x | y", "zero", "0.000", 0.0, None, "PASS"),
        Row("b", 25, "lm", "z", "zero", "", None, None, "SKIP", "needs --lm"),
        Row("c", 25, "off", "z", "zero", "0.100", 0.1, None, "FAIL"),
    ]
    table = format_table(rows)
    assert "x \\| y" in table and table.endswith("1 PASS, 1 FAIL, 1 SKIP")
    assert [r.passed for r in rows] == [True, None, False]


@pytest.mark.slow
def test_canaries_over_time_runs_the_daemon_and_moves_weight_from_the_wrong_majority(tmp_path):
    """``python -m benchmarks.canaries_over_time``: 50 daemon rounds on the real model, both scenarios pass."""
    from benchmarks.canaries_over_time import run_canaries
    from validator.settings import load_settings

    rows, results = run_canaries(load_settings(None, env={}, dotenv_path=None), rounds=50, out=tmp_path)
    assert [r.status for r in rows] == ["PASS", "PASS"], [r.measured for r in rows]
    assert all(len(r["canary_rounds"]) >= 1 for r in results)
