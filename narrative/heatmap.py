"""PNG heatmap of one round's pairwise cosine similarities.

Rows and columns are ordered consensus members first (input order), then the
other responses grouped by cluster, then the ones filtered before clustering.
The consensus block is outlined, member tick labels are green and bold, the
others grey; an optional strip left of the rows shows each response's reason.

Only the object-oriented Agg API is used (``Figure`` + ``FigureCanvasAgg``,
never pyplot), so nothing touches global figure state or opens a window, and
rendering is serialised by a module lock. The output is byte-for-byte
deterministic: no timestamp or software tag is written and every text is set
in the bundled DejaVu Sans.

Miner ids, reasons and the title are untrusted: they are rendered with
mathtext and TeX off, and made safe by ``narrative.labels`` (control/format
characters, combining marks and glyphs the font lacks stripped, one line,
shortened). When consensus was not reached the caption says so.

This module lays the figure out and renders it; the drawing on it is ``narrative.heatmap_draw``,
the text measurements and the caption ``narrative.heatmap_text``.
"""

from __future__ import annotations

import io
import textwrap
import threading
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from narrative.heatmap_draw import OTHER_COLOR, draw_cells, draw_colorbar, draw_labels, draw_map, draw_texts
from narrative.heatmap_text import caption_text, fit_lines, label_width, legend_grid, text_width_in
from narrative.labels import FONT, reason_palette, sanitise, unique_labels

__all__ = ["render_heatmap"]

TITLE_CHARS = 80
REASON_CHARS = 18
TICK_LABELS_MAX_N = 100  # above this the ticks are dropped (the outline stays)
DPI = 100
LARGE_GRID_IN = 16.0  # heatmap side in inches above TICK_LABELS_MAX_N


_LOCK = threading.Lock()


def _order(n: int, members: Sequence[int], clusters: Sequence[int]) -> tuple[list[int], int, list[int]]:
    """Display order, consensus block size, and group boundaries (positions where a new group starts)."""
    member_set = sorted({int(m) for m in members})
    rest = [i for i in range(n) if i not in set(member_set)]
    clustered = sorted((i for i in rest if int(clusters[i]) >= 0), key=lambda i: (int(clusters[i]), i))
    filtered = [i for i in rest if int(clusters[i]) < 0]
    order = member_set + clustered + filtered
    keys = ["m"] * len(member_set) + [f"c{int(clusters[i])}" for i in clustered] + ["f"] * len(filtered)
    bounds = [p for p in range(1, n) if keys[p] != keys[p - 1]]
    return order, len(member_set), bounds


def _validate(
    sim: np.ndarray,
    labels: Sequence[str],
    members: Sequence[int],
    clusters: Sequence[int],
    reasons: Sequence[str] | None,
) -> np.ndarray:
    a = np.array(sim, dtype=float, copy=True)  # never a view of the caller's array
    if a.size == 0 and len(labels) == 0:
        return np.zeros((0, 0))
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"sim must be a square (n, n) matrix, got shape {a.shape}")
    n = a.shape[0]
    if len(labels) != n or len(clusters) != n:
        raise ValueError(f"labels ({len(labels)}) and clusters ({len(clusters)}) must have n={n} entries")
    if reasons is not None and len(reasons) != n:
        raise ValueError(f"reasons ({len(reasons)}) must have n={n} entries")
    bad = [m for m in members if not 0 <= int(m) < n]
    if bad:
        raise ValueError(f"member indices out of range for n={n}: {bad[:5]}")
    return a


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    # zlib level 1: a quarter of the default's encoding time for large maps, ~10% larger files
    FigureCanvasAgg(fig).print_png(buf, metadata={"Software": None}, pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def _empty_png(title: str) -> bytes:
    fig = Figure(figsize=(4.0, 2.0), dpi=DPI)
    FigureCanvasAgg(fig)
    head = textwrap.wrap(title, 40)[:2]
    if head:
        fig.text(
            0.5, 0.92, "\n".join(head), ha="center", va="top", fontsize=10, family=FONT, parse_math=False, usetex=False
        )
    fig.text(
        0.5,
        0.4,
        "no responses",
        ha="center",
        va="center",
        fontsize=14,
        color=OTHER_COLOR,
        family=FONT,
        parse_math=False,
        usetex=False,
    )
    return _png(fig)


def render_heatmap(
    sim: np.ndarray,
    labels: Sequence[str],
    members: Sequence[int],
    clusters: Sequence[int],
    title: str,
    reasons: Sequence[str] | None = None,
    *,
    reached: bool | None = None,
) -> bytes:
    """PNG bytes of the (n, n) cosine-similarity heatmap of one round.

    ``reached``: whether the round's consensus score reached its threshold; when False the
    caption says the outlined block is the dominant cluster and consensus was ``not reached``.

    Order: consensus members (input order), other responses grouped by cluster, then
    filtered ones (cluster -1). Fixed color scale 0..1 (negatives clipped, NaN grey).
    Raises ``ValueError`` on inconsistent shapes or member indices out of range.
    """
    a = _validate(sim, labels, members, clusters, reasons)
    n = a.shape[0]
    safe_title = sanitise(title, TITLE_CHARS)
    with _LOCK:
        if n == 0:
            return _empty_png(safe_title)
        return _render(
            a,
            list(labels),
            list(members),
            list(clusters),
            safe_title,
            None if reasons is None else list(reasons),
            reached,
        )


def _render(
    a: np.ndarray,
    labels: list,
    members: list,
    clusters: list,
    title: str,
    reasons: list | None,
    reached: bool | None = None,
) -> bytes:
    n = a.shape[0]
    order, k, bounds = _order(n, members, clusters)
    shown = unique_labels(labels)
    member_set = set(order[:k])
    show_ticks = n <= TICK_LABELS_MAX_N

    # ---- geometry (inches) -------------------------------------------------------
    if n <= TICK_LABELS_MAX_N:
        grid = max(3.0, 0.22 * n)
    else:
        # no tick labels above TICK_LABELS_MAX_N: a fixed 16-inch grid (1,600 px) keeps a
        # 256-miner map at 6 px per cell while rendering costs less than half of a grid
        # that keeps growing with n (the daemon renders one per round)
        grid = LARGE_GRID_IN
    pitch_pt = grid / n * 72
    tick_fs = float(np.clip(0.45 * pitch_pt, 5.0, 10.0))
    title_fs = 12.0 if n <= 32 else 14.0
    small_fs = 9.0 if n <= 32 else 11.0

    fig = Figure(figsize=(8.0, 8.0), dpi=DPI)
    canvas = FigureCanvasAgg(fig)

    ordered_labels = [shown[i] for i in order]
    lab_w = label_width(canvas, order, ordered_labels, member_set, tick_fs) if show_ticks else 0.1
    strip_w = 0.16 if reasons is not None and n <= TICK_LABELS_MAX_N else (0.3 if reasons is not None else 0.0)
    strip_gap = 0.04 if reasons is not None else 0.0

    # Reason legend: sanitised keys, laid out in as many columns as fit.
    reason_keys: list[str] = []
    reason_colors: dict[str, str] = {}
    if reasons is not None:
        reason_keys, reason_colors = reason_palette([sanitise(r, REASON_CHARS) or "(none)" for r in reasons])

    left = 0.3 + lab_w + strip_w + strip_gap
    right = 0.25 + 0.22 + 0.95  # gap, colorbar, its ticks and label
    width = max(5.0, left + grid + right)
    # centre narrow layouts: put the slack on both sides
    slack = width - (left + grid + right)
    left += slack / 2

    title_lines = textwrap.wrap(title, max(20, int((width - 0.4) * 72 / (title_fs * 0.62))))[:3] if title else []
    if title_lines:  # the wrap width is an estimate: shrink the font if a line is still too wide
        widest = text_width_in(canvas, title_lines, title_fs, "bold")
        if widest > width - 0.3:
            title_fs = max(6.0, title_fs * (width - 0.3) / widest)
    top = 0.25 + len(title_lines) * title_fs * 1.3 / 72 + 0.1

    legend_cols, legend_rows = legend_grid(canvas, reason_colors, small_fs, width)
    n_filtered = sum(1 for i in range(n) if i not in member_set and int(clusters[i]) < 0)
    # the caption in as many lines as the figure's width needs (one line was cut at the right edge)
    caption_lines = fit_lines(canvas, caption_text(n, k, n_filtered, show_ticks, reached), small_fs, width - 0.4)
    caption_h = (1.25 * len(caption_lines) + 0.35) * small_fs / 72
    legend_h = (legend_rows + 1) * small_fs * 1.75 / 72 + 0.1 if legend_rows else 0.0  # +1: legend title
    bottom = 0.15 + caption_h + legend_h + lab_w + 0.1
    height = bottom + grid + top
    fig.set_size_inches(width, height)

    def box(x0: float, y0: float, w: float, h: float) -> list[float]:
        return [x0 / width, y0 / height, w / width, h / height]

    text_kw = dict(family=FONT, parse_math=False, usetex=False)

    # ---- heatmap -------------------------------------------------------------------
    ax, data, im = draw_map(fig, box(left, bottom, grid, grid), a, order)
    draw_cells(ax, data, k, bounds, pitch_pt, text_kw)

    # ---- ticks and labels ----------------------------------------------------------
    strip_box = box(left - strip_gap - strip_w, bottom, strip_w, grid) if reasons is not None else None
    draw_labels(
        fig,
        ax,
        strip_box,
        order,
        ordered_labels,
        member_set,
        clusters,
        reason_keys,
        reason_colors,
        tick_fs if show_ticks else None,
        text_kw,
    )

    # ---- colorbar ------------------------------------------------------------------
    draw_colorbar(fig, box(left + grid + 0.25, bottom, 0.22, grid), im, data, small_fs)

    # ---- title, caption, legend ----------------------------------------------------
    draw_texts(
        fig,
        width,
        height,
        title_lines,
        title_fs,
        "\n".join(caption_lines),
        small_fs,
        caption_h,
        reason_colors,
        legend_cols,
        text_kw,
    )

    return _png(fig)
