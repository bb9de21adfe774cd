"""Input files of judging: evaluation questions, model responses, SelectIT samples.

Questions (``question``, ``ground_truth``) come from ``.csv`` and ``.jsonl``
files, InstructLab ``qna.yaml`` files (every question/answer pair of
``seed_examples``, knowledge and skills layouts alike) and directories of
them (searched recursively, in sorted order). Responses files are the
intermediate files of "ask" (``question``, ``ground_truth`` and one
``<model> answer`` column per model) or any csv/jsonl with ``answer`` and
optionally ``model`` columns.

Everything is checked before any model is called: a missing column, an
empty file, an empty question, a malformed line or YAML document stops the
run with an ``InputError`` naming the file and line, so no row is dropped
silently.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import InputError
from storage.files import FileFormatError, read_jsonl, read_yaml

QNA_SUFFIXES = (".csv", ".jsonl", ".yaml", ".yml")
RESPONSE_SUFFIXES = (".csv", ".jsonl")
REQUIRED = ("question", "ground_truth")


@dataclass(frozen=True)
class QnA:
    question: str
    ground_truth: str
    source: str  # file and line (or YAML path) it came from


@dataclass(frozen=True)
class ModelAnswer:
    qna: QnA
    model: str
    answer: str
    error: str | None = None  # the model gave no answer: why


def expand(paths: Iterable[str | Path], suffixes: Sequence[str]) -> list[Path]:
    """Files in ``paths``, directories searched recursively for ``suffixes`` (sorted; hidden entries skipped)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in suffixes
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                raise InputError(str(path), f"no {', '.join(suffixes)} files in this directory")
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise InputError(str(path), "no such file or directory")
    return out


def _text(value: Any, where: str, column: str, *, required: bool = True) -> str:
    if value is None:
        value = ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(where, f"{column!r} must be text, got {type(value).__name__}")
    text = str(value).strip()
    if required and not text:
        raise InputError(where, f"empty {column!r}")
    return text


def _csv_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        handle = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    with handle:
        reader = csv.DictReader(handle)
        try:
            header = reader.fieldnames
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(str(path), f"not a readable CSV file: {exc}") from None
        if not header:
            raise InputError(str(path), "empty file (no header row)")
        reader.fieldnames = [h.strip() if h else "" for h in header]
        try:
            for row in reader:
                if None in row:
                    raise InputError(f"{path}:{reader.line_num}", "more fields than the header has columns")
                yield f"{path}:{reader.line_num}", row
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"{path}:{reader.line_num}", f"malformed CSV: {exc}") from None


def _jsonl_values(path: Path, objects: bool = False) -> Iterator[tuple[str, Any]]:
    try:
        rows = read_jsonl(path, objects=objects)
    except FileFormatError as exc:
        raise InputError(exc.where, exc.problem) from None
    for number, value in rows:
        yield f"{path}:{number}", value


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    return _jsonl_values(path, objects=True)


def _columns(path: Path, rows: list[tuple[str, dict[str, Any]]], required: Sequence[str]) -> None:
    if not rows:
        raise InputError(str(path), "no rows")
    if path.suffix.lower() == ".csv":
        present = set(rows[0][1])
        missing = [c for c in required if c not in present]
        if missing:
            raise InputError(
                str(path), f"missing column(s) {', '.join(missing)} (found: {', '.join(sorted(present)) or 'none'})"
            )
    else:
        for where, row in rows:
            missing = [c for c in required if c not in row]
            if missing:
                raise InputError(where, f"missing key(s) {', '.join(missing)}")


def _qna_yaml(path: Path) -> list[QnA]:
    try:
        doc = read_yaml(path)
    except FileFormatError as exc:
        raise InputError(exc.where, exc.problem) from None
    if doc is None:
        raise InputError(str(path), "empty file")
    if not isinstance(doc, dict) or not isinstance(doc.get("seed_examples"), list):
        raise InputError(str(path), "not an InstructLab qna.yaml: expected a mapping with a 'seed_examples' list")
    out: list[QnA] = []
    for i, example in enumerate(doc["seed_examples"]):
        where = f"{path}: seed_examples[{i}]"
        if not isinstance(example, dict):
            raise InputError(where, "expected a mapping")
        if "questions_and_answers" in example:  # knowledge, version 3
            pairs = example["questions_and_answers"]
            if not isinstance(pairs, list):
                raise InputError(where, "'questions_and_answers' must be a list")
            for j, pair in enumerate(pairs):
                inner = f"{where}.questions_and_answers[{j}]"
                if not isinstance(pair, dict):
                    raise InputError(inner, "expected a mapping with 'question' and 'answer'")
                out.append(
                    QnA(
                        _text(pair.get("question"), inner, "question"),
                        _text(pair.get("answer"), inner, "answer"),
                        inner,
                    )
                )
        elif "question" in example:  # skills, and knowledge before version 3
            out.append(
                QnA(
                    _text(example.get("question"), where, "question"),
                    _text(example.get("answer"), where, "answer"),
                    where,
                )
            )
        else:
            raise InputError(where, "no 'question' or 'questions_and_answers'")
    if not out:
        raise InputError(str(path), "no questions in seed_examples")
    return out


def load_qna(paths: Iterable[str | Path]) -> list[QnA]:
    """Every question of the given files and directories, in order."""
    out: list[QnA] = []
    for path in expand(paths, QNA_SUFFIXES):
        suffix = path.suffix.lower()
        if suffix in (".yaml", ".yml"):
            out.extend(_qna_yaml(path))
            continue
        if suffix not in (".csv", ".jsonl"):
            raise InputError(str(path), "unknown input format (expected .csv, .jsonl or qna.yaml)")
        rows = list(_csv_rows(path) if suffix == ".csv" else _jsonl_rows(path))
        _columns(path, rows, REQUIRED)
        out.extend(
            QnA(_text(row["question"], where, "question"), _text(row["ground_truth"], where, "ground_truth"), where)
            for where, row in rows
        )
    if not out:
        raise InputError(", ".join(map(str, paths)), "no questions")
    return out


def model_from_filename(path: Path) -> str:
    """``model1-responses-<timestamp>.csv`` -> ``model1``; otherwise the file's stem."""
    stem = path.stem
    return stem.split("-responses-", 1)[0] if "-responses-" in stem else stem


def load_responses(paths: Iterable[str | Path]) -> list[ModelAnswer]:
    """Responses to judge, from "ask" output files (``<model> answer`` columns) or long files (``answer``)."""
    out: list[ModelAnswer] = []
    for path in expand(paths, RESPONSE_SUFFIXES):
        suffix = path.suffix.lower()
        if suffix not in RESPONSE_SUFFIXES:
            raise InputError(str(path), "unknown responses format (expected .csv or .jsonl)")
        rows = list(_csv_rows(path) if suffix == ".csv" else _jsonl_rows(path))
        _columns(path, rows, REQUIRED)
        keys = list(rows[0][1])
        per_model = [c for c in keys if c.endswith(" answer") and c[: -len(" answer")].strip()]
        if not per_model and "answer" not in keys:
            raise InputError(str(path), "no answer column (expected '<model> answer' columns or an 'answer' column)")
        for where, row in rows:
            qna = QnA(
                _text(row["question"], where, "question"), _text(row["ground_truth"], where, "ground_truth"), where
            )
            error = _text(row.get("error"), where, "error", required=False) or None
            if per_model:
                for column in per_model:
                    answer = _text(row.get(column), where, column, required=False)
                    out.append(
                        ModelAnswer(qna, column[: -len(" answer")].strip(), answer, error if not answer else None)
                    )
            else:
                model = _text(row.get("model"), where, "model", required=False) or model_from_filename(path)
                answer = _text(row.get("answer"), where, "answer", required=False)
                out.append(ModelAnswer(qna, model, answer, error if not answer else None))
    if not out:
        raise InputError(", ".join(map(str, paths)), "no responses")
    return out


def read_samples(path: str | Path) -> list[Any]:
    """SelectIT samples: the values of a JSON Lines file (fields are checked by the scorer, not here)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "no such file")
    samples = [value for _, value in _jsonl_values(path)]
    if not samples:
        raise InputError(str(path), "no samples (empty file)")
    return samples
