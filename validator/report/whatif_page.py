"""The report's what-if page: ``whatif.json`` (``validator whatif``) as a table and a plot of weight deltas.

``write_whatif_page`` renders ``whatif.html`` (the changed settings, the
rounds' summary, every miner's old vs new emissions, weight and rank, and
the rounds whose consensus or membership moved) and ``whatif.png`` (one bar
per miner: new weight minus old, the largest moves first). Miner ids are
untrusted: the page escapes them (Jinja2 autoescape) and the plot passes
them through ``narrative.heatmap.sanitise``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure

from narrative.heatmap import FONT, sanitise
from validator.report.plots import IN_COLOR, LABEL_CHARS, OUT_COLOR, _png

MAX_BARS = 40  # miners drawn in the plot (the table lists them all)


def whatif_png(miners: Mapping[str, Mapping[str, Any]]) -> bytes:
    """Bars of ``weight_new - weight_old`` per miner, largest moves first (at most ``MAX_BARS``)."""
    rows = sorted(miners.items(), key=lambda kv: (-abs(kv[1]["weight_change"]), kv[0]))[:MAX_BARS]
    fig = Figure(figsize=(8, max(2.5, 0.28 * len(rows) + 1.2)), dpi=100)
    ax = fig.add_subplot()
    labels = [sanitise(name, LABEL_CHARS) for name, _ in rows]
    deltas = [float(m["weight_change"]) for _, m in rows]
    positions = list(range(len(rows)))[::-1]
    ax.barh(positions, deltas, color=[IN_COLOR if d >= 0 else OUT_COLOR for d in deltas])
    ax.set_yticks(positions, labels, fontsize=8, family=FONT)
    ax.axvline(0.0, color="#000000", linewidth=0.8)
    ax.set_title("Final weight: new minus old", fontsize=10, family=FONT, loc="left")
    ax.set_xlabel("weight change", fontsize=9, family=FONT)
    ax.grid(True, axis="x", alpha=0.3)
    ax.tick_params(labelsize=8)
    fig.tight_layout()
    return _png(fig)


def write_whatif_page(writer, report: Mapping[str, Any]) -> None:
    """Write ``whatif.html`` and ``whatif.png`` with the builder's writer (``validator.report.builder``)."""
    writer.write("whatif.png", whatif_png(report.get("miners", {})))
    miners = sorted(report.get("miners", {}).items(), key=lambda kv: (-abs(kv[1]["weight_change"]), kv[0]))
    moved = [
        r
        for r in report.get("rounds", [])
        if r["members_gained"] or r["members_lost"] or r["reached_old"] != r["reached_new"]
    ]
    writer.render("whatif.html", "whatif.html", report=report, miners=miners, moved=moved)
