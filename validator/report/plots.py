"""PNG plots for the report and the notebooks: one miner across rounds, and the top miners' trends.

Object-oriented Agg only (``Figure`` + ``FigureCanvasAgg``, never pyplot), no
timestamp or software tag in the file, so the same data give the same bytes.
Miner ids (legend labels) are untrusted: they pass through
``narrative.heatmap.sanitise`` and are drawn with mathtext and TeX off.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, MaxNLocator

from narrative.heatmap import FONT, sanitise

__all__ = ["miner_history_png", "trends_png"]

DPI = 100
IN_COLOR = "#2e9e44"
OUT_COLOR = "#5f5f5f"
FAILED_COLOR = "#d62728"
LINE_COLOR = "#3b75c4"
LABEL_CHARS = 24


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buf, metadata={"Software": None}, pil_kwargs={"compress_level": 6})
    return buf.getvalue()


def _style(ax, title: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=10, family=FONT, loc="left")
    ax.set_ylabel(ylabel, fontsize=9, family=FONT)
    ax.grid(True, alpha=0.3)
    ax.tick_params(labelsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def miner_history_png(
    orders: Sequence[int],
    composite: Sequence[float | None],
    in_consensus: Sequence[bool],
    failed: Sequence[bool],
    emissions: Sequence[int],
) -> bytes:
    """Three panels over the store's round order (x = round number, 1-based): the composite score per
    round (green: in consensus, grey: out, red: failed), the cumulative consensus rate, and the
    cumulative emissions. All sequences have one item per round the miner took part in."""
    n = len(orders)
    if not (len(composite) == len(in_consensus) == len(failed) == len(emissions) == n):
        raise ValueError("orders, composite, in_consensus, failed and emissions must have the same length")
    fig = Figure(figsize=(7.5, 6.0), dpi=DPI)
    score_ax, rate_ax, pay_ax = fig.subplots(3, 1, sharex=True)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.08, hspace=0.3)  # fixed: layout engines cost 2x
    groups = {"in consensus": (IN_COLOR, "o"), "out of consensus": (OUT_COLOR, "x"), "failed": (FAILED_COLOR, "v")}
    for label, (color, marker) in groups.items():
        xs, ys = [], []
        for x, s, inc, bad in zip(orders, composite, in_consensus, failed):
            kind = "failed" if bad else ("in consensus" if inc else "out of consensus")
            if kind == label:
                xs.append(x)
                ys.append(0.0 if s is None or not math.isfinite(s) else s)
        if xs:
            score_ax.scatter(xs, ys, c=color, marker=marker, s=22, label=label, zorder=3)
    score_ax.set_ylim(-3, 103)
    _style(score_ax, "composite score per round", "score (0-100)")
    if n:
        score_ax.legend(loc="best", prop={"family": FONT, "size": 8})
    hits, rate = 0, []
    for i, inc in enumerate(in_consensus, start=1):
        hits += int(inc)
        rate.append(hits / i)
    rate_ax.plot(list(orders), rate, color=LINE_COLOR, marker=".", linewidth=1.5)
    rate_ax.set_ylim(-0.03, 1.03)
    _style(rate_ax, "consensus rate so far", "rate")
    total, paid = 0, []
    for e in emissions:
        total += int(e)
        paid.append(total)
    pay_ax.step(list(orders), paid, where="post", color=LINE_COLOR, linewidth=1.5)
    _style(pay_ax, "cumulative emissions", "units")
    pay_ax.set_ylim(bottom=0, top=max(1, total) * 1.05)
    pay_ax.set_xlabel("round (store order)", fontsize=9, family=FONT)
    pay_ax.yaxis.set_major_formatter(EngFormatter(sep=""))  # 1.5G: no offset text over the title
    return _png(fig)


def trends_png(emissions: Mapping[str, Sequence[int]], ema: Mapping[str, Sequence[float]]) -> bytes:
    """Two panels over rounds 1..n: cumulative emissions and EMA score per miner (one line each).
    ``emissions[m]`` and ``ema[m]`` hold one value per round of the store (0 before the miner appears)."""
    if set(emissions) != set(ema) or any(len(emissions[m]) != len(ema[m]) for m in emissions):
        raise ValueError("emissions and ema must name the same miners, with one value per round each")
    fig = Figure(figsize=(8.0, 6.0), dpi=DPI)
    pay_ax, ema_ax = fig.subplots(2, 1, sharex=True)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.08, hspace=0.25)
    for miner, values in emissions.items():
        xs = list(range(1, len(values) + 1))
        label = sanitise(miner, LABEL_CHARS) or "?"
        pay_ax.plot(xs, list(values), linewidth=1.5, label=label)
        ema_ax.plot(xs, list(ema[miner]), linewidth=1.5, label=label)
    _style(pay_ax, "cumulative emissions", "units")
    pay_ax.yaxis.set_major_formatter(EngFormatter(sep=""))
    _style(ema_ax, "EMA score (the ledger's weight before normalising)", "EMA")
    ema_ax.set_xlabel("round (store order)", fontsize=9, family=FONT)
    if emissions:
        legend = pay_ax.legend(loc="upper left", prop={"family": FONT, "size": 8})
        for text in legend.get_texts():
            text.set_parse_math(False)
            text.set_usetex(False)
    return _png(fig)
