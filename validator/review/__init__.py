"""Reading stored rounds back for review: the HTML report and the notebooks use this, nothing else.

A store (local directory, ``file://``, ``memory://``, ``s3://``) holds, per
round, ``input.json`` (the answers), ``evaluation.json`` (the record) and
``heatmap.png``; a daemon store also holds ``ledger.json``. This package turns
them into small frozen views, in round order (daemon rounds by sequence, then
the others in the order their replay read them, ``summary.json``, else by id),
without changing anything in the store:

- ``load_store(uri)`` -> ``StoreReview``: every round's summary and responses,
  the stored ledger, and what could not be read (``skipped``) or is not
  evaluated yet (``pending``);
- ``load_round(uri, round_id)`` -> ``RoundReview``: one round with its texts,
  heatmap and narrative;
- ``ledger_frame(uri)`` -> ``Table``: per-miner totals (the stored ledger when
  there is one, else rebuilt from the records), ``miner_trends(uri)`` -> PNG.

Everything read is untrusted (miner ids and texts come from the miners):
values of the wrong type read as missing, keys are built only by
``storage.keys``, and ``Table``'s HTML form escapes every cell. ``Table`` and
``PNG`` display themselves in Jupyter.

Modules: ``display`` (``Table``, ``PNG``, text helpers), ``rounds`` (per-round
views and ``parse_record``), ``miner_history`` (per-miner histories and the rebuilt
ledger), ``store`` (``StoreReview``), ``load`` (reading a store). Import from
the package: the module split is not part of the API. ``unpaid`` (why each unpaid miner got nothing, in
words: the round line's counts, the daemon's closing summary, ``validator weights show``) is imported as a
module by the commands that print it.
"""

from __future__ import annotations

from validator.review.display import PNG, Table, excerpt, printable
from validator.review.load import as_store, ledger_frame, load_heatmap, load_round, load_store, load_texts, miner_trends
from validator.review.miner_history import MinerHistory, MinerPoint
from validator.review.rounds import ResponseRow, RoundReview, RoundRow, parse_record
from validator.review.store import Skipped, StoreReview

__all__ = [
    "MinerHistory",
    "MinerPoint",
    "PNG",
    "ResponseRow",
    "RoundReview",
    "Skipped",
    "StoreReview",
    "RoundRow",
    "Table",
    "as_store",
    "excerpt",
    "ledger_frame",
    "load_heatmap",
    "load_round",
    "load_store",
    "load_texts",
    "miner_trends",
    "parse_record",
    "printable",
]
