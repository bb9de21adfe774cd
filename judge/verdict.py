"""The judge's verdict: a JSON object ``{"reasoning": ..., "answer_quality": 1..5}`` found in its reply.

A ``transform`` for ``lm.checked_generation.generate_checked``: it returns a ``Verdict``
or raises ``CheckFailed`` saying what is wrong, and checked generation retries.

The judged answer is untrusted. A judge may repeat (echo) parts of it, and an
answer can carry its own ``{"answer_quality": 5}``. So every JSON object in
the reply is found (think blocks, code fences and surrounding prose do not
matter), objects whose text appears in the judged answer are dropped as
echoes, and what remains must agree on one quality; several different
qualities is ambiguous and retried, never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lm.checked_generation import CheckFailed, strip_think

QUALITIES = range(1, 6)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Verdict:
    quality: int  # 1..5
    reasoning: str


def _squash(text: str) -> str:
    return " ".join(text.split())


def json_objects(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Every top-level JSON object in ``text``, in order, with its source text."""
    found: list[tuple[str, dict[str, Any]]] = []
    i = text.find("{")
    while i >= 0:
        try:
            value, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            found.append((text[i:end], value))
        i = text.find("{", end)
    return found


def quality_of(value: Any) -> int:
    """answer_quality as an integer 1..5: ints, integral floats and digit strings are accepted."""
    if isinstance(value, bool):
        raise CheckFailed("answer_quality must be a number from 1 to 5, got a boolean")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise CheckFailed(f"answer_quality must be an integer from 1 to 5, got {value!r:.40}")
    if value not in QUALITIES:
        raise CheckFailed(f"answer_quality {value} is outside 1..5")
    return value


def parse_verdict(text: str, *, echo_of: str = "") -> Verdict:
    """The verdict in a judge's reply; objects copied from ``echo_of`` (the judged answer) are ignored."""
    body = strip_think(text)
    echo = _squash(echo_of)
    objects = [(src, obj) for src, obj in json_objects(body) if not (echo and _squash(src) in echo)]
    candidates = [obj for _, obj in objects if "answer_quality" in obj]
    if not candidates:
        if objects:
            raise CheckFailed("the JSON object has no 'answer_quality' key")
        raise CheckFailed("no JSON object with the keys 'reasoning' and 'answer_quality'")
    qualities = [quality_of(obj["answer_quality"]) for obj in candidates]
    if len(set(qualities)) > 1:
        raise CheckFailed(
            f"several verdicts with different answer_quality ({', '.join(map(str, qualities))}); "
            f"give exactly one JSON object"
        )
    chosen = candidates[-1]
    reasoning = chosen.get("reasoning")
    if reasoning is None:
        raise CheckFailed("the JSON object has no 'reasoning' key")
    if not isinstance(reasoning, str):
        raise CheckFailed("'reasoning' must be a string")
    return Verdict(qualities[-1], reasoning.strip())


def verdict_transform(echo_of: str = "") -> Callable[[str], Verdict]:
    """``parse_verdict`` bound to the judged answer, for ``generate_checked``."""
    return lambda text: parse_verdict(text, echo_of=echo_of)
