"""The pool's side of the OpenAI chat API: completion payloads, synthetic log-probabilities, error bodies."""

from __future__ import annotations

import re
import secrets
import time
from typing import Any

from aiohttp import web


def fill(template: str, prompt: str, name: str) -> str:
    """``template`` with ``{prompt}`` (first 200 characters) and ``{name}`` filled in."""
    # replace, not format: prompts are free text with braces of their own
    return template.replace("{prompt}", prompt.strip()[:200]).replace("{name}", name)


def token_logprobs(text: str, logprob: float) -> dict[str, Any]:
    """``choices[0].logprobs`` giving every word-ish token of ``text`` the same log-probability."""
    tokens = re.findall(r"\S+\s*|\s+", text)
    return {
        "content": [
            {"token": t, "logprob": logprob, "bytes": list(t.encode("utf-8")), "top_logprobs": []} for t in tokens
        ]
    }


def completion(
    model: str, content: Any, *, logprobs: dict[str, Any] | None = None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A chat completion body; usage counts words when not given."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
    if logprobs is not None:
        choice["logprobs"] = logprobs
    words = len(content.split()) if isinstance(content, str) else 0
    return {
        "id": new_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": usage or {"prompt_tokens": 0, "completion_tokens": words, "total_tokens": words},
    }


def new_id() -> str:
    return f"chatcmpl-{secrets.token_hex(6)}"


def error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "sim_error"}}, status=status)
