"""``MinerPool``: simulated miners behind one loopback HTTP server, on an event loop in a background thread.

It serves the OpenAI chat API for each miner at
``/m/<name>/v1/chat/completions`` (and ``/m/<name>/v1/models``), so the client
queries them exactly as it queries real miners; ``pool.specs()`` gives their
addresses (``MinerAddress``). A miner with ``api_key`` set answers 401 without
``Authorization: Bearer <key>``. A request the validator abandons is cancelled
in the pool too.

As subnet miners (docs/chain.md): with ``hotkeys`` each simulated miner has a
hotkey, and with ``axons`` a loopback port of its own serving ``/v1/...`` (an
axon is only ip:port: ``pool.axon(name)``, to register on a chain). With
``signers`` as well (who may send: ``chain.epistula.KnownSigners``) every
request must carry Epistula v2 headers signed for the miner's hotkey, as subnet
miners require; unsigned, stale, replayed, tampered, for another receiver or
from an unknown signer: 401 with the reason. ``verify`` turns the check off
(it is on whenever ``hotkeys`` and ``signers`` are given; pools without them
take unsigned requests, as before).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import socket
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from aiohttp import web

from chain.epistula import HEADERS as EPISTULA_HEADERS
from chain.epistula import EpistulaVerifier, SignerPolicy
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
    expected = f"Bearer {miner.api_key.get()}".encode()
    return hmac.compare_digest(request.headers.get("Authorization", "").encode("utf-8"), expected)


def _text_messages(body: Any) -> list[dict[str, Any]] | None:
    """The request's messages when it is a chat request with text messages, else None."""
    messages = body.get("messages") if isinstance(body, dict) else None
    ok = (
        isinstance(messages, list)
        and bool(messages)
        and all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages)
    )
    return messages if ok else None


def _bound(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


class MinerPool:
    """Simulated miners on 127.0.0.1; ``start()``/``stop()`` or use as a context manager.

    ``upstream_url`` (an OpenAI-compatible base URL such as the local LM's ``.../v1``, or several:
    the honest miners are split over them, ``Upstream``) backs the honest miners. ``requests`` keeps the last
    requests seen (miner, messages, max_tokens, logprobs, sampling, authorised, the Epistula headers, the
    refusal's reason) for tests; ``upstream_calls`` the honest miners' upstream calls (miner, seconds, ok).
    ``hotkeys`` (miner -> ss58), ``signers``, ``verify`` and ``axons``: the pool as subnet miners (module
    docstring).
    """

    def __init__(
        self,
        miners: Sequence[SimMiner],
        *,
        upstream_url: str | Sequence[str] | None = None,
        upstream_model: str | None = None,
        upstream_key: Secret | None = None,
        upstream_timeout_s: float = 600.0,
        port: int = 0,
        backlog: int = 2048,
        hotkeys: Mapping[str, str] | None = None,
        signers: SignerPolicy | None = None,
        verify: bool | None = None,
        axons: bool = False,
    ) -> None:
        self.miners = _check_miners(miners)
        self.hotkeys = dict(hotkeys or {})
        strangers = sorted(set(self.hotkeys) - set(self.miners))
        if strangers:
            raise ValueError(f"hotkeys for miners not in the pool: {', '.join(strangers)}")
        verify = bool(hotkeys) and signers is not None if verify is None else verify
        if verify and (signers is None or set(self.miners) - set(self.hotkeys)):
            raise ValueError("verifying signed requests needs signers and a hotkey for every simulated miner")
        self._verifiers = (
            {name: EpistulaVerifier(self.hotkeys[name], signers) for name in self.miners} if verify else {}
        )
        self.axons = axons
        honest = [m.name for m in miners if m.behaviour == "honest"]
        self.upstream = (
            Upstream(upstream_url, model=upstream_model, key=upstream_key, timeout_s=upstream_timeout_s, honest=honest)
            if upstream_url
            else None
        )
        self.requests: deque[dict[str, Any]] = deque(maxlen=4096)
        self._copies = CopyBoard({m.copy_of for m in miners if m.behaviour == "copycat" and m.copy_of})
        self._services = Services(self._copies, self.upstream)
        self._port = port
        self._backlog = backlog
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._sock: socket.socket | None = None
        self._axon_socks: dict[str, socket.socket] = {}  # miner -> its own port (``axons``)
        self._by_port: dict[int, str] = {}

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
        """The OpenAI-compatible base URL of one simulated miner (on its own port with ``axons``)."""
        if name not in self.miners:
            raise KeyError(name)
        return f"http://{self.axon(name)}/v1" if self.axons else f"{self.url}/m/{name}/v1"

    def axon(self, name: str) -> str:
        """``127.0.0.1:port``: where the miner serves ``/v1/...`` when the pool runs with ``axons``."""
        if name not in self._axon_socks:
            raise KeyError(f"{name} has no axon (start a pool with axons=True)" if name in self.miners else name)
        return f"127.0.0.1:{self._axon_socks[name].getsockname()[1]}"

    def spec(self, name: str, *, timeout_s: float | None = None) -> MinerAddress:
        miner = self.miners[name]
        return MinerAddress(
            hotkey=self.hotkeys.get(name, name),
            base_url=self.base_url(name),
            model=miner.model,
            timeout_s=timeout_s,
            api_key=miner.api_key,
            entity=miner.entity,
        )

    def specs(self) -> list[MinerAddress]:
        return [self.spec(name) for name in self.miners]

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> MinerPool:
        if self._thread is not None:
            return self
        self._sock = _bound(self._port)
        try:
            for name in self.miners if self.axons else ():
                self._axon_socks[name] = _bound(0)
                self._by_port[self._axon_socks[name].getsockname()[1]] = name
        except OSError:
            self._close_sockets()
            raise
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
        if self.axons:  # each miner's own port: the path names no miner
            app.router.add_post("/v1/chat/completions", self._chat)
            app.router.add_get("/v1/models", self._models)
        # handler_cancellation: a request the validator gave up on (slow miners) stops here too
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        assert self._sock is not None
        for sock in (self._sock, *self._axon_socks.values()):
            await web.SockSite(self._runner, sock, backlog=self._backlog).start()
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
        self._close_sockets()

    def _close_sockets(self) -> None:
        for sock in (self._sock, *self._axon_socks.values()):
            if sock is not None:
                sock.close()
        self._sock, self._axon_socks, self._by_port = None, {}, {}

    def __enter__(self) -> MinerPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- HTTP -----------------------------------------------------------------------------

    def _miner(self, request: web.Request) -> SimMiner | None:
        """The miner a request is for: named in the path, or the one whose axon port it came in on."""
        name = request.match_info.get("name")
        if name is None and request.transport is not None:
            name = self._by_port.get((request.transport.get_extra_info("sockname") or ("", 0))[1])
        return self.miners.get(name) if name is not None else None

    async def _models(self, request: web.Request) -> web.StreamResponse:
        miner = self._miner(request)
        if miner is None:
            return error(404, "no such miner")
        if not _authorised(miner, request):
            return error(401, "invalid API key")
        return web.json_response(
            {"object": "list", "data": [{"id": miner.model, "object": "model", "created": 0, "owned_by": "minerpool"}]}
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        miner = self._miner(request)
        if miner is None:
            return error(404, "no such miner")
        authorised = _authorised(miner, request)
        raw = await request.read()
        verifier = self._verifiers.get(miner.name)
        refused = verifier.check(request.headers, raw) if verifier is not None and authorised else None
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        messages = _text_messages(body)
        self.requests.append(
            {
                "miner": miner.name,
                "authorised": authorised,
                "messages": messages,
                "max_tokens": body.get("max_tokens") if isinstance(body, dict) else None,
                "logprobs": bool(body.get("logprobs")) if isinstance(body, dict) else False,
                "sampling": {k: body[k] for k in ("temperature", "seed") if k in body}
                if isinstance(body, dict)
                else {},
                "epistula": {h: request.headers[h] for h in EPISTULA_HEADERS if h in request.headers},
                "refused": refused,
            }
        )
        if not authorised:
            return error(401, "invalid API key")
        if refused is not None:
            return error(401, refused)
        if messages is None or not isinstance(body, dict):
            return error(400, "expected a chat completion request with text messages")
        prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        if miner.delay_s > 0 and miner.behaviour != "slow":
            await asyncio.sleep(miner.delay_s)
        return await HANDLERS[miner.behaviour](Call(miner, request, body, messages, prompt), self._services)
