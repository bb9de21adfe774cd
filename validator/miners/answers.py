"""What a miner answered (pure): ``MinerAnswer``, its ``FailureReason``, and the parsing of a chat completion.

``parse_chat_completion`` turns a body into an answer or a failure with its
reason; ``logprob_confidence`` reads a confidence from token log-probabilities;
``to_response`` gives the consensus core its ``Response`` (a failure becomes
``error`` = the reason, which never enters consensus and never earns);
``outcome_counts`` is what the daemon's quorum reads. Formulas and the failure
table are in docs/miners.md.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from consensus.types import Response


class FailureReason(str, enum.Enum):
    """Why a miner's answer is not usable (docs/miners.md has the table)."""

    TIMEOUT = "timeout"  # no complete answer within the miner's timeout after sending (or connecting took longer)
    CONNECTION_REFUSED = "connection_refused"  # could not connect, or the connection was reset/closed
    HTTP_ERROR = "http_error"  # a status other than 2xx (redirects are not followed)
    MALFORMED_PAYLOAD = "malformed_payload"  # not JSON, not UTF-8, not the chat completion shape
    EMPTY = "empty"  # the answer is empty or whitespace
    OVERSIZED = "oversized"  # the body or the answer is over its cap
    NON_TEXT = "non_text"  # the content is not a string (a list of parts, a number, only tool calls...)
    DEADLINE = "deadline"  # the round's deadline came first
    REFUSED = "refused"  # HTTP 401 to a signed request: the miner refused the validator's signature (docs/chain.md)


@dataclass(frozen=True)
class MinerAnswer:
    """One miner's outcome in a round.

    ``text`` is the answer ("" when failed); ``latency_s`` runs from the request being
    written to the socket to the last body byte read (for failures: to the failure);
    ``confidence`` is ``logprob_confidence`` of the answer's tokens, None without them.
    ``detail`` is a short human note ("HTTP 500", "connection refused"); it never holds
    the key or text the miner chose. ``entity`` is the spec's (who runs the miner).
    ``received_s``: when the last byte was read, by the validator's clock, from the round's
    start (None: not taken); which of two answers arrived first reads it (``Response.received_s``).
    """

    hotkey: str
    text: str
    latency_s: float
    confidence: float | None = None
    failure: FailureReason | None = None
    detail: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    entity: str | None = None
    received_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


def logprob_confidence(logprobs: Any) -> float | None:
    """exp(mean token log-probability): the geometric mean of the answer's token probabilities.

    ``logprobs`` is ``choices[0].logprobs`` of an OpenAI chat completion (its ``content``
    list of ``{"token", "logprob"}``). The result is in [0, 1]: 1 when every token had
    probability 1, and it does not shrink with length the way a joint probability would.
    Returns None when there are no usable log-probabilities (absent, empty, a non-number,
    non-finite, or clearly positive); values up to 1e-6 above 0 are rounding and count as 0.
    """
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content:
        return None
    total = 0.0
    for item in content:
        value = item.get("logprob") if isinstance(item, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value > 1e-6:
            return None
        total += min(float(value), 0.0)
    return min(1.0, max(0.0, math.exp(total / len(content))))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _content(data: Any) -> tuple[str | None, FailureReason | None, str]:
    """The message content of a decoded body, or why there is none usable (before the length caps)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, FailureReason.MALFORMED_PAYLOAD, "no choices[0] object"
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return None, FailureReason.MALFORMED_PAYLOAD, "no choices[0].message object"
    if "content" not in message:
        return None, FailureReason.MALFORMED_PAYLOAD, "choices[0].message has no content"
    content = message["content"]
    if content is None:
        others = sorted(k for k in ("tool_calls", "function_call", "refusal", "audio") if message.get(k))
        if others:
            return None, FailureReason.NON_TEXT, f"no text content, only {', '.join(others)}"
        return None, FailureReason.EMPTY, "content is null"
    if not isinstance(content, str):
        return None, FailureReason.NON_TEXT, f"content is a {type(content).__name__}, not a string"
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        return None, FailureReason.MALFORMED_PAYLOAD, "content has an unpaired surrogate escape"
    return content, None, ""


def parse_chat_completion(
    hotkey: str, body: bytes, latency_s: float, *, max_answer_chars: int, entity: str | None = None
) -> MinerAnswer:
    """Validate one chat completion body into an answer (or a failure with its reason)."""

    def failed(reason: FailureReason, detail: str) -> MinerAnswer:
        return MinerAnswer(hotkey=hotkey, text="", latency_s=latency_s, failure=reason, detail=detail, entity=entity)

    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return failed(FailureReason.MALFORMED_PAYLOAD, "body is not UTF-8")
    except (json.JSONDecodeError, RecursionError):
        return failed(FailureReason.MALFORMED_PAYLOAD, "body is not valid JSON")
    content, reason, detail = _content(data)
    if content is None:
        return failed(reason or FailureReason.MALFORMED_PAYLOAD, detail)
    if len(content) > max_answer_chars:
        return failed(
            FailureReason.OVERSIZED, f"answer of {len(content):,} characters, over the cap of {max_answer_chars:,}"
        )
    if not content.strip():
        return failed(FailureReason.EMPTY, "answer is empty" if not content else "answer is only whitespace")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return MinerAnswer(
        hotkey=hotkey,
        text=content,
        latency_s=latency_s,
        confidence=logprob_confidence(data["choices"][0].get("logprobs")),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        entity=entity,
    )


def to_response(answer: MinerAnswer) -> Response:
    """The consensus core's view of an answer; a failure becomes ``error`` = its reason's value (no text, no
    confidence)."""
    failure = answer.failure
    return Response(
        miner=answer.hotkey,
        text="" if failure is not None else answer.text,
        latency_s=answer.latency_s,
        confidence=None if failure is not None else answer.confidence,
        error=None if failure is None else failure.value,
        entity=answer.entity,
        received_s=answer.received_s,
    )


def outcome_counts(answers: Sequence[MinerAnswer]) -> dict[str, int]:
    """``{"ok": n, "timeout": n, ...}`` with every reason present (quorum reads "ok")."""
    counts = {"ok": 0, **{reason.value: 0 for reason in FailureReason}}
    for answer in answers:
        counts["ok" if answer.failure is None else answer.failure.value] += 1
    return counts
