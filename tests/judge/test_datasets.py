"""Input files: csv, jsonl, qna.yaml, directories, responses files, and bad inputs with clear errors."""

from __future__ import annotations

import json

import pytest

from judge.datasets import QnA, load_qna, load_responses, model_from_filename, read_samples
from judge.errors import InputError

CSV = (
    "question,ground_truth\n"
    "What is the Phoenix constellation?,Phoenix is a minor constellation in the southern sky.\n"
    '"Who charted it, and when?","Lacaille, in the 1750s."\n'
)

QNA_V3 = """\
version: 3
domain: astronomy
created_by: someone
seed_examples:
  - context: |
      Phoenix is a minor constellation in the southern sky.
    questions_and_answers:
      - question: What is the Phoenix constellation?
        answer: A minor constellation in the southern sky.
      - question: |
          Who charted it?
        answer: Nicolas Louis de Lacaille.
  - context: Second context.
    questions_and_answers:
      - question: How far does it stretch?
        answer: From about -39 to -57 degrees declination.
document_outline: Phoenix
"""

QNA_SKILL = """\
version: 2
task_description: arithmetic
created_by: someone
seed_examples:
  - question: What is 2 + 2?
    answer: "4"
  - question: What is 3 * 3?
    answer: 9
"""


def test_csv_with_quoted_commas(tmp_path):
    (tmp_path / "q.csv").write_text(CSV)
    qnas = load_qna([tmp_path / "q.csv"])
    assert [q.question for q in qnas] == ["What is the Phoenix constellation?", "Who charted it, and when?"]
    assert qnas[1] == QnA("Who charted it, and when?", "Lacaille, in the 1750s.", f"{tmp_path / 'q.csv'}:3")


def test_csv_with_a_byte_order_mark_and_extra_columns(tmp_path):
    (tmp_path / "q.csv").write_bytes("\ufeffid,question, ground_truth\n1,Q?,A.\n".encode())
    assert load_qna([tmp_path / "q.csv"])[0].ground_truth == "A."


def test_jsonl(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"question": "Q1?", "ground_truth": "A1"})
        + "\n\n"
        + json.dumps({"question": "Q2?", "ground_truth": 42, "extra": 1})
        + "\n"
    )
    assert [(q.question, q.ground_truth, q.source[-2:]) for q in load_qna([path])] == [
        ("Q1?", "A1", ":1"),
        ("Q2?", "42", ":3"),
    ]


def test_qna_yaml_knowledge_and_skills(tmp_path):
    (tmp_path / "qna.yaml").write_text(QNA_V3)
    qnas = load_qna([tmp_path / "qna.yaml"])
    assert [q.question for q in qnas] == [
        "What is the Phoenix constellation?",
        "Who charted it?",
        "How far does it stretch?",
    ]
    assert qnas[1].ground_truth == "Nicolas Louis de Lacaille."
    assert qnas[2].source.endswith("seed_examples[1].questions_and_answers[0]")
    (tmp_path / "skill.yaml").write_text(QNA_SKILL)
    assert [(q.question, q.ground_truth) for q in load_qna([tmp_path / "skill.yaml"])] == [
        ("What is 2 + 2?", "4"),
        ("What is 3 * 3?", "9"),
    ]


def test_directories_are_searched_recursively_in_order(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "qna.yaml").write_text(QNA_SKILL)
    (tmp_path / "a.csv").write_text(CSV)
    (tmp_path / "notes.txt").write_text("ignored")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.csv").write_text("broken")
    qnas = load_qna([tmp_path])
    assert len(qnas) == 4 and qnas[0].source.startswith(str(tmp_path / "a.csv"))
    assert qnas[2].source.startswith(str(tmp_path / "b" / "qna.yaml"))


@pytest.mark.parametrize(
    "name,content,match",
    [
        ("q.csv", "", "empty file"),
        ("q.csv", "question,ground_truth\n", "no rows"),
        ("q.csv", "question,answer\nQ?,A\n", r"missing column\(s\) ground_truth \(found: answer, question\)"),
        ("q.csv", "question,ground_truth\n,A\n", r"q.csv:2: empty 'question'"),
        ("q.csv", "question,ground_truth\nQ?,A,extra\n", "q.csv:2: more fields than the header"),
        ("q.jsonl", "", "no rows"),
        ("q.jsonl", '{"question": "Q?", "ground_truth": "A"}\n{"question": "Q2?"\n', r"q.jsonl:2: malformed JSON"),
        ("q.jsonl", '["Q?", "A"]\n', r"q.jsonl:1: expected a JSON object, got list"),
        ("q.jsonl", '{"question": "Q?"}\n', r"q.jsonl:1: missing key\(s\) ground_truth"),
        ("q.jsonl", '{"question": ["Q?"], "ground_truth": "A"}\n', "'question' must be text"),
        ("qna.yaml", "seed_examples:\n  - question: [unclosed\n", r"qna.yaml:\d+: malformed YAML"),
        ("qna.yaml", "", "empty file"),
        ("qna.yaml", "version: 3\ndomain: x\n", "expected a mapping with a 'seed_examples' list"),
        ("qna.yaml", "seed_examples:\n  - context: only\n", r"seed_examples\[0\]: no 'question'"),
        (
            "qna.yaml",
            "seed_examples:\n  - questions_and_answers:\n      - question: Q?\n",
            r"questions_and_answers\[0\]: empty 'answer'",
        ),
        ("q.txt", "question,ground_truth\nQ?,A\n", "unknown input format"),
    ],
)
def test_bad_inputs_name_file_and_line(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError, match=match):
        load_qna([path])


def test_missing_paths_and_empty_directories(tmp_path):
    with pytest.raises(InputError, match="no such file or directory"):
        load_qna([tmp_path / "nope.csv"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .csv, .jsonl, .yaml, .yml files"):
        load_qna([tmp_path / "empty"])


def test_responses_file_of_ask_mode(tmp_path):
    path = tmp_path / "model1-responses-2026-01-01-00-00-00.csv"
    path.write_text("question,ground_truth,model1 answer,error\nQ1?,A1,The answer.,\nQ2?,A2,,model call failed: x\n")
    responses = load_responses([path])
    assert [(r.model, r.answer, r.error) for r in responses] == [
        ("model1", "The answer.", None),
        ("model1", "", "model call failed: x"),
    ]


def test_responses_wide_and_long_layouts(tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text("question,ground_truth,m1 answer,m2 answer\nQ?,A,one,two\n")
    assert [(r.model, r.answer) for r in load_responses([wide])] == [("m1", "one"), ("m2", "two")]
    long = tmp_path / "judged.jsonl"
    long.write_text(
        json.dumps({"question": "Q?", "ground_truth": "A", "model": "m3", "answer": "x"})
        + "\n"
        + json.dumps({"question": "Q?", "ground_truth": "A", "answer": ""})
        + "\n"
    )
    assert [(r.model, r.answer) for r in load_responses([long])] == [("m3", "x"), ("judged", "")]
    bare = tmp_path / "bare.csv"
    bare.write_text("question,ground_truth\nQ?,A\n")
    with pytest.raises(InputError, match="no answer column"):
        load_responses([bare])


def test_model_from_filename():
    from pathlib import Path

    assert model_from_filename(Path("granite-7b-responses-2026-01-01-00-00-00.csv")) == "granite-7b"
    assert model_from_filename(Path("answers.csv")) == "answers"


def test_selectit_samples(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": 1, "instruction": "a", "output": "b"}\n[1]\n')
    assert read_samples(path) == [{"id": 1, "instruction": "a", "output": "b"}, [1]]
    path.write_text("")
    with pytest.raises(InputError, match="no samples"):
        read_samples(path)
    path.write_text('{"id": 1,\n')
    with pytest.raises(InputError, match="d.jsonl:1: malformed JSON"):
        read_samples(path)
