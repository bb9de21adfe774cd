"""The one fake OpenAI-compatible server on loopback, for edge cases a real LM will not produce on demand.

``FakeServer`` answers each POST to ``/v1/chat/completions`` with ``respond(body) -> step``,
a function of the request, so concurrent requests get the right answers whatever
their order; ``FakeOpenAI(script)`` takes the next step of a script per request
instead (the last step repeats). A step is ``{"text": ...}`` (optionally ``"top":
[[token, logprob], ...]`` for the first token's top_logprobs, or ``"positions": [top,
top, ...]`` for several tokens, and ``"prompt_tokens"``), ``{"status": 429,
"headers": {...}}``, ``{"raw": b"not json"}``; ``"sleep": seconds`` delays any of
them. Every request is kept in ``requests`` (path, body, Authorization header).

``FakeServer`` also serves llama.cpp's ``/tokenize`` and ``/detokenize`` with a toy
tokenizer (one token per character; with ``space_digits`` " 1".." 9" are single
tokens too, as in SentencePiece vocabularies), unless ``tokenize=False``.
In-memory fakes (no server): ``lm.fake`` (in the package).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def toy_tokenize(text: str, space_digits: bool = False, split_digit: str | None = None) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(text):
        if space_digits and text[i] == " " and i + 1 < len(text) and text[i + 1].isdigit():
            out.append((100_000 + int(text[i + 1]), text[i : i + 2]))
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
    """The server on loopback; ``respond(body) -> step`` decides each chat answer."""

    def __init__(
        self,
        respond: Callable[[dict[str, Any]], dict[str, Any]],
        *,
        tokenize: bool = True,
        space_digits: bool = False,
        split_digit: str | None = None,
    ) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/health":  # llama.cpp's readiness check
                    self._send(200, b'{"status": "ok"}')
                else:
                    self._send(404, b'{"error": "not found"}')

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
                if "sleep" in step:
                    time.sleep(step["sleep"])
                if "status" in step:
                    self._send(step["status"], json.dumps({"error": {"message": "boom"}}).encode(), step.get("headers"))
                    return
                if "raw" in step:
                    self._send(200, step["raw"])
                    return
                text = step.get("text", "")
                choice: dict[str, Any] = {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
                if body.get("logprobs"):
                    positions = step.get("positions") or [step.get("top") or [[text, 0.0]]]
                    choice["logprobs"] = {
                        "content": [
                            {
                                "token": top[0][0],
                                "logprob": top[0][1],
                                "bytes": None,
                                "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in top],
                            }
                            for top in positions
                        ]
                    }
                payload = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [choice],
                    "usage": {
                        "prompt_tokens": step.get("prompt_tokens", 10),
                        "completion_tokens": 2,
                        "total_tokens": 12,
                    },
                }
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
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )  # shutdown() waits up to one poll interval

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def scripted(script: list[dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A ``respond`` that takes the next step of ``script`` per request; the last step repeats."""
    steps = list(script)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        with lock:
            return steps.pop(0) if len(steps) > 1 else steps[0]

    return respond


class FakeOpenAI(FakeServer):
    """A ``FakeServer`` that follows a script (no tokenizer endpoints)."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        super().__init__(scripted(script), tokenize=False)
