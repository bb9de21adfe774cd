"""Querying miners (edge): one prompt to every miner at once over aiohttp, each answer timed to its last byte.

``query_miners`` runs the round's query on an event loop of its own in a
thread of its own and returns one ``MinerAnswer`` per miner, in the miners'
order. A miner's failure is a value (``FailureReason`` and a short detail),
never an exception: the round goes on with the others. Exceptions from aiohttp
are mapped by type only, because they carry the request headers (the key).
Latency and the two clocks (the miner's timeout, the round's deadline) are
described in docs/miners.md. With a ``signer`` (the validator's hotkey) every
request carries Epistula v2 headers signed for the miner's hotkey over the
exact body sent (``chain.epistula``, docs/chain.md), and a 401 to a signed
request fails as ``refused`` with the miner's reason.

This module holds the round's query: the two clocks, the request bodies, the answers in order.
One request (the POST, its timing hooks, the body read under its cap, each transport failure by
type) is ``validator.miners.request``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, ParamSpec, TypeVar

import aiohttp

from chain.epistula import Signer
from validator.miners.answers import FailureReason, MinerAnswer, outcome_counts, parse_chat_completion
from validator.miners.limits import QueryLimits
from validator.miners.request import Raw, Timing, fetch_one, on_chunk_sent
from validator.miners.spec import MinerSpec, show

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")


def _late(timing: Timing, end: float, timeout_s: float, deadline_s: float, round_end: float) -> Raw:
    """Why an unfinished request was given up: its own timeout, or the round's deadline."""
    if timing.sent_loop is not None and timing.sent_loop + timeout_s <= round_end:
        return Raw(end, failure=FailureReason.TIMEOUT, detail=f"no complete answer within {timeout_s:g} s")
    stage = "while waiting for the answer" if timing.sent is not None else "before the request was sent"
    return Raw(end, failure=FailureReason.DEADLINE, detail=f"round deadline of {deadline_s:g} s reached {stage}")


async def _query_one(
    session: aiohttp.ClientSession,
    spec: MinerSpec,
    body: bytes,
    *,
    timeout_s: float,
    deadline_s: float,
    round_end: float,
    max_body_bytes: int,
    signer: Signer | None = None,
) -> tuple[Raw, Timing]:
    """One miner under two clocks: its own timeout from the moment the request is sent, and the round's deadline.

    Waiting for a connection slot or a connect counts only against the deadline, so the
    validator's own queueing never makes a miner time out.
    """
    loop = asyncio.get_running_loop()
    timing = Timing(loop)
    fetch = loop.create_task(
        fetch_one(
            session, spec, body, timing, connect_timeout_s=timeout_s, max_body_bytes=max_body_bytes, signer=signer
        )
    )
    try:
        await asyncio.wait(
            (fetch, timing.sent_future), timeout=max(0.0, round_end - loop.time()), return_when=asyncio.FIRST_COMPLETED
        )
        if not fetch.done() and timing.sent_loop is not None:
            limit = min(timing.sent_loop + timeout_s, round_end)
            await asyncio.wait((fetch,), timeout=max(0.0, limit - loop.time()))
        if fetch.done():
            try:
                return fetch.result(), timing
            except Exception as exc:  # one miner must never break the round; by type only (see fetch_one)
                log.warning("miner %s: unexpected %s while querying", show(spec.hotkey), type(exc).__name__)
                return Raw(
                    time.perf_counter(),
                    failure=FailureReason.MALFORMED_PAYLOAD,
                    detail=f"unexpected client error ({type(exc).__name__})",
                ), timing
        end = time.perf_counter()
        fetch.cancel()
        await asyncio.wait((fetch,))
        return _late(timing, end, timeout_s, deadline_s, round_end), timing
    finally:
        if not fetch.done():
            fetch.cancel()


def _answer(spec: MinerSpec, raw: Raw, timing: Timing, max_answer_chars: int, started: float) -> MinerAnswer:
    """One miner's answer; ``started``: the round's start on the clock of ``raw.end`` (``received_s`` counts from it:
    the validator's own order of arrival, whatever each request's send time)."""
    latency = max(0.0, raw.end - (timing.sent if timing.sent is not None else timing.started))
    received = max(0.0, raw.end - started)
    if raw.failure is not None or raw.body is None:
        return MinerAnswer(
            hotkey=spec.hotkey,
            text="",
            latency_s=latency,
            failure=raw.failure or FailureReason.MALFORMED_PAYLOAD,
            detail=raw.detail,
            entity=spec.entity,
            received_s=received,
        )
    answer = parse_chat_completion(
        spec.hotkey, raw.body, latency, max_answer_chars=max_answer_chars, entity=spec.entity
    )
    return dataclasses.replace(answer, received_s=received)


def _check_query(miners: Sequence[MinerSpec], limits: QueryLimits) -> None:
    if not isinstance(limits, QueryLimits):
        raise TypeError(f"limits must be a QueryLimits value, got {type(limits).__name__}")
    seen: set[str] = set()
    for spec in miners:
        if not isinstance(spec, MinerSpec):
            raise TypeError(f"miners must be MinerSpec values, got {type(spec).__name__}")
        if spec.hotkey in seen:
            raise ValueError(f"duplicate hotkey {show(spec.hotkey)} in the miners")
        seen.add(spec.hotkey)


def _request_bodies(
    prompt: str, miners: Sequence[MinerSpec], limits: QueryLimits, system_prompt: str | None
) -> dict[str, bytes]:
    """One encoded request per model name (miners of one model get the same bytes)."""
    messages = ([{"role": "system", "content": system_prompt}] if system_prompt is not None else []) + [
        {"role": "user", "content": prompt}
    ]
    bodies: dict[str, bytes] = {}
    for spec in miners:
        if spec.model not in bodies:
            request: dict[str, Any] = {
                "model": spec.model,
                "messages": messages,
                "max_tokens": limits.max_tokens,
                "stream": False,
            }
            if limits.logprobs:
                request["logprobs"] = True
            bodies[spec.model] = json.dumps(request, ensure_ascii=False).encode("utf-8")
    return bodies


async def query_miners_async(
    prompt: str,
    miners: Sequence[MinerSpec],
    limits: QueryLimits,
    *,
    system_prompt: str | None = None,
    on_done: Callable[[int, int], None] | None = None,
    signer: Signer | None = None,
) -> list[MinerAnswer]:
    """Ask every miner concurrently on the running loop; one answer per miner, in order.

    Prefer ``query_miners``: on a loop that also does other work, a blocked loop delays
    the moment a finished answer is read and inflates latencies; ``query_miners`` runs
    this on a loop of its own. With ``limits.max_connections`` below the number of miners
    the extra requests wait for a slot, which counts against the deadline but neither
    against the miner's timeout nor in its latency. ``on_done(finished, total)`` is called
    as each miner finishes (answered or failed), on this loop: it must return at once.
    ``signer``: the validator's hotkey, signing every request (Epistula v2) for the miner's hotkey.
    """
    _check_query(miners, limits)
    if not miners:
        return []
    finished = 0

    async def counted(coro):
        nonlocal finished
        result = await coro  # the latency is already taken: the callback costs the miner nothing
        finished += 1
        if on_done is not None:
            on_done(finished, len(miners))
        return result

    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    round_end = loop.time() + limits.deadline_s
    bodies = _request_bodies(prompt, miners, limits, system_prompt)
    trace = aiohttp.TraceConfig()
    trace.on_request_chunk_sent.append(on_chunk_sent)
    connector = aiohttp.TCPConnector(limit=limits.max_connections or len(miners), limit_per_host=0)
    # no cookies (one miner must not set what another receives), no proxies from the
    # environment, no transparent decompression (a small gzip body could unpack unbounded)
    async with aiohttp.ClientSession(
        connector=connector,
        trace_configs=[trace],
        trust_env=False,
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),
    ) as session:
        outcomes = await asyncio.gather(
            *(
                counted(
                    _query_one(
                        session,
                        spec,
                        bodies[spec.model],
                        timeout_s=spec.timeout_s or limits.request_timeout_s,
                        deadline_s=limits.deadline_s,
                        round_end=round_end,
                        max_body_bytes=limits.body_cap,
                        signer=signer,
                    )
                )
                for spec in miners
            )
        )
    answers = [
        _answer(spec, raw, timing, limits.max_answer_chars, started) for spec, (raw, timing) in zip(miners, outcomes)
    ]
    for answer in answers:
        log.debug(
            "miner %s: %s in %.3f s%s",
            show(answer.hotkey),
            answer.failure.value if answer.failure else "ok",
            answer.latency_s,
            f" ({answer.detail})" if answer.detail else "",
        )
    counts = outcome_counts(answers)
    log.info(
        "queried %d miners in %.2f s: %s",
        len(miners),
        time.perf_counter() - started,
        ", ".join(f"{k} {v}" for k, v in counts.items() if v),
    )
    return answers


def _on_a_loop_of_its_own(query: Callable[P, Coroutine[Any, Any, T]], name: str, doc: str) -> Callable[P, T]:
    """``query`` run on a fresh event loop in a dedicated thread and waited for: a function ``name`` (``doc``) with
    the same parameters.

    Nothing the caller does (its own event loop, blocking calls) then sits between a miner's
    bytes arriving and their timestamp. An exception is raised again in the caller's thread.
    """

    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        outcome: dict[str, Any] = {}

        def target() -> None:
            try:
                outcome["value"] = asyncio.run(query(*args, **kwargs))
            except BaseException as exc:  # handed to the caller's thread
                outcome["error"] = exc

        thread = threading.Thread(target=target, name="miner-query", daemon=True)
        thread.start()
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        value: T = outcome["value"]
        return value

    functools.update_wrapper(run, query)  # inspect.signature shows ``query``'s parameters
    run.__name__ = run.__qualname__ = name
    run.__doc__ = doc
    return run


query_miners = _on_a_loop_of_its_own(
    query_miners_async,
    "query_miners",
    """Ask every miner concurrently and wait; one ``MinerAnswer`` per miner, in the miners' order.

    ``query_miners_async`` (same parameters) on a loop of its own in a thread of its own, so nothing the
    caller does sits between a miner's bytes arriving and their timestamp. Returns by the deadline (plus
    the time to cancel what is left).
    """,
)
