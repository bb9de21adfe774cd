"""A tiny scripted OpenAI-compatible server on loopback, for edge cases a real LM will not produce on demand.

Each POST to /v1/chat/completions takes the next scripted behaviour:
``{"text": "..."}`` (optionally ``"top": [[token, logprob], ...]`` for the first
token's top_logprobs, or ``"positions": [top, top, ...]`` for several tokens), ``{"status": 500}``, ``{"sleep": 2.0, "text": ...}``,
``{"raw": b"not json"}``. When the script runs out, the last behaviour repeats.
Every request body is kept in ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with fake._lock:
                    fake.requests.append({"path": self.path, "body": body,
                                          "auth": self.headers.get("Authorization")})
                    step = fake.script.pop(0) if len(fake.script) > 1 else fake.script[0]
                if "sleep" in step:
                    time.sleep(step["sleep"])
                if "status" in step:
                    self._send(step["status"], json.dumps({"error": {"message": "boom"}}).encode())
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
                           "choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 2,
                                                          "total_tokens": 12}}
                self._send(200, json.dumps(payload).encode())

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
