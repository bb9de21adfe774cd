"""One request to one miner (edge): the POST, its timing hooks, the body read under its cap, and every
transport failure as a value.

``fetch_one`` posts one chat request (signed with Epistula v2 when there is a ``signer``) and
returns a ``Raw``: the moment the last byte arrived and the body, or a ``FailureReason`` with a
short detail. ``Timing`` holds the moment the request left, set by the aiohttp trace hook
``on_chunk_sent``. Exceptions from aiohttp are mapped by type only, because they carry the request
headers (the key). A 401 to a signed request fails as ``refused`` with the Epistula reason the
miner gives (one of ``REFUSALS``, never the miner's own words). ``validator.miners.client`` runs
one ``fetch_one`` per miner under the two clocks.
"""

from __future__ import annotations

import asyncio
import errno
import json
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from chain.epistula import Signer, sign_request
from validator.miners.answers import FailureReason
from validator.miners.spec import MinerSpec


class Timing:
    """Per-request timestamps, filled by the aiohttp trace hooks (``trace_request_ctx``)."""

    __slots__ = ("started", "sent", "sent_loop", "sent_future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.started = time.perf_counter()
        self.sent: float | None = None  # perf_counter when the request went to the socket
        self.sent_loop: float | None = None  # the same moment on the loop's clock (for timers)
        self.sent_future: asyncio.Future[None] = loop.create_future()

    def mark_sent(self) -> None:
        if self.sent is None:
            self.sent = time.perf_counter()
            self.sent_loop = self.loop.time()
            self.sent_future.set_result(None)


async def on_chunk_sent(session: Any, ctx: Any, params: Any) -> None:
    # aiohttp buffers the headers and writes them with the first body chunk, right after this
    # hook returns: this is the moment the request leaves, after any wait for a connection slot
    timing = ctx.trace_request_ctx
    if isinstance(timing, Timing):
        timing.mark_sent()


@dataclass(frozen=True)
class Raw:
    end: float
    body: bytes | None = None
    failure: FailureReason | None = None
    detail: str = ""


def _connect_detail(exc: BaseException) -> str:
    if isinstance(exc, getattr(aiohttp, "ClientConnectorDNSError", ())):
        return "cannot resolve the host"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return "TLS certificate rejected"
    if isinstance(exc, aiohttp.ClientSSLError):
        return "TLS error"
    code = getattr(exc, "errno", None)
    if code == errno.ECONNREFUSED:
        return "connection refused"
    if isinstance(code, int) and code in errno.errorcode:
        return f"cannot connect ({errno.errorcode[code]})"
    return "cannot connect"


def _transport_failure(exc: BaseException, connect_timeout_s: float) -> Raw:
    """A transport exception as a failure, by type only (see the module docstring)."""
    now = time.perf_counter()
    if isinstance(exc, asyncio.TimeoutError):
        return Raw(now, failure=FailureReason.TIMEOUT, detail=f"could not connect within {connect_timeout_s:g} s")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return Raw(now, failure=FailureReason.CONNECTION_REFUSED, detail=_connect_detail(exc))
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return Raw(
            now, failure=FailureReason.CONNECTION_REFUSED, detail="the miner closed the connection before answering"
        )
    if isinstance(exc, aiohttp.ClientPayloadError):
        return Raw(
            now, failure=FailureReason.MALFORMED_PAYLOAD, detail="broken body (truncated or bad transfer encoding)"
        )
    if isinstance(exc, aiohttp.ClientResponseError):
        return Raw(now, failure=FailureReason.MALFORMED_PAYLOAD, detail="invalid HTTP response")
    if isinstance(exc, (aiohttp.ClientOSError, ConnectionError)):
        return Raw(now, failure=FailureReason.CONNECTION_REFUSED, detail="connection reset")
    return Raw(now, failure=FailureReason.CONNECTION_REFUSED, detail=f"client error ({type(exc).__name__})")


async def _read_body(resp: Any, max_body_bytes: int) -> Raw:
    """The body of a 2xx response, or ``oversized`` as soon as it passes the cap."""
    declared = resp.content_length
    if declared is not None and declared > max_body_bytes:
        end = time.perf_counter()
        resp.close()
        return Raw(
            end,
            failure=FailureReason.OVERSIZED,
            detail=f"declared body of {declared:,} bytes, over the cap of {max_body_bytes:,}",
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await resp.content.readany()
        if not chunk:
            break
        size += len(chunk)
        if size > max_body_bytes:
            end = time.perf_counter()
            resp.close()  # stop reading: the rest is never received into memory
            return Raw(
                end,
                failure=FailureReason.OVERSIZED,
                detail=f"body over the cap of {max_body_bytes:,} bytes (stopped reading)",
            )
        chunks.append(chunk)
    return Raw(time.perf_counter(), body=b"".join(chunks))


# the reasons an Epistula verifier gives (chain.epistula): a refusal's detail names one of them, never the miner's
# own words (a detail holds no text the miner chose)
REFUSALS = (
    "unsigned request",
    "unsupported Epistula version",
    "missing header",
    "malformed timestamp",
    "stale request",
    "timestamp",
    "signed for another receiver",
    "unknown signer",
    "signer has no stake",
    "signer's stake is below the minimum",
    "malformed signature",
    "bad signature",
    "replayed request",
    "too many requests in the replay window",
)


async def _refusal(resp: Any) -> str:
    """``HTTP 401``, with the reason when the miner's JSON error gives one an Epistula verifier gives."""
    try:
        doc = json.loads(await resp.content.read(4096))
        error = doc.get("error") if isinstance(doc, dict) else None
        reason = error.get("message") if isinstance(error, dict) else error
    except (ValueError, aiohttp.ClientError, asyncio.TimeoutError):
        reason = None
    known = next((r for r in REFUSALS if isinstance(reason, str) and reason.startswith(r)), None)
    return f"HTTP 401: {'timestamp in the future' if known == 'timestamp' else known}" if known else "HTTP 401"


async def fetch_one(
    session: aiohttp.ClientSession,
    spec: MinerSpec,
    body: bytes,
    timing: Timing,
    *,
    connect_timeout_s: float,
    max_body_bytes: int,
    signer: Signer | None = None,
) -> Raw:
    """POST one request (signed when there is a ``signer``) and read at most ``max_body_bytes``; transport
    failures become a ``Raw``."""
    headers = {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
    if spec.api_key is not None:
        headers["Authorization"] = f"Bearer {spec.api_key.get()}"
    if signer is not None:  # signed now: the miner refuses a request older than about 8 s
        headers.update(sign_request(signer, body, spec.hotkey))
    try:
        async with session.post(
            spec.chat_url,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s),
            trace_request_ctx=timing,
        ) as resp:
            if resp.status == 401 and signer is not None:
                detail = await _refusal(resp)
                end = time.perf_counter()
                resp.close()
                return Raw(end, failure=FailureReason.REFUSED, detail=detail)
            if not 200 <= resp.status < 300:
                end = time.perf_counter()
                resp.close()
                note = " (redirects are not followed)" if 300 <= resp.status < 400 else ""
                return Raw(end, failure=FailureReason.HTTP_ERROR, detail=f"HTTP {resp.status}{note}")
            return await _read_body(resp, max_body_bytes)
    except (asyncio.TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
        return _transport_failure(exc, connect_timeout_s)
