"""The static HTML review site of a store (``validator report``): rounds, heatmaps, narratives, miners.

``build_report(store, out)`` writes the site (see ``builder`` for its
layout); ``serve(directory)`` serves a built site on loopback. The data come
from ``validator.review``; plots from ``plots``.
"""

from __future__ import annotations

from validator.report.builder import CSP, ReportResult, build_report, miner_page, round_page
from validator.report.serve import serve

__all__ = ["CSP", "ReportResult", "build_report", "miner_page", "round_page", "serve"]
