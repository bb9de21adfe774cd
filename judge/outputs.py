"""Output files of judging: csv, jsonl and xlsx, written atomically (``storage.files.write_atomic``).

``output_path`` and ``responses_path`` are the only places file names are built.
Text cells are written as text in xlsx even when they start with "=" (a
model's answer is never turned into a formula); characters that xlsx cannot
hold are dropped and cells are cut at Excel's 32,767 characters.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from storage.files import write_atomic

FORMATS = ("csv", "jsonl", "xlsx")
SCORES_STEM = "scores"
XLSX_CELL_LIMIT = 32_767
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def timestamp(when: datetime) -> str:
    """Sortable and file-name safe: 2026-11-22-14-03-07."""
    return when.strftime("%Y-%m-%d-%H-%M-%S")


def safe_name(name: str) -> str:
    return _UNSAFE_NAME.sub("_", name).strip("._") or "model"


def responses_path(out_dir: Path, model: str, when: datetime) -> Path:
    """The seed's intermediate file: ``<model>-responses-<timestamp>.csv``."""
    return out_dir / f"{safe_name(model)}-responses-{timestamp(when)}.csv"


def output_path(out_dir: Path, fmt: str, stem: str = SCORES_STEM) -> Path:
    if fmt not in FORMATS and fmt != "json":
        raise ValueError(f"unknown output format {fmt!r}")
    return out_dir / f"{stem}.{fmt}"


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def csv_bytes(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buf.getvalue().encode("utf-8")


def jsonl_bytes(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> bytes:
    return "".join(json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False) + "\n" for row in rows).encode(
        "utf-8"
    )


def _xlsx_value(value: Any) -> Any:
    # lazy: start-up cost, openpyxl takes 0.3 s to import
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = ILLEGAL_CHARACTERS_RE.sub("", str(value))
    return text[:XLSX_CELL_LIMIT]


def xlsx_bytes(sheets: Mapping[str, tuple[Sequence[str], Sequence[Mapping[str, Any]]]]) -> bytes:
    """A workbook with one sheet per entry: a header row, then the rows."""
    # lazy: start-up cost, openpyxl takes 0.3 s to import
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for title, (columns, rows) in sheets.items():
        sheet = book.create_sheet(title=title[:31])
        sheet.append(list(columns))
        for r, row in enumerate(rows, start=2):
            for c, column in enumerate(columns, start=1):
                value = _xlsx_value(row.get(column))
                cell = sheet.cell(row=r, column=c, value=value)
                if isinstance(value, str):
                    cell.data_type = "s"  # "=..." stays text, never a formula
        sheet.freeze_panes = "A2"
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def write_table(
    out_dir: Path,
    fmt: str,
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    extra_sheets: Mapping[str, tuple[Sequence[str], Sequence[Mapping[str, Any]]]] | None = None,
    stem: str = SCORES_STEM,
) -> Path:
    """Write ``rows`` as ``<stem>.<fmt>``; xlsx also gets ``extra_sheets``."""
    path = output_path(out_dir, fmt, stem)
    if fmt == "csv":
        data = csv_bytes(columns, rows)
    elif fmt == "jsonl":
        data = jsonl_bytes(columns, rows)
    elif fmt == "xlsx":
        data = xlsx_bytes({stem: (columns, rows), **(extra_sheets or {})})
    else:
        raise ValueError(f"unknown output format {fmt!r}")
    write_atomic(path, data)
    return path


def write_json(path: Path, value: Any) -> Path:
    write_atomic(path, (json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8"))
    return path
