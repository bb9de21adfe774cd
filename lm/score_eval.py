"""How well LM_SCORE separates yes from no on a labeled set: the numbers behind ``validator lm eval``.

Items are JSON lines ``{"content": [...], "question": "...", "answer": true|false}``
(an ``id`` is optional). For every mode the score of each item is kept with
its continuous value (``expected`` where the mode has one: logprob's
expectation, yesno's 10 * calibrated P(yes); else the integer score), and:

- accuracy: the value is on the answer's side of 5 (> 5 for yes, < 5 for
  no); exactly 5 counts as wrong (undecided is not an answer);
- AUROC of the value between yes and no items (ties count half) with a
  percentile bootstrap interval (resampling items, seeded);
- expected calibration error: value / 10 read as P(yes), 10 equal-width bins;
- the share of fallbacks to 5, the share of scores on the single most common
  integer ("stuck"), and seconds per item.

The metric functions are pure; ``run_mode`` is the only one that calls the LM.
"""

from __future__ import annotations

import io
import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lm.lm_score import lm_score_detailed
from storage.files import FileFormatError, read_jsonl


class EvalDataError(ValueError):
    """A labeled item is malformed; the message names the file and line."""


@dataclass(frozen=True)
class Item:
    id: str
    content: tuple[str, ...]
    question: str
    answer: bool


def read_items(path: str | Path) -> list[Item]:
    path = Path(path)
    items: list[Item] = []
    try:
        rows = read_jsonl(path, objects=True)
    except FileFormatError as exc:
        raise EvalDataError(str(exc)) from None
    for number, obj in rows:
        where = f"{path}:{number}"
        content = obj.get("content")
        if isinstance(content, str):
            content = [content]
        if not isinstance(content, list) or not content or not all(isinstance(c, str) for c in content):
            raise EvalDataError(f"{where}: 'content' must be a non-empty list of strings")
        question = obj.get("question")
        if not isinstance(question, str) or not question.strip():
            raise EvalDataError(f"{where}: 'question' must be a non-empty string")
        answer = obj.get("answer")
        if not isinstance(answer, bool):
            raise EvalDataError(f"{where}: 'answer' must be true or false, got {answer!r}")
        items.append(Item(str(obj.get("id", f"line-{number}")), tuple(content), question, answer))
    if not items:
        raise EvalDataError(f"{path}: no items")
    return items


@dataclass(frozen=True)
class Scored:
    item_id: str
    answer: bool
    score: int
    value: float  # continuous 0..10 (see module docstring)
    fallback: bool
    seconds: float
    log_odds: float | None = None


def auroc(values: Sequence[float], labels: Sequence[bool]) -> float:
    """P(value of a yes item > value of a no item), ties counting half; nan without both labels."""
    v = np.asarray(values, dtype=float)
    y = np.asarray(labels, dtype=bool)
    pos, neg = v[y], v[~y]
    if len(pos) == 0 or len(neg) == 0:
        return math.nan
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def bootstrap_auroc(
    values: Sequence[float], labels: Sequence[bool], *, rounds: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of the AUROC over item resamples (resamples with one label are skipped)."""
    v = np.asarray(values, dtype=float)
    y = np.asarray(labels, dtype=bool)
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(rounds):
        idx = rng.integers(0, len(v), len(v))
        a = auroc(v[idx], y[idx])
        if not math.isnan(a):
            stats.append(a)
    if not stats:
        return math.nan, math.nan
    lo, hi = np.quantile(stats, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def accuracy(values: Sequence[float], labels: Sequence[bool]) -> float:
    right = [(v > 5) if y else (v < 5) for v, y in zip(values, labels)]
    return sum(right) / len(right)


def reliability(values: Sequence[float], labels: Sequence[bool], bins: int = 10) -> list[tuple[float, float, int]]:
    """(mean predicted P(yes), observed share of yes, count) per non-empty bin of value / 10."""
    p = np.clip(np.asarray(values, dtype=float) / 10.0, 0.0, 1.0)
    y = np.asarray(labels, dtype=float)
    which = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        mask = which == b
        if mask.any():
            out.append((float(p[mask].mean()), float(y[mask].mean()), int(mask.sum())))
    return out


def calibration_error(values: Sequence[float], labels: Sequence[bool], bins: int = 10) -> float:
    """Expected calibration error: sum over bins of |bin| / n * |mean predicted - observed|."""
    n = len(values)
    return sum(count / n * abs(pred - obs) for pred, obs, count in reliability(values, labels, bins))


@dataclass(frozen=True)
class ModeReport:
    model: str
    mode: str
    n: int
    accuracy: float
    auroc: float
    auroc_ci: tuple[float, float]
    ece: float
    fallback_share: float
    stuck_share: float  # share of items on the most common integer score
    stuck_value: int
    seconds_median: float
    seconds_mean: float
    scores: tuple[Scored, ...] = field(default=(), repr=False)

    def row(self) -> dict[str, object]:
        return {
            "model": self.model,
            "mode": self.mode,
            "n": self.n,
            "accuracy": round(self.accuracy, 4),
            "auroc": round(self.auroc, 4),
            "auroc_ci": [round(x, 4) for x in self.auroc_ci],
            "ece": round(self.ece, 4),
            "fallback_share": round(self.fallback_share, 4),
            "stuck_share": round(self.stuck_share, 4),
            "stuck_value": self.stuck_value,
            "seconds_median": round(self.seconds_median, 3),
            "seconds_mean": round(self.seconds_mean, 3),
        }


def summarise(model: str, mode: str, scored: Sequence[Scored], *, seed: int = 0) -> ModeReport:
    if not scored:
        raise ValueError("no scored items")
    values = [s.value for s in scored]
    labels = [s.answer for s in scored]
    counts: dict[int, int] = {}
    for s in scored:
        counts[s.score] = counts.get(s.score, 0) + 1
    stuck_value, stuck = max(sorted(counts.items()), key=lambda kv: kv[1])
    seconds = [s.seconds for s in scored]
    return ModeReport(
        model=model,
        mode=mode,
        n=len(scored),
        accuracy=accuracy(values, labels),
        auroc=auroc(values, labels),
        auroc_ci=bootstrap_auroc(values, labels, seed=seed),
        ece=calibration_error(values, labels),
        fallback_share=sum(s.fallback for s in scored) / len(scored),
        stuck_share=stuck / len(scored),
        stuck_value=stuck_value,
        seconds_median=statistics.median(seconds),
        seconds_mean=statistics.fmean(seconds),
        scores=tuple(scored),
    )


def rescored(scored: Sequence[Scored], score_of: Callable[[float], tuple[int, float]]) -> list[Scored]:
    """The same yesno answers under another calibration (no LM call): ``score_of(log_odds)``."""
    out = []
    for s in scored:
        if s.log_odds is None:
            out.append(s)
            continue
        score, value = score_of(s.log_odds)
        out.append(Scored(s.item_id, s.answer, score, value, s.fallback, s.seconds, s.log_odds))
    return out


def run_mode(client, items: Sequence[Item], config, *, on_item: Callable[[int], None] | None = None) -> list[Scored]:
    """Score every item in one mode, one after another (so seconds per item are a single call's cost)."""

    out = []
    for i, item in enumerate(items):
        start = time.perf_counter()
        result = lm_score_detailed(client, *item.content, question=item.question, config=config)
        seconds = time.perf_counter() - start
        value = result.expected if result.expected is not None else float(result.score)
        out.append(Scored(item.id, item.answer, result.score, value, result.fallback, seconds, result.log_odds))
        if on_item:
            on_item(i + 1)
    return out


def render_reliability(reports: Sequence[ModeReport]) -> bytes:
    """A reliability plot (predicted P(yes) against observed share of yes) as PNG bytes."""

    # lazy: start-up cost, matplotlib takes 1.7 s to import
    import matplotlib

    matplotlib.use("Agg")
    # lazy: start-up cost, matplotlib takes 1.7 s to import
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 6), dpi=100)
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect calibration")
    for rep in reports:
        points = reliability([s.value for s in rep.scores], [s.answer for s in rep.scores])
        if points:
            xs, ys, ns = zip(*points)
            ax.plot(xs, ys, marker="o", label=f"{rep.model} {rep.mode} (ECE {rep.ece:.3f}, AUROC {rep.auroc:.2f})")
            for x, y, n in points:
                ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=6, color="0.4")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted P(yes) = score / 10")
    ax.set_ylabel("observed share of yes")
    ax.set_title("LM_SCORE reliability")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def markdown_table(reports: Sequence[ModeReport]) -> str:
    lines = [
        "| model | mode | n | accuracy | AUROC [95% CI] | ECE | fallbacks | on one value | s/item (median) |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in reports:
        lines.append(
            f"| {r.model} | {r.mode} | {r.n} | {r.accuracy:.3f} | {r.auroc:.3f} "
            f"[{r.auroc_ci[0]:.3f}, {r.auroc_ci[1]:.3f}] | {r.ece:.3f} | {r.fallback_share:.1%} | "
            f"{r.stuck_share:.1%} ({r.stuck_value}) | {r.seconds_median:.2f} |"
        )
    return "\n".join(lines)


def write_report(out: str | Path, reports: Sequence[ModeReport]) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(
        json.dumps(
            {
                "modes": [r.row() for r in reports],
                "items": {
                    f"{r.model} {r.mode}": [
                        {
                            "id": s.item_id,
                            "answer": s.answer,
                            "score": s.score,
                            "value": round(s.value, 4),
                            "fallback": s.fallback,
                            "seconds": round(s.seconds, 3),
                            "log_odds": s.log_odds,
                        }
                        for s in r.scores
                    ]
                    for r in reports
                },
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    (out / "report.md").write_text(markdown_table(reports) + "\n", encoding="utf-8")
    (out / "reliability.png").write_bytes(render_reliability(reports))
    return out
