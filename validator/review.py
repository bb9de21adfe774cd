"""Reading stored rounds back for review: the HTML report and the notebooks use this, nothing else.

A store (local directory, ``file://``, ``memory://``, ``s3://``) holds, per
round, ``input.json`` (the answers), ``evaluation.json`` (the record) and
``heatmap.png``; a daemon store also holds ``ledger.json``. This module turns
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
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence
from urllib.parse import unquote

from storage import keys, open_store
from storage.base import KeyNotFound, Store, StoreError
from validator.ledger import Ledger, LedgerError, MinerEntry
from validator.terminal import safe

__all__ = ["MinerHistory", "MinerPoint", "PNG", "ResponseRow", "RoundReview", "Skipped", "StoreReview",
           "StoredRound", "Table", "as_store", "excerpt", "ledger_frame", "load_heatmap", "load_round", "load_store",
           "load_texts", "miner_trends", "parse_record", "printable"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with lone surrogates (valid in JSON-escaped input, not in UTF-8) replaced by U+FFFD."""
    return _SURROGATES.sub("\ufffd", text)


# ---- small display values ----------------------------------------------------------------------

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


# ---- views ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResponseRow:
    """One response of a round: its score and parts (0..1, composite 0..100), in/out and reason, pay."""

    index: int
    miner: str
    in_consensus: bool
    reason: str
    detail: str | None
    error: str | None
    latency_s: float | None
    confidence: float | None   # as reported by the miner (or estimated)
    composite: float | None
    alignment: float | None
    quality: float | None
    score_confidence: float | None
    bonus: float | None
    penalty: float | None
    reference: float | None
    emission: int
    share: float | None


@dataclass(frozen=True)
class StoredRound:
    """One evaluated round as the index shows it; ``order`` is its 1-based place in the store's order."""

    round_id: str
    order: int
    sequence: int | None       # daemon rounds only
    started_at: str | None     # daemon rounds only (file replays carry no time)
    prompt: str
    reference: str | None
    status: str                # "ok", "no_quorum" or "replay" (a file replay's record has no status)
    score: float | None
    threshold: float | None
    reached: bool
    note: str
    pool: int
    emitted: int
    responses: tuple[ResponseRow, ...]
    narrative_kind: str
    narrative: str
    has_heatmap: bool
    replays: tuple[str, ...] = ()   # ids of re-evaluations stored beside the record

    @property
    def miners(self) -> int:
        return len(self.responses)

    @property
    def failures(self) -> int:
        return sum(1 for r in self.responses if r.error is not None)

    @property
    def failure_kinds(self) -> dict[str, int]:
        kinds: dict[str, int] = {}
        for r in self.responses:
            if r.error is not None:
                kinds[r.error] = kinds.get(r.error, 0) + 1
        return dict(sorted(kinds.items()))


@dataclass(frozen=True)
class MinerPoint:
    """One miner in one round."""

    round_id: str
    order: int
    composite: float | None
    in_consensus: bool
    reason: str
    emission: int
    latency_s: float | None
    error: str | None


@dataclass(frozen=True)
class MinerHistory:
    """A miner's rounds, in store order, and its totals over them."""

    miner: str
    points: tuple[MinerPoint, ...]

    @property
    def rounds(self) -> int:
        return len(self.points)

    @property
    def answered(self) -> int:
        return sum(1 for p in self.points if p.error is None)

    @property
    def in_consensus(self) -> int:
        return sum(1 for p in self.points if p.in_consensus)

    @property
    def consensus_rate(self) -> float:
        return self.in_consensus / self.rounds if self.points else 0.0

    @property
    def emissions(self) -> int:
        return sum(p.emission for p in self.points)

    @property
    def mean_composite(self) -> float | None:
        scores = [p.composite for p in self.points if p.composite is not None]
        return sum(scores) / len(scores) if scores else None


@dataclass(frozen=True)
class Skipped:
    """A stored object that could not be shown, and why."""

    key: str
    reason: str


@dataclass(frozen=True)
class RoundReview:
    """One round in full: the view, the answers' texts (by response index), the heatmap, the raw record."""

    round: StoredRound
    texts: tuple[str | None, ...]
    heatmap_png: PNG | None
    record: Mapping[str, Any] = field(repr=False)

    @property
    def narrative(self) -> str:
        return self.round.narrative

    def heatmap(self) -> PNG | None:
        return self.heatmap_png

    def answers(self) -> Table:
        """Each answer's text (``None`` when the store lacks it) with its miner and reason."""
        rows = tuple((r.index, r.miner, r.reason, r.error, self.texts[r.index] if r.index < len(self.texts) else None)
                     for r in self.round.responses)
        return Table(("index", "miner", "reason", "error", "text"), rows, title=f"answers of {self.round.round_id}")

    def scores(self) -> Table:
        cols = ("index", "miner", "composite", "alignment", "quality", "confidence", "bonus", "penalty",
                "in_consensus", "reason", "error", "emission", "latency_s")
        rows = tuple((r.index, r.miner, r.composite, r.alignment, r.quality, r.score_confidence, r.bonus, r.penalty,
                      r.in_consensus, r.reason, r.error, r.emission, r.latency_s) for r in self.round.responses)
        return Table(cols, rows, title=f"round {self.round.round_id}")


@dataclass(frozen=True)
class StoreReview:
    """Every readable round of a store, in order, with the stored ledger (daemon stores) if any."""

    rounds: tuple[StoredRound, ...]
    ledger: Ledger | None = None
    skipped: tuple[Skipped, ...] = ()
    pending: tuple[str, ...] = ()   # rounds with an input but no evaluation yet (a daemon mid-round)
    config_alpha: float | None = field(default=None, repr=False)  # the records' moving_average_alpha

    def round(self, round_id: str) -> StoredRound:
        for r in self.rounds:
            if r.round_id == round_id:
                return r
        raise KeyError(round_id)

    def miners(self) -> dict[str, MinerHistory]:
        """Each miner's history, miners sorted by total emissions (highest first), then id."""
        points: dict[str, list[MinerPoint]] = {}
        for rnd in self.rounds:
            for r in rnd.responses:
                points.setdefault(r.miner, []).append(MinerPoint(
                    rnd.round_id, rnd.order, r.composite, r.in_consensus, r.reason, r.emission, r.latency_s, r.error))
        histories = [MinerHistory(m, tuple(p)) for m, p in points.items()]
        histories.sort(key=lambda h: (-h.emissions, h.miner))
        return {h.miner: h for h in histories}

    def rounds_table(self) -> Table:
        """One row per round: place, id, time, prompt, consensus score, reached, status, miners, failures, pay."""
        cols = ("order", "round_id", "started_at", "prompt", "score", "reached", "status", "miners", "failures",
                "emitted")
        rows = tuple((r.order, r.round_id, r.started_at, excerpt(r.prompt, 80), r.score, r.reached, r.status,
                      r.miners, r.failures, r.emitted) for r in self.rounds)
        return Table(cols, rows, title=f"{len(self.rounds)} round(s), "
                                       f"{sum(1 for r in self.rounds if r.reached)} reached consensus")

    def miners_table(self) -> Table:
        """One row per miner over the store's rounds, highest total emissions first."""
        cols = ("miner", "rounds", "answered", "in_consensus", "consensus_rate", "mean_composite", "emissions")
        rows = tuple((h.miner, h.rounds, h.answered, h.in_consensus, h.consensus_rate, h.mean_composite, h.emissions)
                     for h in self.miners().values())
        return Table(cols, rows, title=f"{len(rows)} miner(s)")

    def ledger_trajectory(self) -> list[Ledger]:
        """The ledger after each round, rebuilt from the records (the EMA alpha of the stored ledger,
        else of the first record's configuration, else 0.1)."""
        ledger = Ledger(alpha=self._alpha())
        out = []
        for i, rnd in enumerate(self.rounds, start=1):
            entries = [MinerEntry(miner=r.miner, composite=r.composite or 0.0, in_consensus=r.in_consensus,
                                  emission=r.emission, failed=r.error is not None) for r in rnd.responses]
            ledger = ledger.apply(i, rnd.round_id, entries, no_quorum=rnd.status == "no_quorum")
            out.append(ledger)
        return out

    def _alpha(self) -> float:
        if self.ledger is not None:
            return self.ledger.alpha
        return self.config_alpha if self.config_alpha is not None else 0.1

    def ledger_table(self) -> Table:
        """Per-miner totals: the stored ledger when there is one, else rebuilt from the records."""
        if self.ledger is not None:
            ledger, source = self.ledger, "stored ledger.json"
        else:
            trajectory = self.ledger_trajectory()
            ledger, source = (trajectory[-1] if trajectory else Ledger()), "rebuilt from the round records"
        weights = ledger.weights()
        cols = ("miner", "rounds", "answered", "in_consensus", "consensus_rate", "emissions", "ema", "weight",
                "last_round")
        rows = []
        for miner, m in sorted(ledger.miners.items(), key=lambda kv: (-kv[1].emissions, kv[0])):
            rows.append((miner, m.rounds, m.answered, m.in_consensus, m.in_consensus / m.rounds if m.rounds else 0.0,
                         m.emissions, m.ema, weights.get(miner, 0.0), m.last_round))
        return Table(cols, tuple(rows), title=f"ledger ({source}): {ledger.rounds} round(s), "
                                              f"{ledger.no_quorum} without quorum, {ledger.emitted:,} emitted")


# ---- reading -------------------------------------------------------------------------------------

def as_store(store: Store | str) -> Store:
    """``store`` itself, or the store its URI names (``storage.open_store``)."""
    return open_store(store) if isinstance(store, str) else store


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: Any) -> str | None:
    """A display string (never an id: ids stay exact, they name store keys)."""
    return printable(value) if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def excerpt(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1].rstrip() + "\u2026"


def _natural(text: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def _response_row(i: int, item: Any) -> ResponseRow:
    item = _dict(item)
    score = _dict(item.get("score"))
    emissions = _dict(item.get("emissions"))
    index = item.get("index")
    return ResponseRow(
        index=index if isinstance(index, int) and not isinstance(index, bool) else i,
        miner=_str(item.get("miner")) or "", in_consensus=item.get("in_consensus") is True,
        reason=_text(item.get("reason")) or "", detail=_text(item.get("detail")), error=_text(item.get("error")),
        latency_s=_num(item.get("latency_s")), confidence=_num(item.get("confidence")),
        composite=_num(score.get("composite")), alignment=_num(score.get("alignment")),
        quality=_num(score.get("quality")), score_confidence=_num(score.get("confidence")),
        bonus=_num(score.get("bonus")), penalty=_num(score.get("penalty")), reference=_num(score.get("reference")),
        emission=_int(emissions.get("amount")), share=_num(emissions.get("share")))


def parse_record(record: Any, *, order: int = 0, replays: Sequence[str] = ()) -> StoredRound:
    """The view of one evaluation record (``validator.round.build_record``); ``ValueError`` if it is not one."""
    if not isinstance(record, dict) or not isinstance(record.get("round_id"), str) \
            or not isinstance(record.get("responses"), list):
        raise ValueError("not an evaluation record (no round_id or responses)")
    consensus = _dict(record.get("consensus"))
    daemon = _dict(record.get("daemon"))
    narrative = _dict(record.get("narrative"))
    emissions = _dict(record.get("emissions"))
    sequence = daemon.get("sequence")
    responses = tuple(_response_row(i, item) for i, item in enumerate(record["responses"]))
    return StoredRound(
        round_id=record["round_id"], order=order,
        sequence=sequence if isinstance(sequence, int) and not isinstance(sequence, bool) else None,
        started_at=_text(daemon.get("started_at")), prompt=_text(record.get("prompt")) or "",
        reference=_text(record.get("reference")), status=_text(record.get("status")) or "replay",
        score=_num(consensus.get("score")), threshold=_num(consensus.get("threshold")),
        reached=consensus.get("reached") is True, note=_text(consensus.get("note")) or "",
        pool=_int(emissions.get("pool")), emitted=sum(r.emission for r in responses),
        responses=responses, narrative_kind=_text(narrative.get("kind")) or "none",
        narrative=_text(narrative.get("text")) or "",
        has_heatmap=isinstance(_dict(record.get("heatmap")).get("key"), str), replays=tuple(replays))


def _load_json(store: Store, key: str) -> Any:
    return json.loads(store.get(key).decode("utf-8"))


def load_store(store: Store | str) -> StoreReview:
    """Every evaluated round of ``store`` (a ``Store`` or a URI), in order; unreadable records are listed in
    ``skipped``, never raised. Raises ``StoreError`` only when the store cannot be listed."""
    store = as_store(store)
    listed = store.list("rounds/")
    records: dict[str, str] = {}        # key segment -> evaluation key
    inputs: set[str] = set()
    replays: dict[str, list[str]] = {}
    for key in listed:
        parts = key.split("/")
        if len(parts) == 3 and parts[2] == "evaluation.json":
            records[parts[1]] = key
        elif len(parts) == 3 and parts[2] == "input.json":
            inputs.add(parts[1])
        elif len(parts) == 5 and parts[2] == "replays" and parts[4] == "evaluation.json":
            replays.setdefault(parts[1], []).append(parts[3])
    rounds: list[StoredRound] = []
    skipped: list[Skipped] = []
    alpha: float | None = None
    for segment, key in records.items():
        try:
            record = _load_json(store, key)
            view = parse_record(record, replays=[_unquote(r) for r in sorted(replays.get(segment, []))])
        except (StoreError, ValueError, UnicodeDecodeError) as exc:
            skipped.append(Skipped(key, f"unreadable: {exc}"))
            continue
        if keys.evaluation(view.round_id) != key:
            skipped.append(Skipped(key, f"the record names round {view.round_id!r}, stored under another key"))
            continue
        if alpha is None:
            alpha = _num(_dict(_dict(record.get("config")).get("daemon")).get("moving_average_alpha"))
        rounds.append(view)
    rank = _replay_order(store)
    rounds.sort(key=lambda r: (0, r.sequence, ()) if r.sequence is not None
                else (1, rank.get(r.round_id, len(rank)), _natural(r.round_id)))
    rounds = [replace(r, order=i) for i, r in enumerate(rounds, start=1)]
    pending = []
    for segment in sorted(inputs - set(records)):
        try:
            doc = _load_json(store, f"rounds/{segment}/input.json")
            rid = doc["round_id"] if isinstance(doc, dict) and isinstance(doc.get("round_id"), str) else None
        except (StoreError, ValueError, UnicodeDecodeError):
            rid = None
        pending.append(rid if rid is not None and keys.round_input(rid) == f"rounds/{segment}/input.json"
                       else _unquote(segment))
    ledger = None
    try:
        ledger = Ledger.from_json(_load_json(store, keys.ledger()))
    except KeyNotFound:
        pass
    except (StoreError, ValueError, UnicodeDecodeError, LedgerError) as exc:
        skipped.append(Skipped(keys.ledger(), f"unreadable: {exc}"))
    return StoreReview(tuple(rounds), ledger, tuple(skipped), tuple(pending), config_alpha=alpha)


def _unquote(segment: str) -> str:
    """A readable form of a key segment (display only; ids are never rebuilt from segments)."""
    return unquote(segment, errors="replace")


def _replay_order(store: Store) -> dict[str, int]:
    """Round id -> place in the file a replay read (``summary.json``'s ``evaluated``); empty without one."""
    try:
        evaluated = _dict(_load_json(store, keys.summary())).get("evaluated")
    except (StoreError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(evaluated, list):
        return {}
    return {rid: i for i, rid in reversed(list(enumerate(evaluated))) if isinstance(rid, str)}


def load_texts(store: Store, stored: StoredRound) -> tuple[str | None, ...]:
    """The answers' texts by response index, from the round's ``input.json`` (``None`` where missing)."""
    texts: list[str | None] = [None] * len(stored.responses)
    try:
        doc = _load_json(store, keys.round_input(stored.round_id))
    except (StoreError, ValueError, UnicodeDecodeError):
        return tuple(texts)
    answers = _dict(doc).get("responses")
    if isinstance(answers, list):
        for row in stored.responses:
            if 0 <= row.index < len(answers) and row.index < len(texts):
                item = _dict(answers[row.index])
                if item.get("miner") == row.miner:
                    texts[row.index] = _text(item.get("text"))
    return tuple(texts)


def load_heatmap(store: Store, stored: StoredRound) -> PNG | None:
    """The round's heatmap PNG, or ``None`` when there is none (or what is stored is not a PNG)."""
    if not stored.has_heatmap:
        return None
    try:
        data = store.get(keys.heatmap(stored.round_id))
    except StoreError:
        return None
    return PNG(data) if data.startswith(PNG_SIGNATURE) else None


def load_round(store: Store | str, round_id: str | None = None) -> RoundReview:
    """One round in full (``round_id=None``: the store's last round). ``KeyError`` if it is not stored."""
    store = as_store(store)
    if round_id is None:
        review = load_store(store)
        if not review.rounds:
            raise KeyError("the store holds no evaluated round")
        round_id = review.rounds[-1].round_id
    try:
        record = _load_json(store, keys.evaluation(round_id))
    except KeyNotFound:
        raise KeyError(round_id) from None
    replays = sorted({_unquote(k.split("/")[3]) for k in store.list(f"rounds/{keys.component(round_id)}/replays/")
                      if k.endswith("/evaluation.json") and k.count("/") == 4})
    stored = parse_record(record, replays=replays)
    return RoundReview(stored, load_texts(store, stored), load_heatmap(store, stored), record)


def ledger_frame(store: Store | str) -> Table:
    """Per-miner ledger totals (rounds, answered, in consensus, emissions, EMA, weight) of ``store``."""
    return load_store(store).ledger_table()


def miner_trends(store: Store | str, *, top: int = 8) -> PNG:
    """Cumulative emissions and EMA score per round of the ``top`` miners by emissions, as a PNG."""
    from validator.report.plots import trends_png

    review = load_store(store)
    trajectory = review.ledger_trajectory()
    miners = list(review.miners())[:top]
    emissions = {m: [s.miners[m].emissions if m in s.miners else 0 for s in trajectory] for m in miners}
    ema = {m: [s.miners[m].ema if m in s.miners else 0.0 for s in trajectory] for m in miners}
    return PNG(trends_png(emissions, ema))
