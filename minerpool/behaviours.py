"""How each simulated miner answers: one coroutine per behaviour, ``(call, services) -> HTTP response``.

``HANDLERS`` maps a behaviour name (``sim.BEHAVIOURS``) to its coroutine. The
misbehaving ones (slow, empty, copycat, off-topic, HTTP 500, prompt injection)
are the embedded default network's adversaries; malformed, non-text and
oversized exercise the client's failure reasons.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from minerpool.copies import CopyBoard
from minerpool.personas import HONEST_CANNED, INJECTION, OFFTOPIC
from minerpool.sim import Call
from minerpool.upstream import Upstream
from minerpool.wire import completion, error, fill, new_id, token_logprobs

COPY_WAIT_S = 600.0  # how long a copycat waits for the answer it copies


@dataclass(frozen=True)
class Services:
    """What the behaviours share: the copy board and the honest miners' upstream (None: canned honest answers)."""

    copies: CopyBoard
    upstream: Upstream | None


def reply(call: Call, services: Services, content: Any, logprob: float | None = None) -> web.Response:
    """A completion with ``content`` (published for copycats); token log-probabilities when asked for."""
    logprobs = (
        token_logprobs(content, logprob)
        if isinstance(content, str) and logprob is not None and call.wants_logprobs
        else None
    )
    payload = completion(call.miner.model, content, logprobs=logprobs)
    services.copies.publish(call.miner.name, call.messages, payload)
    return web.json_response(payload)


async def honest(call: Call, services: Services) -> web.StreamResponse:
    miner = call.miner
    assert miner.seed is not None
    if services.upstream is None:
        text = miner.text if miner.text is not None else HONEST_CANNED[miner.seed % len(HONEST_CANNED)]
        logprob = miner.logprob if miner.logprob is not None else -0.05 - 0.05 * (miner.seed % 4)
        return reply(call, services, fill(text, call.prompt, miner.name), logprob=logprob)
    payload = await services.upstream.complete(call)
    if payload is None:
        services.copies.publish(miner.name, call.messages, None)
        return error(502, "upstream LM failed")
    payload["model"] = miner.model
    services.copies.publish(miner.name, call.messages, payload)
    return web.json_response(payload)


async def canned(call: Call, services: Services) -> web.StreamResponse:
    miner = call.miner
    text = fill(
        miner.text if miner.text is not None else "Canned answer from {name} to: {prompt}", call.prompt, miner.name
    )
    if miner.trickle_s <= 0:
        return reply(call, services, text, logprob=miner.logprob)
    logprobs = token_logprobs(text, miner.logprob) if miner.logprob is not None and call.wants_logprobs else None
    data = json.dumps(completion(miner.model, text, logprobs=logprobs)).encode("utf-8")
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.content_length = len(data)
    await response.prepare(call.request)
    pieces = 10
    step = -(-len(data) // pieces)
    for i in range(0, len(data), step):
        await response.write(data[i : i + step])
        if i + step < len(data):
            await asyncio.sleep(miner.trickle_s / (pieces - 1))
    await response.write_eof()
    return response


async def slow(call: Call, services: Services) -> web.StreamResponse:
    await asyncio.sleep(call.miner.delay_s if call.miner.delay_s > 0 else 600.0)
    return reply(call, services, fill(HONEST_CANNED[0], call.prompt, call.miner.name))


async def empty(call: Call, services: Services) -> web.StreamResponse:
    return reply(call, services, "")


async def copycat(call: Call, services: Services) -> web.StreamResponse:
    miner = call.miner
    assert miner.copy_of is not None
    try:
        payload = await asyncio.wait_for(
            asyncio.shield(services.copies.slot(call.messages, miner.copy_of, fresh=True)), timeout=COPY_WAIT_S
        )
    except asyncio.TimeoutError:
        payload = None
    if payload is None:
        return error(502, f"nothing to copy from {miner.copy_of}")
    if miner.delay_s > 0:  # a real copier sees the original's answer only after it was sent
        await asyncio.sleep(miner.delay_s)
    copied = json.loads(json.dumps(payload))
    copied["model"] = miner.model
    copied["id"] = new_id()
    return web.json_response(copied)


async def offtopic(call: Call, services: Services) -> web.StreamResponse:
    miner = call.miner
    if miner.text is not None:
        return reply(call, services, fill(miner.text, call.prompt, miner.name))
    assert miner.seed is not None
    pick = int(hashlib.sha256(call.prompt.encode("utf-8")).hexdigest(), 16) + miner.seed
    return reply(call, services, OFFTOPIC[pick % len(OFFTOPIC)])


async def http500(call: Call, services: Services) -> web.StreamResponse:
    return error(500, "internal error (simulated)")


async def injection(call: Call, services: Services) -> web.StreamResponse:
    return reply(call, services, fill(call.miner.text or INJECTION, call.prompt, call.miner.name))


async def malformed(call: Call, services: Services) -> web.StreamResponse:
    return web.Response(body=b'{"choices": [{"message": {"content": "unterminated', content_type="application/json")


async def nontext(call: Call, services: Services) -> web.StreamResponse:
    content = call.miner.content if call.miner.content is not None else [{"type": "text", "text": "a list of parts"}]
    return reply(call, services, content)


async def oversized(call: Call, services: Services) -> web.StreamResponse:
    # no Content-Length: the validator has to stop reading by itself
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(call.request)
    chunk = b"x" * 65536
    try:
        await response.write(b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "')
        for _ in range(max(1, call.miner.size // len(chunk))):
            await response.write(chunk)
        await response.write(b'"}}]}')
        await response.write_eof()
    except (ConnectionError, RuntimeError):  # the validator hung up, as it should
        pass
    return response


Handler = Callable[[Call, Services], Awaitable[web.StreamResponse]]
HANDLERS: dict[str, Handler] = {
    "honest": honest,
    "canned": canned,
    "slow": slow,
    "empty": empty,
    "copycat": copycat,
    "offtopic": offtopic,
    "http500": http500,
    "injection": injection,
    "malformed": malformed,
    "nontext": nontext,
    "oversized": oversized,
}
