"""benchmarks.pool_tasks: its variants, its draw, the report's arithmetic and a daemon store's summary (no model)."""

from __future__ import annotations

import json

import pytest

import benchmarks.pool_tasks as pt
from minerpool import PERSONAS, default_miners


def test_variants_change_only_the_honest_miners_task_settings():
    shipped = pt.variant_miners("shipped")
    assert [m.name for m in shipped] == [p.name for p in PERSONAS]
    assert shipped == [m for m in default_miners(max_tokens=pt.MAX_TOKENS, keys=False) if m.behaviour == "honest"]
    assert all(m.task_persona == "" and m.task_examples == () for m in pt.variant_miners("open"))
    both = pt.variant_miners("greedy+noexamples")
    assert all(m.task_temperature == 0.0 and m.task_persona and m.task_examples == () for m in both)
    assert all(m.max_tokens == 96 for m in pt.variant_miners("tokens96"))
    with pytest.raises(SystemExit, match="unknown variant 'hot'"):
        pt.variant_miners("shipped+hot")


def test_the_draw_is_fixed_and_cycles_the_default_families():
    tasks = [pt.task_of(i) for i in range(6)]
    assert [t.spec.family for t in tasks] == [
        "basic_arithmetic",
        "chain_sum",
        "simple_equations",
        "basic_arithmetic",
        "chain_sum",
        "simple_equations",
    ]
    assert [t.question for t in tasks] == [pt.task_of(i).question for i in range(6)]


def test_own_words_are_the_words_the_prompt_does_not_have():
    assert pt.own_words("Answer: 12", 'What is 5 + 7? End with "Answer: <your answer>".') == 1
    assert pt.own_words("Adding seven to five gives twelve", "What is 5 + 7?") == 6


def row(index: int, miner: str, right: bool, text: str = "Answer: 1", own: int = 1, latency: float = 2.0) -> dict:
    return {
        "variant": "v",
        "index": index,
        "family": "chain_sum",
        "miner": miner,
        "text": text,
        "latency_s": latency,
        "right": right,
        "reason": "" if right else "wrong",
        "own_words": own,
    }


def test_the_report_counts_answers_tasks_waits_and_identical_long_texts(tmp_path):
    long = "a long working text " * 4
    rows = [
        row(0, "a", True, latency=3.0),
        row(0, "b", False, latency=5.0),
        row(1, "a", False, long, own=14),
        row(1, "b", False, long, own=14),
    ]
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = pt.report(["v"], tmp_path)
    assert "honest answers right 1/4 = 0.25" in text
    assert "tasks with one right 1/2" in text
    assert "round wait median 3.5 s, slowest 5.0 s" in text
    assert "a 1/2, 1/2 with >= 12 own words" in text
    assert "identical honest texts of >= 12 own words: 1 pairs" in text
    assert pt.report(["w"], tmp_path) == f"w: no answers in {tmp_path}"


def test_a_daemon_store_is_summed_up(tmp_path):
    def record(n: int, right: bool, reasons: dict[str, str], amounts: dict[str, int]) -> dict:
        answers = [
            {"miner": m, "right": right and m == "honest-a", "reason": "" if right and m == "honest-a" else "wrong"}
            for m in reasons
        ]
        return {
            "round_id": f"round-{n:06d}",
            "consensus": {"reached": right},
            "emissions": {"total": sum(amounts.values())},
            "responses": [
                {"miner": m, "reason": r, "detail": f"{r} detail", "emissions": {"amount": amounts.get(m, 0)}}
                for m, r in reasons.items()
            ],
            "task": {"family": "chain_sum", "answers": answers},
        }

    rounds = [
        record(1, True, {"honest-a": "in_consensus", "honest-b": "copy", "copycat": "copy"}, {"honest-a": 10}),
        record(2, False, {"honest-a": "wrong", "honest-b": "wrong", "copycat": "wrong"}, {}),
    ]
    for rec in rounds:
        (tmp_path / "rounds" / rec["round_id"]).mkdir(parents=True)
        (tmp_path / "rounds" / rec["round_id"] / "evaluation.json").write_text(json.dumps(rec))
    log = tmp_path / "daemon.log"
    log.write_text("round-000001  ok  paid 10 of 10  10.0s\nround-000002  ok  paid 0 of 10  12.0s\nnoise\n")
    text = pt.store_summary(tmp_path, log)
    assert "2 rounds, 2 task rounds; a right answer in 1; consensus reached in 1; paid in 1 (50.0%)" in text
    assert "task, nobody right (honest: 2 wrong, 0 unreadable): 1" in text
    assert "honest-a: right 1/2 = 0.50" in text and "honest-b: right 0/2 = 0.00" in text
    assert "honest miners removed as copy: 1\n    round-000001 honest-b: copy detail" in text
    assert "copycat's reasons: copy 1, wrong 1" in text
    assert "round seconds (2 lines): median 11.0, mean 11.0, max 12.0" in text
    with pytest.raises(SystemExit, match="no rounds"):
        pt.store_summary(tmp_path / "empty")
