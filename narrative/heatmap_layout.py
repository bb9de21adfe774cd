"""The heatmap's layout pieces (``narrative.heatmap``): text measured in inches, the caption, the map, the
colour bar and the reason legend, each drawn on a ``Figure`` the caller owns (the Agg API only).

Every text is set in the bundled font with mathtext and TeX off; the caption is wrapped to the
figure's width, so nothing is cut at an edge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Patch

from narrative.labels import FONT

CMAP = "magma"                 # perceptually uniform; warmer / lighter = more similar


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


def caption(n: int, k: int, n_filtered: int, show_ticks: bool, reached: bool | None) -> str:
    """The line under the map: what the outline is and whether consensus was reached."""
    if reached is False:
        caption = f"outlined: dominant cluster ({k} of {n}), consensus not reached" if k else \
            f"consensus not reached (0 of {n})"
    else:
        caption = f"outlined: consensus ({k} of {n})" if k else f"no consensus (0 of {n})"
    if n_filtered:
        caption += f"{CAPTION_SEP}{n_filtered} filtered before clustering (listed last)"
    if not show_ticks:
        caption += f"{CAPTION_SEP}labels omitted (n > 100)"
    return caption


def draw_texts(fig: Figure, width: float, height: float, title_lines: list[str], title_fs: float, caption: str,
                small_fs: float, caption_h: float, reason_colors: dict[str, str], legend_cols: int,
                text_kw: dict) -> None:
    """Title, caption and the reason legend."""
    if title_lines:
        fig.text(0.5, 1.0 - 0.25 / height, "\n".join(title_lines), ha="center", va="top",
                 fontsize=title_fs, fontweight="bold", linespacing=1.15, **text_kw)
    fig.text(0.2 / width, 0.15 / height, caption, ha="left", va="bottom", fontsize=small_fs,
             color="#222222", **text_kw)
    if reason_colors:
        handles = [Patch(facecolor=reason_colors[r], edgecolor="#444444", linewidth=0.5, label=r)
                   for r in reason_colors]
        leg = fig.legend(handles=handles, loc="lower left", ncols=legend_cols, frameon=False,
                         bbox_to_anchor=(0.15 / width, (0.15 + caption_h) / height),
                         prop=FontProperties(family=FONT, size=small_fs), title="row strip: reason",
                         title_fontproperties=FontProperties(family=FONT, size=small_fs),
                         alignment="left", handlelength=1.2, columnspacing=1.2, borderaxespad=0.0,
                         borderpad=0.2)
        for t in leg.get_texts():
            t.set_parse_math(False)
            t.set_usetex(False)


def draw_map(fig: Figure, where: list[float], a: np.ndarray, order: list[int]):
    """The (n, n) cells in ``order``; returns the axes, the ordered matrix and the colour mapping."""
    n = len(order)
    ax = fig.add_axes(where)
    data = a[np.ix_(order, order)]
    finite = np.isfinite(data)
    shown_vals = np.ma.masked_invalid(np.clip(np.where(finite, data, 0.0), 0.0, 1.0))
    shown_vals.mask = ~finite
    cmap = colormaps[CMAP].with_extremes(bad="#9e9e9e", under=colormaps[CMAP](0.0))
    # Colour the n x n cells here and hand matplotlib an RGBA image: it then resamples bytes
    # to the output pixels instead of colour-mapping the upsampled floats (4x faster at n=256).
    rgba = cmap(shown_vals, bytes=True)
    ax.imshow(rgba, interpolation="nearest", aspect="auto")
    im = ScalarMappable(norm=Normalize(0.0, 1.0), cmap=cmap)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    for side in ax.spines.values():
        side.set_linewidth(0.6)
        side.set_color("#444444")
    return ax, data, im


def draw_colorbar(fig: Figure, where: list[float], im: ScalarMappable, data: np.ndarray, small_fs: float) -> None:
    cax = fig.add_axes(where)
    finite = np.isfinite(data)
    extend = "min" if bool(np.any(data[finite] < 0.0)) else "neither"
    cb = fig.colorbar(im, cax=cax, extend=extend, ticks=[0.0, 0.25, 0.5, 0.75, 1.0])
    cb.set_label("cosine similarity", fontsize=small_fs + 1, family=FONT)
    cb.ax.tick_params(labelsize=small_fs)
    cb.outline.set_linewidth(0.6)


def label_width(canvas: FigureCanvasAgg, order: list[int], ordered_labels: list[str], member_set: set[int],
                 tick_fs: float) -> float:
    """Inches the tick labels need (members are bold)."""
    bold = text_width_in(canvas, [s for i, s in zip(order, ordered_labels) if i in member_set], tick_fs, "bold")
    plain = text_width_in(canvas, [s for i, s in zip(order, ordered_labels) if i not in member_set], tick_fs)
    return max(bold, plain) + 0.12


def legend_grid(canvas: FigureCanvasAgg, reason_colors: dict[str, str], small_fs: float,
                 width: float) -> tuple[int, int]:
    """(columns, rows) of the reason legend: as many columns as fit the figure's width."""
    if not reason_colors:
        return 1, 0
    entry_w = text_width_in(canvas, list(reason_colors), small_fs) + 0.55
    cols = max(1, min(len(reason_colors), int((width - 0.4) // entry_w)))
    return cols, math.ceil(len(reason_colors) / cols)
