"""Fakes for judging tests: a chat client in memory, and an OpenAI-compatible server on loopback.

``FakeServer`` answers each request with ``respond(body) -> step``, a function
of the request rather than a script, so concurrent requests get the right
answers whatever their order. A step is ``{"text": ..., "top": [[token,
logprob], ...] | "positions": [top, ...]}``, ``{"status": 429, "headers":
{...}}`` or ``{"raw": b"..."}``. It also serves llama.cpp's ``/tokenize`` and
``/detokenize`` with a toy tokenizer (one token per character; with
``space_digits`` " 1".." 9" are single tokens too, as in SentencePiece
vocabularies), unless ``tokenize=False``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from lm.client import Completion, TokenLogprob, Usage
from lm.errors import LMError


def toy_tokenize(text: str, space_digits: bool = False, split_digit: str | None = None) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(text):
        if space_digits and text[i] == " " and i + 1 < len(text) and text[i + 1].isdigit():
            out.append((100_000 + int(text[i + 1]), text[i:i + 2]))
            i += 2
            continue
        if split_digit is not None and text[i] == split_digit:  # a tokenizer where this digit is two tokens
            out.extend([(200_000, "<"), (200_001, ">")])
            i += 1
            continue
        out.append((ord(text[i]), text[i]))
        i += 1
    return out


def toy_detokenize(ids: list[int]) -> str:
    return "".join(f" {i - 100_000}" if 100_000 <= i < 100_010 else chr(i) for i in ids)


class FakeServer:
    def __init__(self, respond: Callable[[dict[str, Any]], dict[str, Any]], *, tokenize: bool = True,
                 space_digits: bool = False, split_digit: str | None = None) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with fake._lock:
                    fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if self.path in ("/tokenize", "/detokenize"):
                    if not tokenize:
                        self._send(404, b'{"error": "not found"}')
                    elif self.path == "/tokenize":
                        tokens = toy_tokenize(body["content"], space_digits, split_digit)
                        self._send(200, json.dumps({"tokens": [{"id": i, "piece": p} for i, p in tokens]}).encode())
                    else:
                        self._send(200, json.dumps({"content": toy_detokenize(body["tokens"])}).encode())
                    return
                step = fake.respond(body)
                if "status" in step:
                    self._send(step["status"], json.dumps({"error": {"message": "boom"}}).encode(),
                               step.get("headers"))
                    return
                if "raw" in step:
                    self._send(200, step["raw"])
                    return
                text = step.get("text", "")
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}
                if body.get("logprobs"):
                    positions = step.get("positions") or [step.get("top") or [[text, 0.0]]]
                    choice["logprobs"] = {"content": [{
                        "token": top[0][0], "logprob": top[0][1], "bytes": None,
                        "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in top]}
                        for top in positions]}
                payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                           "choices": [choice], "usage": {"prompt_tokens": step.get("prompt_tokens", 10),
                                                          "completion_tokens": 2, "total_tokens": 12}}
                self._send(200, json.dumps(payload).encode())

            def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def __enter__(self) -> "FakeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def user_text(body_or_messages: Any) -> str:
    messages = body_or_messages["messages"] if isinstance(body_or_messages, dict) else body_or_messages
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


class FunctionClient:
    """A ``ChatClient`` in memory: ``fn(messages, **params)`` returns a Completion, a text, or raises LMError."""

    def __init__(self, fn: Callable[..., Any], name: str = "fake") -> None:
        from lm.client import Meter

        self.fn = fn
        self.name = name
        self.meter = Meter()
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.active = 0
        self.peak = 0  # most calls in flight at once

    def complete(self, messages, *, max_tokens, temperature=0.0, seed=None, top_logprobs=0, prefill=None):
        with self._lock:
            self.calls.append({"messages": list(messages), "max_tokens": max_tokens, "temperature": temperature,
                               "seed": seed, "top_logprobs": top_logprobs, "prefill": prefill})
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            out = self.fn(messages, max_tokens=max_tokens, temperature=temperature, seed=seed,
                          top_logprobs=top_logprobs, prefill=prefill)
        except LMError:
            self.meter.record(None)
            raise
        finally:
            with self._lock:
                self.active -= 1
        if isinstance(out, str):
            out = Completion(out, Usage(10, 2))
        self.meter.record(out)
        return out


def logprob_completion(*positions: list[tuple[str, float]]) -> Completion:
    """A completion whose generated tokens are the first entries of ``positions`` (each a top list)."""
    return Completion("".join(p[0][0] for p in positions), Usage(10, len(positions)),
                      tuple(TokenLogprob(p[0][0], p[0][1], tuple(p)) for p in positions))
