"""The heatmap's drawing: the cells and their colour scale, the group separators and the consensus
outline, the reason strip and tick labels, the colorbar, and the title, caption and reason legend
(``narrative.heatmap`` lays the figure out and calls these on it).

The untrusted texts (miner labels, reasons, the title) are drawn with mathtext and TeX off, in the
bundled font (``text_kw``, ``narrative.labels.FONT``).
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Patch, Rectangle
from matplotlib.patheffects import Normal, Stroke

from narrative.labels import FONT

CMAP = "magma"  # perceptually uniform; warmer / lighter = more similar
ANNOTATE_MAX_N = 12  # similarity values written in the cells up to this n

MEMBER_COLOR = "#1b7a35"
OTHER_COLOR = "#5f5f5f"
FILTERED_COLOR = "#8a8a8a"
OUTLINE_COLOR = "#00e5ff"


def draw_cells(ax, data: np.ndarray, k: int, bounds: list[int], pitch_pt: float, text_kw: dict) -> None:
    """Group separators, the consensus outline and (small n) the values in the cells."""
    n = data.shape[0]
    # thin separators between groups (consensus | cluster a | cluster b | ... | filtered): one line
    # collection per direction (a 256-answer round has ~70 groups; a Line2D each took 0.2 s to build and draw)
    sep_lw = 0.8 if n <= 64 else 0.5
    if bounds:
        at = np.asarray(bounds, dtype=float) - 0.5
        ax.hlines(at, -0.5, n - 0.5, colors="white", linewidths=sep_lw, alpha=0.7, zorder=2)
        ax.vlines(at, -0.5, n - 0.5, colors="white", linewidths=sep_lw, alpha=0.7, zorder=2)

    # consensus outline: cyan over a dark halo, visible on light and dark cells alike
    if k:
        lw = 2.2 if n <= 64 else 3.5
        rect = Rectangle((-0.5, -0.5), k, k, fill=False, edgecolor=OUTLINE_COLOR, linewidth=lw, clip_on=False, zorder=4)
        rect.set_path_effects([Stroke(linewidth=lw + 2.0, foreground="black"), Normal()])
        ax.add_patch(rect)

    if n <= ANNOTATE_MAX_N:
        cell_fs = float(np.clip(0.3 * pitch_pt, 6.0, 11.0))
        for r in range(n):
            for c in range(n):
                v = data[r, c]
                shade = 0.0 if not np.isfinite(v) else float(np.clip(v, 0.0, 1.0))
                ax.text(
                    c,
                    r,
                    "nan" if not np.isfinite(v) else f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=cell_fs,
                    color="black" if shade > 0.62 else "white",
                    zorder=3,
                    **text_kw,
                )


def draw_labels(
    fig: Figure,
    ax,
    strip_box: list[float] | None,
    order: list[int],
    ordered_labels: list[str],
    member_set: set[int],
    clusters: list,
    reason_keys: list[str],
    reason_colors: dict[str, str],
    tick_fs: float | None,
    text_kw: dict,
) -> None:
    """The reason strip left of the rows (when ``strip_box``) and the tick labels (when ``tick_fs``)."""
    n = len(order)
    label_ax = ax
    if strip_box is not None:
        sax = fig.add_axes(strip_box)
        keys_in_order = [reason_keys[i] for i in order]
        palette = list(reason_colors)
        idx = np.array([[palette.index(key)] for key in keys_in_order])
        sax.imshow(
            idx,
            cmap=ListedColormap([reason_colors[p] for p in palette]),
            vmin=-0.5,
            vmax=len(palette) - 0.5,
            interpolation="nearest",
            aspect="auto",
        )
        sax.set_xlim(-0.5, 0.5)
        sax.set_ylim(n - 0.5, -0.5)
        sax.set_xticks([])
        for side in sax.spines.values():
            side.set_linewidth(0.6)
            side.set_color("#444444")
        ax.set_yticks([])
        label_ax = sax

    if tick_fs is not None:
        ax.set_xticks(range(n))
        label_ax.set_yticks(range(n))
        ax.set_xticklabels(ordered_labels, rotation=90, fontsize=tick_fs, **text_kw)
        label_ax.set_yticklabels(ordered_labels, fontsize=tick_fs, **text_kw)
        ax.tick_params(axis="x", length=2, pad=2)
        label_ax.tick_params(axis="y", length=2, pad=2)
        for tick_labels in (ax.get_xticklabels(), label_ax.get_yticklabels()):
            for pos, t in enumerate(tick_labels):
                t.set_parse_math(False)
                t.set_usetex(False)
                if order[pos] in member_set:
                    t.set_color(MEMBER_COLOR)
                    t.set_fontweight("bold")
                else:
                    t.set_color(OTHER_COLOR if int(clusters[order[pos]]) >= 0 else FILTERED_COLOR)
    else:
        ax.set_xticks([])
        label_ax.set_yticks([])
        if label_ax is not ax:
            ax.set_yticks([])


def draw_texts(
    fig: Figure,
    width: float,
    height: float,
    title_lines: list[str],
    title_fs: float,
    caption: str,
    small_fs: float,
    caption_h: float,
    reason_colors: dict[str, str],
    legend_cols: int,
    text_kw: dict,
) -> None:
    """Title, caption and the reason legend."""
    if title_lines:
        fig.text(
            0.5,
            1.0 - 0.25 / height,
            "\n".join(title_lines),
            ha="center",
            va="top",
            fontsize=title_fs,
            fontweight="bold",
            linespacing=1.15,
            **text_kw,
        )
    fig.text(0.2 / width, 0.15 / height, caption, ha="left", va="bottom", fontsize=small_fs, color="#222222", **text_kw)
    if reason_colors:
        handles = [
            Patch(facecolor=reason_colors[r], edgecolor="#444444", linewidth=0.5, label=r) for r in reason_colors
        ]
        leg = fig.legend(
            handles=handles,
            loc="lower left",
            ncols=legend_cols,
            frameon=False,
            bbox_to_anchor=(0.15 / width, (0.15 + caption_h) / height),
            prop=FontProperties(family=FONT, size=small_fs),
            title="row strip: reason",
            title_fontproperties=FontProperties(family=FONT, size=small_fs),
            alignment="left",
            handlelength=1.2,
            columnspacing=1.2,
            borderaxespad=0.0,
            borderpad=0.2,
        )
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
