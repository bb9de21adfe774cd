"""``MinerPool``: simulated miners behind one loopback HTTP server, on an event loop in a background thread.

It serves the OpenAI chat API for each miner at
``/m/<name>/v1/chat/completions`` (and ``/m/<name>/v1/models``), so the client
queries them exactly as it queries real miners; ``pool.specs()`` gives their
addresses (``MinerAddress``). A miner with ``api_key`` set answers 401 without
``Authorization: Bearer <key>``. A request the validator abandons is cancelled
in the pool too.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import socket
import threading
from collections import deque
from typing import Any, Sequence

from aiohttp import web

from lm.config import Secret
from minerpool.address import MinerAddress
from minerpool.behaviours import HANDLERS, Services
from minerpool.copies import CopyBoard
from minerpool.sim import Call, SimMiner
from minerpool.upstream import Upstream
from minerpool.wire import error

log = logging.getLogger(__name__)


def _check_miners(miners: Sequence[SimMiner]) -> dict[str, SimMiner]:
    names = [m.name for m in miners]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate simulated miner names: {', '.join(duplicates)}")
    by_name = {m.name: m for m in miners}
    for m in miners:
        if m.behaviour == "copycat" and m.copy_of not in by_name:
            raise ValueError(f"simulated miner {m.name} copies {m.copy_of!r}, which is not in the pool")
    return by_name


def _authorised(miner: SimMiner, request: web.Request) -> bool:
    if miner.api_key is None:
        return True
    expected = f"Bearer {miner.api_key.get()}".encode("utf-8")
    return hmac.compare_digest(request.headers.get("Authorization", "").encode("utf-8"), expected)


def _text_messages(body: Any) -> list[dict[str, Any]] | None:
    """The request's messages when it is a chat request with text messages, else None."""
    messages = body.get("messages") if isinstance(body, dict) else None
    ok = isinstance(messages, list) and bool(messages) and all(
        isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages)
    return messages if ok else None


class MinerPool:
    """Simulated miners on 127.0.0.1; ``start()``/``stop()`` or use as a context manager.

    ``upstream_url`` (an OpenAI-compatible base URL such as the local LM's ``.../v1``, or several:
    the honest miners are split over them, ``Upstream``) backs the honest miners. ``requests`` keeps the last requests seen (miner, messages,
    max_tokens, logprobs, sampling, authorised) for tests; ``upstream_calls`` the honest miners'
    upstream calls (miner, seconds, ok).
    """

    def __init__(self, miners: Sequence[SimMiner], *, upstream_url: str | Sequence[str] | None = None,
                 upstream_model: str | None = None, upstream_key: Secret | None = None,
                 upstream_timeout_s: float = 600.0, port: int = 0, backlog: int = 2048) -> None:
        self.miners = _check_miners(miners)
        honest = [m.name for m in miners if m.behaviour == "honest"]
        self.upstream = Upstream(upstream_url, model=upstream_model, key=upstream_key, timeout_s=upstream_timeout_s,
                                 honest=honest) if upstream_url else None
        self.requests: deque[dict[str, Any]] = deque(maxlen=4096)
        self._copies = CopyBoard({m.copy_of for m in miners if m.behaviour == "copycat" and m.copy_of})
        self._services = Services(self._copies, self.upstream)
        self._port = port
        self._backlog = backlog
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._sock: socket.socket | None = None

    @property
    def upstream_calls(self) -> deque[dict[str, Any]]:
        return self.upstream.calls if self.upstream is not None else deque()

    # -- addresses ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._sock is None:
            raise RuntimeError("the miner pool is not started")
        return self._sock.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, name: str) -> str:
        """The OpenAI-compatible base URL of one simulated miner."""
        if name not in self.miners:
            raise KeyError(name)
        return f"{self.url}/m/{name}/v1"

    def spec(self, name: str, *, timeout_s: float | None = None) -> MinerAddress:
        miner = self.miners[name]
        return MinerAddress(hotkey=name, base_url=self.base_url(name), model=miner.model, timeout_s=timeout_s,
                            api_key=miner.api_key, entity=miner.entity)

    def specs(self) -> list[MinerAddress]:
        return [self.spec(name) for name in self.miners]

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> "MinerPool":
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self._port))
        except OSError:
            sock.close()
            raise
        self._sock = sock
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="minerpool", daemon=True)
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._astart(), loop).result(timeout=30)
        except BaseException:
            self.stop()
            raise
        log.info("miner pool: %d simulated miners on %s", len(self.miners), self.url)
        return self

    async def _astart(self) -> None:
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_post("/m/{name}/v1/chat/completions", self._chat)
        app.router.add_get("/m/{name}/v1/models", self._models)
        # handler_cancellation: a request the validator gave up on (slow miners) stops here too
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        assert self._sock is not None
        await web.SockSite(self._runner, self._sock, backlog=self._backlog).start()
        if self.upstream is not None:
            await self.upstream.open()

    async def _astop(self) -> None:
        self._copies.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.upstream is not None:
            await self.upstream.close()

    def stop(self) -> None:
        loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is not None and thread is not None:
            try:
                asyncio.run_coroutine_threadsafe(self._astop(), loop).result(timeout=30)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(timeout=30)
                loop.close()
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "MinerPool":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- HTTP -----------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.StreamResponse:
        miner = self.miners.get(request.match_info["name"])
        if miner is None:
            return error(404, "no such miner")
        if not _authorised(miner, request):
            return error(401, "invalid API key")
        return web.json_response({"object": "list", "data": [
            {"id": miner.model, "object": "model", "created": 0, "owned_by": "minerpool"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        miner = self.miners.get(request.match_info["name"])
        if miner is None:
            return error(404, "no such miner")
        authorised = _authorised(miner, request)
        try:
            body = await request.json()
        except ValueError:
            body = None
        messages = _text_messages(body)
        self.requests.append({"miner": miner.name, "authorised": authorised, "messages": messages,
                              "max_tokens": body.get("max_tokens") if isinstance(body, dict) else None,
                              "logprobs": bool(body.get("logprobs")) if isinstance(body, dict) else False,
                              "sampling": {k: body[k] for k in ("temperature", "seed") if k in body}
                              if isinstance(body, dict) else {}})
        if not authorised:
            return error(401, "invalid API key")
        if messages is None or not isinstance(body, dict):
            return error(400, "expected a chat completion request with text messages")
        prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        if miner.delay_s > 0 and miner.behaviour != "slow":
            await asyncio.sleep(miner.delay_s)
        return await HANDLERS[miner.behaviour](Call(miner, request, body, messages, prompt), self._services)
