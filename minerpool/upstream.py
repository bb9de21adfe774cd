"""The honest miners' upstream: an OpenAI-compatible server (the local LM) each honest miner forwards to.

Each honest miner sends the prompt with its persona as the system prompt and
its own temperature and seed (on a task prompt its task persona, worked
examples and task temperature: ``minerpool.personas``); the upstream's answer, log-probabilities
included, is the miner's. ``calls`` keeps (miner, seconds, ok) for tests and
benchmarks.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

import aiohttp

from lm.config import Secret
from minerpool.personas import example_messages, is_task_prompt
from minerpool.sim import Call, SimMiner

log = logging.getLogger(__name__)


def upstream_request(miner: SimMiner, call: Call, model: str) -> dict[str, Any]:
    """The chat request an honest miner sends upstream for ``call`` (pure)."""
    task = bool(miner.task_persona) and is_task_prompt(call.prompt)
    persona = miner.task_persona if task else miner.persona
    system = "\n\n".join([persona] + [m["content"] for m in call.messages if m.get("role") == "system"])
    messages = (
        ([{"role": "system", "content": system}] if system.strip() else [])
        + (example_messages(miner.task_examples) if task else [])
        + [{"role": m["role"], "content": m["content"]} for m in call.messages if m.get("role") != "system"]
    )
    requested = call.body.get("max_tokens")
    max_tokens = min(requested, miner.max_tokens) if isinstance(requested, int) and requested > 0 else miner.max_tokens
    request = {
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": miner.task_temperature if task else miner.temperature,
        "seed": miner.seed,
    }
    if call.wants_logprobs:
        request["logprobs"] = True
    return request


class Upstream:
    """One aiohttp session to the upstream server(s); open and close it on the pool's loop.

    With several base URLs (servers of the same model) honest miner k of ``honest`` (in the pool's order) uses
    URL k mod len(urls): a fixed split, so each server decodes its own miners' answers as one batch.
    """

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        model: str | None = None,
        key: Secret | None = None,
        timeout_s: float = 600.0,
        honest: Sequence[str] = (),
    ) -> None:
        self.urls = tuple(u.rstrip("/") for u in ([url] if isinstance(url, str) else url))
        if not self.urls:
            raise ValueError("an upstream needs at least one base URL")
        self.url = self.urls[0]
        self._route = {name: k % len(self.urls) for k, name in enumerate(honest)}
        self.model = model or "default"
        self.key = key
        self.timeout_s = timeout_s
        self.calls: deque[dict[str, Any]] = deque(maxlen=4096)  # miner, seconds, ok
        self._session: aiohttp.ClientSession | None = None

    async def open(self) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s), trust_env=False)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def complete(self, call: Call) -> dict[str, Any] | None:
        """The upstream's completion for an honest miner's call, or None when it failed (logged)."""
        assert self._session is not None, "the upstream session is not open"
        miner = call.miner
        headers = {"Authorization": f"Bearer {self.key.get()}"} if self.key else {}
        started = time.perf_counter()
        payload: Any = None
        try:
            url = self.urls[self._route.get(miner.name, 0)]
            async with self._session.post(
                f"{url}/chat/completions", json=upstream_request(miner, call, self.model), headers=headers
            ) as resp:
                status: Any = resp.status
                if resp.status == 200:
                    payload = await resp.json(content_type=None)
        except Exception as exc:  # any upstream failure is this miner's 502 (CancelledError passes)
            status = type(exc).__name__
        self.calls.append(
            {"miner": miner.name, "seconds": time.perf_counter() - started, "ok": isinstance(payload, dict)}
        )
        if not isinstance(payload, dict):
            log.warning("miner pool: honest miner %s: upstream failed (%s)", miner.name, status)
            return None
        return payload
