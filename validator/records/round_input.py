"""Reading rounds from JSON Lines: the public input contract (docs/round-format.md).

Parsing validates everything a miner could get wrong or abuse and raises
``RoundError`` naming the line, the round and the field. A bad line never
stops the others from being read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from consensus.errors import RoundError
from consensus.params import check_fields, param
from consensus.types import Response, Round


@dataclass(frozen=True)
class InputLimits:
    min_responses: int = param(2, "Rounds with fewer responses are rejected (consensus needs a pair).", lo=1)
    max_responses: int = param(4096, "Rounds with more responses are rejected.", lo=1)
    max_response_chars: int = param(100_000, "A response text longer than this rejects the round.", lo=1)
    max_prompt_chars: int = param(100_000, "A prompt longer than this rejects the round.", lo=1)
    max_id_chars: int = param(256, "Longest round or miner id accepted.", lo=1)
    max_line_bytes: int = param(64 * 1024 * 1024, "Longest JSON line read.", lo=1)

    def __post_init__(self) -> None:
        check_fields(self, "input")


def _text(obj: dict[str, Any], key: str, where: str, field: str, limit: int, *, required: bool = True) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            raise RoundError(where, field, "missing")
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise RoundError(where, field, f"must be a string, got {type(value).__name__}")
    if len(value) > limit:
        raise RoundError(where, field, f"{len(value):,} characters, more than the limit of {limit:,}")
    return value


def _number(
    obj: dict[str, Any], key: str, where: str, field: str, lo: float, hi: float | None, *, required: bool
) -> float | None:
    if key not in obj or obj[key] is None:
        if required:
            raise RoundError(where, field, "missing")
        return None
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RoundError(where, field, f"must be a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise RoundError(where, field, f"must be finite, got {value}")
    if value < lo or (hi is not None and value > hi):
        bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise RoundError(where, field, f"must be {bound}, got {value}")
    return value


def parse_round(obj: Any, where: str, limits: InputLimits | None = None) -> Round:
    """Validate one decoded JSON object into a ``Round``; ``where`` names its origin (e.g. "line 3")."""
    limits = limits or InputLimits()
    if not isinstance(obj, dict):
        raise RoundError(where, None, f"a round must be a JSON object, got {type(obj).__name__}")
    round_id = _text(obj, "round_id", where, "round_id", limits.max_id_chars)
    assert round_id is not None
    if not round_id.strip():
        raise RoundError(where, "round_id", "empty")
    where = f"{where} (round {round_id!r})"
    prompt = _text(obj, "prompt", where, "prompt", limits.max_prompt_chars)
    reference = _text(obj, "reference", where, "reference", limits.max_response_chars, required=False)
    raw = obj.get("responses")
    if raw is None:
        raise RoundError(where, "responses", "missing")
    if not isinstance(raw, list):
        raise RoundError(where, "responses", f"must be a list, got {type(raw).__name__}")
    if len(raw) < limits.min_responses:
        raise RoundError(where, "responses", f"{len(raw)} response(s); a round needs at least {limits.min_responses}")
    if len(raw) > limits.max_responses:
        raise RoundError(where, "responses", f"{len(raw)} responses, more than the limit of {limits.max_responses}")
    responses = []
    seen: dict[str, int] = {}
    for i, item in enumerate(raw):
        field = f"responses[{i}]"
        if not isinstance(item, dict):
            raise RoundError(where, field, f"must be an object, got {type(item).__name__}")
        miner = _text(item, "miner", where, f"{field}.miner", limits.max_id_chars)
        assert miner is not None
        if miner in seen:
            raise RoundError(where, f"{field}.miner", f"duplicate miner id {miner!r} (also responses[{seen[miner]}])")
        seen[miner] = i
        text = _text(item, "text", where, f"{field}.text", limits.max_response_chars)
        latency = _number(item, "latency_s", where, f"{field}.latency_s", 0.0, None, required=True)
        confidence = _number(item, "confidence", where, f"{field}.confidence", 0.0, 1.0, required=False)
        # when the validator received it (its own clock, from the round's first request): who came first
        received = _number(item, "received_s", where, f"{field}.received_s", 0.0, None, required=False)
        error = _text(item, "error", where, f"{field}.error", limits.max_id_chars, required=False)
        # who runs the miner (operator, coldkey or address): one entity is one voice and one payout
        entity = _text(item, "entity", where, f"{field}.entity", limits.max_id_chars, required=False)
        assert text is not None and latency is not None
        responses.append(
            Response(
                miner=miner,
                text=text,
                latency_s=latency,
                confidence=confidence,
                error=error or None,
                entity=entity or None,
                received_s=received,
            )
        )
    assert prompt is not None
    return Round(round_id=round_id, prompt=prompt, responses=tuple(responses), reference=reference)


def round_to_json(round_: Round) -> dict[str, Any]:
    """The input-contract form of a round (what ``parse_round`` reads back)."""
    responses = []
    for r in round_.responses:
        item: dict[str, Any] = {"miner": r.miner, "text": r.text, "latency_s": r.latency_s}
        if r.confidence is not None:
            item["confidence"] = r.confidence
        if r.error is not None:
            item["error"] = r.error
        if r.entity is not None:
            item["entity"] = r.entity
        if r.received_s is not None:
            item["received_s"] = r.received_s
        responses.append(item)
    return {"round_id": round_.round_id, "prompt": round_.prompt, "reference": round_.reference, "responses": responses}


@dataclass(frozen=True)
class LineResult:
    line: int
    round: Round | None
    error: RoundError | None


def read_rounds(path: str | Path, limits: InputLimits | None = None) -> Iterator[LineResult]:
    """Every non-blank line of a JSONL file as a round or an error; later duplicates of a round id are errors."""
    limits = limits or InputLimits()
    first_seen: dict[str, int] = {}
    with open(path, "rb") as fh:
        if fh.read(2) == b"\x1f\x8b":  # one clear line, not a "not UTF-8" per compressed line
            yield LineResult(1, None, RoundError("line 1", None, "a gzip-compressed file: gunzip it first"))
            return
        fh.seek(0)
        for number, raw in enumerate(fh, start=1):
            where = f"line {number}"
            if len(raw) > limits.max_line_bytes:
                yield LineResult(
                    number,
                    None,
                    RoundError(where, None, f"line of {len(raw):,} bytes exceeds {limits.max_line_bytes:,}"),
                )
                continue
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                yield LineResult(number, None, RoundError(where, None, f"not UTF-8: {exc.reason} at byte {exc.start}"))
                continue
            except json.JSONDecodeError as exc:
                yield LineResult(
                    number, None, RoundError(where, None, f"malformed JSON: {exc.msg} at column {exc.colno}")
                )
                continue
            try:
                round_ = parse_round(obj, where, limits)
            except RoundError as exc:
                yield LineResult(number, None, exc)
                continue
            if round_.round_id in first_seen:
                yield LineResult(
                    number,
                    None,
                    RoundError(
                        f"{where} (round {round_.round_id!r})",
                        "round_id",
                        f"duplicate round id, first at line {first_seen[round_.round_id]}",
                    ),
                )
                continue
            first_seen[round_.round_id] = number
            yield LineResult(number, round_, None)
