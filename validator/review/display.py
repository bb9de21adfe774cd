"""Display values of the review API: ``PNG`` and ``Table``, which show themselves in Jupyter, and text helpers.

Every string shown here may come from a miner: ``Table``'s HTML form escapes
every cell, its text form goes through ``validator.terminal.safe``, and
``printable`` replaces the lone surrogates JSON allows but UTF-8 does not.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from validator.terminal import safe

__all__ = ["PNG", "PNG_SIGNATURE", "Table", "display_text", "excerpt", "printable"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with lone surrogates (valid in JSON-escaped input, not in UTF-8) replaced by U+FFFD."""
    return _SURROGATES.sub("\ufffd", text)


def display_text(value: Any) -> str | None:
    """A display string, ``None`` for a value that is not one (never an id: ids stay exact, they name store keys)."""
    return printable(value) if isinstance(value, str) else None


def excerpt(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1].rstrip() + "\u2026"


class PNG(bytes):
    """PNG bytes that Jupyter shows as an image."""

    def _repr_png_(self) -> bytes:
        return bytes(self)


@dataclass(frozen=True)
class Table:
    """Rows of plain values under named columns; shows itself as an escaped HTML table in Jupyter."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    title: str = ""

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [row[i] for row in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def _repr_html_(self) -> str:
        def esc(text: str) -> str:
            return html.escape(printable(text))

        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{esc(_cell(v))}</td>" for v in row) + "</tr>" for row in self.rows)
        caption = f"<caption>{esc(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __str__(self) -> str:
        cells = [list(self.columns)] + [[printable(safe(_cell(v), 48)) for v in row] for row in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(([printable(safe(self.title, 200))] if self.title else []) + lines)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
