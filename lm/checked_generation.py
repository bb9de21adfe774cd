"""Checked generation: call, validate, retry; a failure is an explicit value.

From ``../shared/seeds/generate_checked.md``: ``generate_checked(transform,
system, prompt, retries=5)`` calls the model, passes the text through
``transform`` and retries until it succeeds or the attempts run out. Where
the seed returns ``(value, success)`` pairs and a bare ``None`` on failure,
here ``transform`` returns the value or raises ``CheckFailed`` (a
``ValueError``) saying what was wrong, and the result is a ``Checked``:
``ok`` with ``value``, or not ok with every attempt's raw output and error.
With ``feedback`` on, each retry tells the model what was wrong with its last
answer.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from lm.client import ChatClient, Completion, Message, Usage
from lm.errors import BudgetSpent, LMError

log = logging.getLogger(__name__)

T = TypeVar("T")


class CheckFailed(ValueError):
    """Raised by a transform: the output is not acceptable; the message says why."""


@dataclass(frozen=True)
class Attempt:
    raw: str | None  # None when the call itself failed
    error: str | None  # why the output was rejected or the call failed; None on success
    usage: Usage


@dataclass(frozen=True)
class Checked(Generic[T]):
    ok: bool
    value: T | None
    attempts: tuple[Attempt, ...]

    @property
    def raw_outputs(self) -> tuple[str | None, ...]:
        return tuple(a.raw for a in self.attempts)

    @property
    def usage(self) -> Usage:
        return Usage(
            sum(a.usage.prompt_tokens for a in self.attempts), sum(a.usage.completion_tokens for a in self.attempts)
        )

    def unwrap(self) -> T:
        if not self.ok:
            raise CheckFailed(
                f"no valid output after {len(self.attempts)} attempt(s): "
                + "; ".join(str(a.error) for a in self.attempts)
            )
        return self.value  # type: ignore[return-value]


def generate_checked(
    client: ChatClient,
    transform: Callable[[str], T],
    system: str | None,
    prompt: str,
    retries: int = 5,
    *,
    feedback: bool = True,
    max_tokens: int = 256,
    temperature: float = 0.0,
    seed: int | None = None,
    prefill: str | None = None,
    complete: Callable[..., Completion] | None = None,
) -> Checked[T]:
    """Call the model up to ``retries`` times until ``transform`` accepts its output.

    Call failures (HTTP errors, timeouts) count as attempts too. Later
    attempts use ``seed + attempt`` so a deterministic server does not repeat
    the same rejected answer.
    """
    if retries < 1:
        raise ValueError("retries must be >= 1")
    messages: list[Message] = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt}
    ]
    call = complete or client.complete
    attempts: list[Attempt] = []
    for i in range(retries):
        try:
            completion = call(
                messages,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=None if seed is None else seed + i,
                prefill=prefill,
            )
        except LMError as exc:
            attempts.append(Attempt(None, f"call failed: {exc}", Usage()))
            if isinstance(exc, BudgetSpent):  # no time left for this stage: another attempt cannot run either
                break
            log.warning("LM call failed (attempt %d/%d): %s", i + 1, retries, exc)
            continue
        try:
            value = transform(completion.text)
        except CheckFailed as exc:
            attempts.append(Attempt(completion.text, str(exc), completion.usage))
            if feedback:
                messages = messages[: 2 if system else 1] + [
                    {"role": "assistant", "content": completion.text},
                    {
                        "role": "user",
                        "content": f"That answer was not usable: {exc}. Answer again, following the "
                        f"required format exactly.",
                    },
                ]
            continue
        attempts.append(Attempt(completion.text, None, completion.usage))
        return Checked(True, value, tuple(attempts))
    return Checked(False, None, tuple(attempts))


_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    """Remove <think>...</think> blocks (and an unterminated trailing one)."""
    text = _THINK.sub("", text)
    open_at = text.lower().find("<think>")
    return text[:open_at] if open_at >= 0 else text


def parse_json(text: str) -> Any:
    """JSON from a model's answer: think blocks and code fences stripped, else the outermost {...}."""
    body = strip_think(text).strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        pass
    start, end = body.find("{"), body.rfind("}")
    if start >= 0 and end > start:
        try:
            return json.loads(body[start : end + 1])
        except json.JSONDecodeError as exc:
            raise CheckFailed(f"not valid JSON ({exc.msg})") from None
    raise CheckFailed("no JSON object found")


def json_with_keys(
    required: Sequence[str], types: dict[str, type | tuple[type, ...]] | None = None
) -> Callable[[str], dict[str, Any]]:
    """A transform: a JSON object holding every ``required`` key (of the given types)."""

    def transform(text: str) -> dict[str, Any]:
        value = parse_json(text)
        if not isinstance(value, dict):
            raise CheckFailed(f"expected a JSON object, got {type(value).__name__}")
        missing = [k for k in required if k not in value]
        if missing:
            raise CheckFailed(f"missing key(s): {', '.join(missing)}")
        for key, typ in (types or {}).items():
            if key in value and not isinstance(value[key], typ):
                raise CheckFailed(f"key {key!r} has the wrong type ({type(value[key]).__name__})")
        return value

    return transform


def generate_json(
    client: ChatClient,
    system: str | None,
    prompt: str,
    retries: int = 5,
    *,
    required: Sequence[str] = (),
    types: dict[str, type | tuple[type, ...]] | None = None,
    **kwargs: Any,
) -> Checked[dict[str, Any]]:
    """``generate_checked`` with the JSON transform (the seed's ``generate_json``)."""
    return generate_checked(client, json_with_keys(required, types), system, prompt, retries, **kwargs)


def int_in_range(lo: int, hi: int) -> Callable[[str], int]:
    """A transform: the answer is a single integer in [lo, hi] (think blocks ignored)."""

    def transform(text: str) -> int:
        body = strip_think(text).strip()
        if not re.fullmatch(r"[+-]?\d+", body):
            raise CheckFailed(f"expected a single integer from {lo} to {hi}")
        value = int(body)
        if not lo <= value <= hi:
            raise CheckFailed(f"{value} is outside {lo}..{hi}")
        return value

    return transform
