"""Prompt sources: JSONL, CSV, InstructLab qna.yaml (v1-2 and v3), cycling, clear errors."""

import pytest

from validator.round.prompt_source import BUILTIN, PromptSourceError, load_prompts, prompt_for


def test_jsonl_with_prompt_or_question(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "A?", "reference": "a"}\n\n{"question": "B?", "answer": "b"}\n')
    items = load_prompts(path)
    assert [(i.prompt, i.reference) for i in items] == [("A?", "a"), ("B?", "b")]


def test_csv(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text('question,answer\n"What is 2+2, exactly?",4\nWhy?,\n')
    items = load_prompts(path)
    assert [(i.prompt, i.reference) for i in items] == [("What is 2+2, exactly?", "4"), ("Why?", None)]


def test_csv_without_prompt_column(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("text,label\nx,y\n")
    with pytest.raises(PromptSourceError, match="'prompt' or 'question' column"):
        load_prompts(path)


def test_qna_yaml_v2_and_v3(tmp_path):
    v2 = tmp_path / "qna.yaml"
    v2.write_text(
        "version: 2\ntask_description: t\ncreated_by: me\nseed_examples:\n"
        "  - question: What is a hash?\n    answer: A fixed-size digest.\n"
    )
    assert load_prompts(v2)[0].prompt == "What is a hash?"
    v3 = tmp_path / "v3.yaml"
    v3.write_text(
        "version: 3\ndomain: d\nseed_examples:\n  - context: Paris is in France.\n"
        "    questions_and_answers:\n      - question: Where is Paris?\n        answer: In France.\n"
        "      - question: Is Paris in Spain?\n        answer: No.\n"
    )
    items = load_prompts(v3)
    assert len(items) == 2 and items[0].prompt == "Paris is in France.\n\nWhere is Paris?"
    assert items[1].reference == "No."


def test_malformed_yaml_and_bad_rows_name_the_place(tmp_path):
    bad = tmp_path / "qna.yaml"
    bad.write_text("seed_examples: [unclosed\n")
    with pytest.raises(PromptSourceError, match="malformed YAML"):
        load_prompts(bad)
    bad.write_text("seed_examples:\n  - answer: only an answer\n")
    with pytest.raises(PromptSourceError, match=r"seed_examples\[0\]: 'prompt' is missing"):
        load_prompts(bad)
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text('{"prompt": "ok"}\n{"prompt": 3}\n')
    with pytest.raises(PromptSourceError, match=r"p.jsonl:2: 'prompt' must be a string"):
        load_prompts(jsonl)
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n")
    with pytest.raises(PromptSourceError, match="no prompts"):
        load_prompts(empty)
    with pytest.raises(PromptSourceError, match="unknown prompt file type"):
        load_prompts(tmp_path / "p.txt")
    with pytest.raises(PromptSourceError, match="cannot read"):
        load_prompts(tmp_path / "missing.jsonl")


def test_builtin_and_cycling():
    assert load_prompts("") == BUILTIN and load_prompts(None) == BUILTIN
    assert prompt_for(BUILTIN, 1) == BUILTIN[0]
    assert prompt_for(BUILTIN, len(BUILTIN) + 2) == BUILTIN[1]
