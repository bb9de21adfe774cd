"""The heatmap's text layout: widths measured by the Agg renderer, the caption and how it wraps, the room the
tick labels and the reason legend need (``narrative.heatmap`` draws with them)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.font_manager import FontProperties

from narrative.labels import FONT


def text_width_in(canvas: FigureCanvasAgg, texts: Sequence[str], size: float, weight: str = "normal") -> float:
    """Widest of ``texts`` in inches, measured by the Agg renderer."""
    if not texts:
        return 0.0
    renderer = canvas.get_renderer()
    prop = FontProperties(family=FONT, size=size, weight=weight)
    widest = max(renderer.get_text_width_height_descent(t, prop, ismath=False)[0] for t in texts)
    return widest / canvas.figure.dpi


CAPTION_SEP = "  \u00b7  "


def fit_lines(canvas: FigureCanvasAgg, text: str, size: float, max_w: float) -> list[str]:
    """``text`` in lines no wider than ``max_w`` inches: its `` · `` parts joined while they fit, a part
    wider than that wrapped at spaces."""
    lines: list[str] = []
    for part in text.split(CAPTION_SEP):
        if lines and text_width_in(canvas, [lines[-1] + CAPTION_SEP + part], size) <= max_w:
            lines[-1] += CAPTION_SEP + part
            continue
        words = part.split(" ")
        line = words[0]
        for word in words[1:]:
            if text_width_in(canvas, [f"{line} {word}"], size) <= max_w:
                line += f" {word}"
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return lines


def caption_text(n: int, k: int, n_filtered: int, show_ticks: bool, reached: bool | None) -> str:
    """The line under the map: what the outline is and whether consensus was reached."""
    if reached is False:
        caption = (
            f"outlined: dominant cluster ({k} of {n}), consensus not reached"
            if k
            else f"consensus not reached (0 of {n})"
        )
    else:
        caption = f"outlined: consensus ({k} of {n})" if k else f"no consensus (0 of {n})"
    if n_filtered:
        caption += f"{CAPTION_SEP}{n_filtered} filtered before clustering (listed last)"
    if not show_ticks:
        caption += f"{CAPTION_SEP}labels omitted (n > 100)"
    return caption


def label_width(
    canvas: FigureCanvasAgg, order: list[int], ordered_labels: list[str], member_set: set[int], tick_fs: float
) -> float:
    """Inches the tick labels need (members are bold)."""
    bold = text_width_in(canvas, [s for i, s in zip(order, ordered_labels) if i in member_set], tick_fs, "bold")
    plain = text_width_in(canvas, [s for i, s in zip(order, ordered_labels) if i not in member_set], tick_fs)
    return max(bold, plain) + 0.12


def legend_grid(
    canvas: FigureCanvasAgg, reason_colors: dict[str, str], small_fs: float, width: float
) -> tuple[int, int]:
    """(columns, rows) of the reason legend: as many columns as fit the figure's width."""
    if not reason_colors:
        return 1, 0
    entry_w = text_width_in(canvas, list(reason_colors), small_fs) + 0.55
    cols = max(1, min(len(reason_colors), int((width - 0.4) // entry_w)))
    return cols, math.ceil(len(reason_colors) / cols)
