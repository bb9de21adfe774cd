"""A resumable cache of LM grades, keyed by (prompt, reference, answer, model, scorer).

One JSON object a line, appended as ratings come (a killed job loses at most the line it was
writing; a torn last line is skipped on reading)::

    {"k": "<24 hex digits>", "r": 3.8125, "s": 2.41}   # the expected rating 1..5, the call's seconds
    {"k": "<24 hex digits>", "r": null, "why": "rating tokens hold 0.010 of the answer position"}

The key is the first 24 hex digits of SHA-256 over the JSON list [prompt, reference, answer,
model, scorer]: the text itself is not stored, so the file stays small (about 40 bytes a rating)
and holds no miner text. A rating the LM could not give for a lasting reason (no rating tokens) is
kept with its reason; a call that failed (timeout, server down) is not kept, so a later run asks
again. ``model`` names the weights (the embedded LM's name and sha256 prefix, or a served model's
name); ``scorer`` names the prompt layout (``benchmarks.lm_grade_scorer.SCORER``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

KEY_DIGITS = 24


def rating_key(prompt: str, reference: str | None, answer: str, model: str, scorer: str) -> str:
    blob = json.dumps([prompt, reference or "", answer, model, scorer], ensure_ascii=True)
    return hashlib.sha256(blob.encode("ascii")).hexdigest()[:KEY_DIGITS]


class RatingCache:
    """Ratings in memory, backed by an append-only JSONL file (``path``; None = memory only)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.ratings: dict[str, float | None] = {}
        self.reasons: dict[str, str] = {}
        self.seconds: dict[str, float] = {}
        if self.path is not None and self.path.is_file():
            for key, rating, why, seconds in _read(self.path):
                self.ratings[key] = rating
                if why:
                    self.reasons[key] = why
                if seconds is not None:
                    self.seconds[key] = seconds

    def __contains__(self, key: str) -> bool:
        return key in self.ratings

    def __len__(self) -> int:
        return len(self.ratings)

    def get(self, key: str) -> float | None:
        return self.ratings.get(key)

    def put(self, key: str, rating: float | None, why: str | None = None, seconds: float | None = None) -> None:
        """Keep a rating (or a lasting reason for none) and append it to the file; ``seconds``: the call's time."""
        value = None if rating is None else round(float(rating), 4)
        self.ratings[key] = value
        if why:
            self.reasons[key] = why
        if self.path is None:
            return
        record: dict[str, object] = {"k": key, "r": value}
        if value is None and why:
            record["why"] = why[:200]
        if seconds is not None:
            record["s"] = round(seconds, 2)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=True) + "\n")


def _read(path: Path) -> Iterator[tuple[str, float | None, str | None, float | None]]:
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                key, rating = str(data["k"]), data["r"]
                if rating is not None:
                    rating = float(rating)
            except (ValueError, KeyError, TypeError):
                log.warning("%s:%d: unreadable rating line skipped (a torn write?)", path, number)
                continue
            seconds = data.get("s")
            yield key, rating, data.get("why"), float(seconds) if isinstance(seconds, (int, float)) else None
