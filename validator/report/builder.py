"""Build the static review site of a store: an index of rounds, a page per round, a page per miner.

Layout under the output directory::

    index.html                  every round (sortable, filterable), every miner, the pairs of miners far more
                                alike than their rounds (the ledger's identity evidence); links whatif.html
    weights.html                chain mode's weight submissions and plans, when the store holds some
    whatif.html, whatif.png     a `validator whatif` report, when one is given (``whatif``)
    assets/report.css, report.js
    round/<round>/index.html    heatmap, per-response table, the answers, the narrative
    round/<round>/heatmap.png
    miner/<miner>/index.html    scores, consensus rate and emissions across rounds
    miner/<miner>/history.png

``<round>`` and ``<miner>`` are ``storage.keys.component`` of the untrusted
ids (one safe path segment, distinct ids stay distinct); links quote them
again, so a ``%`` in a name survives the browser's decoding. Every text
goes through Jinja2 with autoescape on, and each page carries a
Content-Security-Policy that allows only the site's own script, style and
images (no inline script, no network). Files are written atomically; files
of rounds no longer in the store are left in place.
"""

from __future__ import annotations

import os
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import markupsafe

from storage import keys
from storage.base import Store
from storage.files import write_atomic
from tasks.trust import Trust
from validator import __version__
from validator.report.canaries_page import canary_rows
from validator.report.plots import miner_history_png
from validator.report.weights_page import weight_attempts, write_weights_page
from validator.review import (
    MinerHistory,
    RoundRow,
    Skipped,
    StoreReview,
    as_store,
    excerpt,
    load_heatmap,
    load_store,
    load_texts,
    printable,
)
from validator.review.unpaid import tally_rounds, why_zero

__all__ = ["CSP", "ReportResult", "build_report", "miner_page", "round_page"]

# No inline script or style, no network, no plugins, no forms: only the site's own files.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'none'; object-src 'none'"
)
MAX_TEXT_CHARS = 20_000  # an answer longer than this is cut on its round page (the store keeps all of it)
EXCERPT_CHARS = 100  # prompt excerpt on the index
ASSETS = ("report.css", "report.js", "favicon.svg")


@dataclass(frozen=True)
class ReportResult:
    """What a build wrote: where, how many pages, and what it could not show."""

    out: Path
    rounds: int
    miners: int
    files: int
    seconds: float
    skipped: tuple[Skipped, ...] = ()
    pending: tuple[str, ...] = ()

    @property
    def index(self) -> Path:
        return self.out / "index.html"


def round_page(round_id: str) -> str:
    """The round's page, relative to the site root (a file path, not a URL)."""
    return f"round/{keys.component(round_id)}/index.html"


def miner_page(miner: str) -> str:
    """The miner's page, relative to the site root (a file path, not a URL)."""
    return f"miner/{keys.component(miner)}/index.html"


def _href(path: str) -> str:
    """A relative URL for a site path: each segment quoted, so '%' in a file name stays a '%'."""
    return "/".join(quote(part, safe="") for part in path.split("/"))


# ---- formatting (template filters) -----------------------------------------------------------------


def _num(value: float | None, digits: int = 3) -> str:
    return "\u2014" if value is None else f"{value:.{digits}f}"


def _amount(value: int | None) -> str:
    return "\u2014" if value is None else f"{value:,}"


def _pct(value: float | None) -> str:
    return "\u2014" if value is None else f"{value:.0%}"


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    return excerpt(text, limit)


def _sort_key(value: Any) -> str:
    """The ``data-sort`` value of a number cell ('' sorts first)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _trust(totals: Any) -> Trust:
    """A ledger entry's earned trust (``tasks.trust``: verified accuracy on task rounds, with its interval)."""
    return Trust(totals.tasks_right, totals.tasks)


_KEPT = frozenset("\n\t\r")


def _visible(value: Any) -> Any:
    """Every value a page shows, with invisible characters (zero-width, bidi controls, other control and format
    characters) written as their escape (``\\u200b``): a miner id ``uid\\u200b-3`` cannot pose as ``uid-3``, and a
    hidden character in an answer shows where it is. Line breaks and tabs stay; autoescape runs after this."""
    if not isinstance(value, str) or isinstance(value, markupsafe.Markup) or value.isascii() and value.isprintable():
        return value  # (markup is the site's own: built from escaped parts)
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if ch not in _KEPT and unicodedata.category(ch)[0] == "C" else ch
        for ch in value
    )


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        finalize=_visible,
        loader=jinja2.PackageLoader("validator.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(num=_num, amount=_amount, pct=_pct, excerpt=_excerpt, sortkey=_sort_key, trust=_trust)
    env.globals.update(
        csp=CSP,
        version=__version__,
        max_text=MAX_TEXT_CHARS,
        round_href=lambda rid: _href(round_page(rid)),
        miner_href=lambda m: _href(miner_page(m)),
    )
    return env


# ---- writing ---------------------------------------------------------------------------------------


class _Writer:
    """The site's files under ``root``; pages rendered from the templates of ``env`` with ``common`` (the footer's
    source) and ``root``, the way back from the page to the site's top."""

    def __init__(self, root: Path, env: jinja2.Environment, common: Mapping[str, Any]) -> None:
        self.root, self.env, self.common = root, env, common
        self.files = 0

    def render(self, rel: str, template: str, **context: Any) -> None:
        """Write the page ``rel`` (a path under the site's top) from ``template`` with ``context``."""
        self.page(rel, self.env.get_template(template).render(root="../" * rel.count("/"), **context, **self.common))

    def write(self, rel: str, data: bytes) -> None:
        write_atomic(self.root.joinpath(*rel.split("/")), data, fsync=False)  # a report is rebuilt at will
        self.files += 1

    def page(self, rel: str, html: str) -> None:
        # lone surrogates (valid in JSON-escaped ids) cannot be UTF-8: they are shown as U+FFFD
        self.write(rel, printable(html).encode("utf-8"))


def build_report(
    store: Store | str,
    out: str | os.PathLike[str],
    *,
    source: str | None = None,
    on_page: Callable[[], None] | None = None,
    review: StoreReview | None = None,
    whatif: dict[str, Any] | None = None,
) -> ReportResult:
    """Write the site for ``store`` (a ``Store`` or URI) into ``out``; ``on_page`` is called per page.

    ``source`` is the store's name shown in the footer (default: the URI, or the store's repr);
    ``whatif``: a ``whatif.json`` document, shown on ``whatif.html``.
    Raises ``StoreError`` when the store cannot be listed; unreadable records are listed on the
    index (and in ``ReportResult.skipped``), never fatal.
    """
    start = time.perf_counter()
    name = source if source is not None else (store if isinstance(store, str) else repr(store))
    store = as_store(store)
    review = review if review is not None else load_store(store)
    writer = _Writer(Path(out), _environment(), {"source": name})
    tick = on_page or (lambda: None)
    for asset in ASSETS:
        writer.write(f"assets/{asset}", resources.files("validator.report").joinpath("static", asset).read_bytes())
    histories = review.miners()
    weights = review.ledger.weights() if review.ledger is not None else {}
    # why each miner at weight 0 has it, in the words of the daemon's closing summary and `validator weights show`
    why_zero = zero_reasons(review) if review.ledger is not None else {}

    canaries = canary_rows(review.rounds)
    attempts = weight_attempts(store)  # chain mode's weight submissions and plans (validator.report.weights_page)
    # the what-if page of this build, or of an earlier one in the same directory (pages are left in place)
    whatif_link = (
        printable(str(whatif.get("whatif_id") or ""))
        if whatif is not None
        else ("" if (Path(out) / "whatif.html").is_file() else None)
    )
    writer.render(
        "index.html",
        "index.html",
        review=review,
        histories=histories,
        ledger=review.ledger,
        weights=weights,
        why_zero=why_zero,
        canaries=canaries,
        whatif=whatif_link,
        pairs=review.pairs_table(),
        attempts=attempts,
    )
    tick()
    if attempts:
        write_weights_page(writer, attempts)
    writer.render("canaries.html", "canaries.html", rows=canaries)
    if whatif is not None:  # a `validator whatif` report: whatif.html and its plot (validator.report.whatif_page)
        # lazy: start-up cost, matplotlib (through validator.report.whatif_page) takes 1.7 s to import
        from validator.report.whatif_page import write_whatif_page

        write_whatif_page(writer, whatif)
    rounds = review.rounds
    for i, rnd in enumerate(rounds):
        _round(
            writer, store, rnd, prev=rounds[i - 1] if i else None, next_=rounds[i + 1] if i + 1 < len(rounds) else None
        )
        tick()
    for history in histories.values():
        _miner(writer, history, review, weights)
        tick()
    return ReportResult(
        Path(out),
        len(rounds),
        len(histories),
        writer.files,
        time.perf_counter() - start,
        review.skipped,
        review.pending,
    )


def zero_reasons(review: StoreReview) -> dict[str, str]:
    """Miner -> why its ledger weight is 0 (``validator.review.unpaid.why_zero`` over the store's rounds); paid: absent."""
    assert review.ledger is not None
    tally = tally_rounds(review.rounds)
    weights = review.ledger.weights()
    return {m: why_zero(m, review.ledger, tally) for m in review.miners() if weights.get(m, 0.0) == 0}


def _round(writer: _Writer, store: Store, rnd: RoundRow, *, prev: RoundRow | None, next_: RoundRow | None) -> None:
    base = f"round/{keys.component(rnd.round_id)}"
    png = load_heatmap(store, rnd)
    if png is not None:
        writer.write(f"{base}/heatmap.png", bytes(png))
    texts = load_texts(store, rnd)
    writer.render(
        f"{base}/index.html", "round.html", r=rnd, texts=texts, heatmap=png is not None, prev=prev, next=next_
    )


def _miner(writer: _Writer, history: MinerHistory, review: StoreReview, weights: dict[str, float]) -> None:
    base = f"miner/{keys.component(history.miner)}"
    points = history.points
    writer.write(
        f"{base}/history.png",
        miner_history_png(
            [p.order for p in points],
            [p.composite for p in points],
            [p.in_consensus for p in points],
            [p.error is not None for p in points],
            [p.emission for p in points],
        ),
    )
    totals = review.ledger.miners.get(history.miner) if review.ledger is not None else None
    writer.render(f"{base}/index.html", "miner.html", h=history, totals=totals, weight=weights.get(history.miner))
