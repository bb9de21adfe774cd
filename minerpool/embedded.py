"""The embedded default network as the daemon and ``validator round`` run it when there is no miners file.

``embedded_network`` starts what the honest pool miners need and the pool
itself, and yields the miners' specs and the validator's LM endpoint. With the
embedded LM (no ``SERVER_URL``) the pool's honest miners get language model
servers of their own (``POOL_SERVERS`` of ``POOL_MODEL``, one thread each, the miners split over them),
so the validator's LM work
(polarity, judging, the narrative) never queues in front of the miners'
generation and a request the validator abandoned cannot hold up the next
round's answers. The choice was made by measurement (``python -m
benchmarks.pool_lm``; docs/miners.md has the figures). With an external
``SERVER_URL`` the honest miners forward to it as well.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from lm.embedded import QWEN05, LocalServer, assemble, free_port
from minerpool.address import MinerAddress
from minerpool.networks import default_pool

if TYPE_CHECKING:
    from lm.config import Endpoint, LMConfig

log = logging.getLogger(__name__)

SLOW_TIMEOUT_S = 10.0  # the slow miner's own timeout: a demo round does not wait 30 s for it
HONEST_TIMEOUT_S = 120.0
# the honest miners' answers: short, so a round on two cores stays short (64, was 96: each answer is also read
# by the validator's factual check, at 20-38 prompt tokens per second; docs/performance.md, 2026-11-23)
MAX_TOKENS = 64
POOL_MODEL = QWEN05  # the honest miners' own embedded LM (docs/miners.md: chosen by measurement)
# one slot per honest miner: llama.cpp decodes a server's answers as one batch instead of one after the other
# (decoding a 0.5B model is memory-bound, so a batch costs little more than one answer)
POOL_SLOTS = 4
POOL_CTX_PER_SLOT = 1024  # persona + prompt + 96 answer tokens fit with room to spare
# one thread per server: four 96-token answers in 4 slots took 18.5 s with 1 thread and 41.7 s with 2 on an
# idle 2-core host, and 10.5 s against 84.5 s with a CPU-bound process beside (llama.cpp's threads wait on
# each other when one of them loses its core); docs/miners.md
POOL_THREADS = 1
# two such servers, the honest miners split over them: one single-threaded server left the second core idle
# while the miners answered (the validator's LM waits for their answers); two use both cores and, having no
# threads to wait on each other, none stalls when a CPU-bound process takes a core (docs/performance.md)
POOL_SERVERS = 2


@contextlib.contextmanager
def embedded_network(
    lm_config: LMConfig,
    *,
    validator_lm: bool = True,
    own_lm: bool = True,
    slow_timeout_s: float = SLOW_TIMEOUT_S,
    honest_timeout_s: float = HONEST_TIMEOUT_S,
    max_tokens: int = MAX_TOKENS,
) -> Iterator[tuple[list[MinerAddress], Endpoint | None]]:
    """The embedded pool's specs and, when it was started here, the validator's embedded LM endpoint.

    With the embedded LM and ``own_lm`` the honest miners get ``POOL_SERVERS`` servers of
    their own and the validator's model is started only when ``validator_lm`` (the
    validator asks the LM); without ``own_lm`` they share the validator's server. With an
    external ``SERVER_URL`` they forward to it, and the endpoint yielded is None.
    """
    with contextlib.ExitStack() as stack:
        endpoint: Endpoint | None = None
        upstream = lm_config.endpoint
        urls: str | list[str] = upstream.url
        if upstream.local:
            validator = LocalServer.for_config(lm_config) if validator_lm or not own_lm else None
            pool_servers = _pool_servers(lm_config) if own_lm else []
            _start_side_by_side(stack, ([validator] if validator else []) + pool_servers)
            endpoint = validator.endpoint if validator else None
            honest = [s.endpoint for s in pool_servers] or [validator.endpoint]  # type: ignore[union-attr]
            upstream, urls = honest[0], [e.url for e in honest]
        pool, specs = default_pool(
            urls,
            upstream_model=upstream.model,
            upstream_key=upstream.token,
            max_tokens=max_tokens,
            slow_delay_s=slow_timeout_s + 30,
        )
        stack.callback(pool.stop)
        specs = [
            dataclasses.replace(s, timeout_s=slow_timeout_s if s.hotkey == "slow" else honest_timeout_s) for s in specs
        ]
        log.info(
            "embedded miner pool on %s: %d miners, honest miners on %s",
            pool.url,
            len(specs),
            upstream.label or upstream.url,
        )
        yield specs, endpoint


def _pool_servers(lm_config: LMConfig) -> list[LocalServer]:
    """``POOL_SERVERS`` servers of ``POOL_MODEL`` (slots split, one thread each), not yet started."""
    slots = -(-POOL_SLOTS // POOL_SERVERS)
    return [
        LocalServer.for_config(
            lm_config, POOL_MODEL, parallel=slots, ctx_per_slot=POOL_CTX_PER_SLOT, threads=POOL_THREADS
        )
        for _ in range(POOL_SERVERS)
    ]


def _start_side_by_side(stack: contextlib.ExitStack, servers: list[LocalServer]) -> None:
    """Start ``servers`` at once (each mostly waits for its model to load: 2-3 s each one after the other);
    every one is stopped with ``stack``, also when another fails to start. Distinct ports are chosen first
    and each model file is assembled once, before the servers look for it."""
    ports: list[int] = []
    while len(ports) < len(servers):
        if (port := free_port()) not in ports:
            ports.append(port)
    for server, port in zip(servers, ports):
        server.port = port
        stack.callback(server.stop)
    for model in {server.model.name: server.model for server in servers}.values():
        assemble(model, cache_dir=servers[0].cache_dir)
    with ThreadPoolExecutor(len(servers)) as ex:
        for future in [ex.submit(server.start) for server in servers]:
            future.result()
