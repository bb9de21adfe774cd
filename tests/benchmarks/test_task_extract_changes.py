"""benchmarks.task_extract_changes: recorded task verdicts judged by two extractions, the turned ones listed."""

from __future__ import annotations

import json

from benchmarks.task_extract_changes import base_extractor, changes, main
from tasks.extract import Extracted, extract

LCM = {"family": "lcm", "seed": 2672403758743502415, "config": {"max_value": 15}, "rg_version": "0.1.25"}  # 4, 6


def whole_text(text: str, question: str) -> Extracted:
    """An extraction that reads only a bare answer: the whole reply, stripped."""
    return Extracted((text.strip(),), "whole reply")


def test_changes_count_each_direction(tmp_path):
    rows = [
        {**LCM, "text": "Answer: The LCM of 4 and 6 is 12."},  # read by the product's extraction only
        {**LCM, "text": "12"},  # right by both
        {**LCM, "text": "Answer: The LCM of 4 and 6 is 24."},  # wrong by both
    ]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "rung.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"half', "utf-8")
    n, turned, other = changes(tmp_path, whole_text)
    assert n == 3 and len(turned) == 1
    (c,) = turned
    assert (c.path, c.family, c.expected, c.right_before, c.right_after) == ("sub/rung.jsonl", "lcm", "12", False, True)
    assert c.after == "12" and c.last_line == "Answer: The LCM of 4 and 6 is 12."
    assert other == 1  # the wrong sentence: the same verdict with another reading
    assert changes(tmp_path, extract, whole_text)[1][0].right_after is False  # the other direction


def test_the_base_revision_is_the_committed_extraction(tmp_path, capsys):
    (tmp_path / "r.jsonl").write_text(json.dumps({**LCM, "text": "Answer: 12"}) + "\n", "utf-8")
    assert changes(tmp_path, base_extractor("HEAD"))[:2] == (1, [])
    assert main(["--dir", str(tmp_path)]) == 0
    assert "replies 1: wrong -> right 0, right -> wrong 0" in capsys.readouterr().out
