"""Prompt sources for the daemon: JSONL, CSV or an InstructLab qna.yaml, cycled round after round.

- JSONL: one object per line with ``prompt`` (or ``question``) and an
  optional ``reference`` (or ``answer``).
- CSV: a header row with a ``prompt`` or ``question`` column and an optional
  ``reference`` or ``answer`` column.
- qna.yaml (InstructLab taxonomy): ``seed_examples`` with ``question`` /
  ``answer`` (version 1-2) or ``questions_and_answers`` lists under each
  example (version 3, whose ``context`` is prepended to the question).

A bad row is an error naming the file and row: a prompt source is the
operator's own file, so it is fixed at start rather than skipped.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storage.files import FileFormatError, read_jsonl, read_yaml


class PromptSourceError(ValueError):
    """A prompt file is unreadable or malformed; the message names file and row."""


@dataclass(frozen=True)
class PromptItem:
    prompt: str
    reference: str | None = None


BUILTIN: tuple[PromptItem, ...] = (
    PromptItem("Is Python's list type mutable? Answer yes or no and explain in two sentences."),
    PromptItem("What is the capital of Australia? Answer in one sentence.", "Canberra is the capital of Australia."),
    PromptItem("In two or three sentences, explain what a hash function is."),
    PromptItem("Does water boil at a lower temperature at high altitude? Answer yes or no and explain briefly."),
    PromptItem("Name three renewable sources of energy and say one sentence about each."),
    PromptItem("How many bytes are in a kibibyte? Answer in one sentence.", "A kibibyte is 1024 bytes."),
)


def _text(value: Any, where: str, name: str, required: bool) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise PromptSourceError(f"{where}: '{name}' is missing or empty")
        return None
    if not isinstance(value, str):
        raise PromptSourceError(f"{where}: '{name}' must be a string, got {type(value).__name__}")
    return value.strip()


def _pick(obj: dict, where: str) -> PromptItem:
    key = "prompt" if "prompt" in obj else "question"
    prompt = _text(obj.get(key), where, "prompt", True)
    ref_key = "reference" if "reference" in obj else "answer"
    assert prompt is not None
    return PromptItem(prompt, _text(obj.get(ref_key), where, ref_key, False))


def _jsonl(path: Path) -> list[PromptItem]:
    try:
        rows = read_jsonl(path, objects=True)
    except FileFormatError as exc:
        raise PromptSourceError(str(exc)) from None
    return [_pick(obj, f"{path}:{number}") for number, obj in rows]


def _csv(path: Path) -> list[PromptItem]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = [c.strip() for c in reader.fieldnames or []]
        if "prompt" not in fields and "question" not in fields:
            raise PromptSourceError(
                f"{path}: needs a 'prompt' or 'question' column (found: {', '.join(fields) or 'none'})"
            )
        items = []
        for number, row in enumerate(reader, 2):
            row = {(k or "").strip(): v for k, v in row.items()}
            items.append(_pick(row, f"{path}:{number}"))
        return items


def _qna(path: Path) -> list[PromptItem]:
    try:
        doc = read_yaml(path)
    except FileFormatError as exc:
        raise PromptSourceError(str(exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("seed_examples"), list):
        raise PromptSourceError(f"{path}: expected an InstructLab qna.yaml with a 'seed_examples' list")
    items = []
    for i, example in enumerate(doc["seed_examples"]):
        where = f"{path}: seed_examples[{i}]"
        if not isinstance(example, dict):
            raise PromptSourceError(f"{where}: expected a mapping")
        if "questions_and_answers" in example:
            context = _text(example.get("context"), where, "context", False)
            pairs = example["questions_and_answers"]
            if not isinstance(pairs, list):
                raise PromptSourceError(f"{where}: 'questions_and_answers' must be a list")
            for j, qa in enumerate(pairs):
                if not isinstance(qa, dict):
                    raise PromptSourceError(f"{where}.questions_and_answers[{j}]: expected a mapping")
                item = _pick(qa, f"{where}.questions_and_answers[{j}]")
                prompt = f"{context}\n\n{item.prompt}" if context else item.prompt
                items.append(PromptItem(prompt, item.reference))
        else:
            items.append(_pick(example, where))
    return items


def load_prompts(path: str | Path | None) -> tuple[PromptItem, ...]:
    """The prompts of a source file (by extension), or the built-in ones for None / ""."""
    if not path:
        return BUILTIN
    path = Path(path)
    suffix = path.suffix.lower()
    readers = {".jsonl": _jsonl, ".csv": _csv, ".yaml": _qna, ".yml": _qna}
    if suffix not in readers:
        raise PromptSourceError(f"{path}: unknown prompt file type {suffix!r} (use .jsonl, .csv or qna.yaml)")
    try:
        items = readers[suffix](path)
    except OSError as exc:
        raise PromptSourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise PromptSourceError(f"{path}: not UTF-8 ({exc.reason})") from exc
    if not items:
        raise PromptSourceError(f"{path}: no prompts")
    return tuple(items)


def prompt_for(prompts: Sequence[PromptItem], sequence: int) -> PromptItem:
    """Round ``sequence`` (1-based) takes the prompts in order, cycling."""
    return prompts[(sequence - 1) % len(prompts)]
