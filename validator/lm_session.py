"""The LM edge of a process: a chat client for the configured server, or the embedded local LM.

``open_client`` yields a ``ChatClient``: for SERVER_URL, an OpenAI client;
when SERVER_URL is unset, the embedded LM that ``validator lm serve`` keeps
running (``lm.running_server``), else it starts the embedded llama.cpp server and stops
it when the block ends. With LM_CACHE on (replay), identical calls are
answered from the disk cache.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

from lm import lm_score as score
from lm.client import CachedClient, ChatClient, OpenAIChatClient
from lm.config import Endpoint, LMConfig
from lm.embedded import DEFAULT, LocalServer

log = logging.getLogger(__name__)


@contextlib.contextmanager
def open_endpoint(endpoint: Endpoint, config: LMConfig, model=None) -> Iterator[Endpoint]:
    """``endpoint``, or the embedded LM: the one ``validator lm serve`` runs, else one started as ``config``
    places it (cache directory, threads). ``model``: which embedded model (``lm.embedded.DEFAULT``)."""
    if not endpoint.local:
        yield endpoint
        return
    # lazy: looked up at each call, tests replace lm.running_server.running
    from lm.running_server import running

    model = model or DEFAULT
    served = running(config.local_cache_dir, model)
    if served is not None:
        log.info("using the embedded LM that `validator lm serve` runs at %s", served.url)
        yield served
        return
    with LocalServer.for_config(config, model) as server:
        yield server.endpoint


@contextlib.contextmanager
def local_endpoint(config: LMConfig, *, parallel: int = 1) -> Iterator[tuple[Endpoint, int]]:
    """The embedded LM for a command that asks it directly (``validator judge``, ``selectit``): the one
    ``validator lm serve`` runs (one slot), else one started with ``parallel`` slots; yields the endpoint and
    its slots. Each command used to start its own (20-25 s on two cores) even while ``lm serve`` ran."""
    # lazy: looked up at each call, tests replace lm.running_server.running
    from lm.running_server import running

    served = running(config.local_cache_dir, DEFAULT)
    if served is not None:
        log.info("using the embedded LM that `validator lm serve` runs at %s", served.url)
        yield served, 1
        return
    with LocalServer.for_config(config, parallel=parallel) as server:
        yield server.endpoint, server.parallel


@contextlib.contextmanager
def open_client(config: LMConfig, *, cache: bool | None = None, judge: bool = False) -> Iterator[ChatClient]:
    with open_endpoint(config.judge if judge else config.endpoint, config) as endpoint:
        local = (config.judge if judge else config.endpoint).local  # ours: streamed, so abandoned calls are cancelled
        client: ChatClient = OpenAIChatClient(endpoint, timeout_s=config.timeout_s, stream=local)
        if config.cache if cache is None else cache:
            if config.cache_dir is None:  # the settings always fill it in (lm_client.cache_dir or the cache)
                raise ValueError("LMConfig.cache_dir is not set: no directory for the LM response cache")
            client = CachedClient(client, Path(config.cache_dir))
        yield client


@contextlib.contextmanager
def lm_scoring(config: LMConfig) -> Iterator[ChatClient]:
    """Make ``lm.lm_score.LM_SCORE(*parts, question=...)`` work without a client inside the block."""

    with open_client(config) as client:
        score.configure(client, config)
        try:
            yield client
        finally:
            score.configure(None)
