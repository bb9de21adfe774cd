"""The LM edge of a process: a chat client for the configured server, or the embedded local LM.

``open_client`` yields a ``ChatClient``: for SERVER_URL, an OpenAI client;
when SERVER_URL is unset, it starts the embedded llama.cpp server and stops
it when the block ends. With LM_CACHE on (replay), identical calls are
answered from the disk cache.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Iterator

from lm.client import CachedClient, ChatClient, OpenAIChatClient
from lm.config import Endpoint, LMConfig

log = logging.getLogger(__name__)


@contextlib.contextmanager
def open_endpoint(endpoint: Endpoint) -> Iterator[Endpoint]:
    if not endpoint.local:
        yield endpoint
        return
    from lm.local import LocalServer

    with LocalServer() as server:
        yield server.endpoint


@contextlib.contextmanager
def open_client(config: LMConfig, *, cache: bool | None = None, judge: bool = False) -> Iterator[ChatClient]:
    with open_endpoint(config.judge if judge else config.endpoint) as endpoint:
        client: ChatClient = OpenAIChatClient(endpoint, timeout_s=config.timeout_s)
        if config.cache if cache is None else cache:
            from consensus.embed import cache_dir

            directory = Path(config.cache_dir) if config.cache_dir else cache_dir() / "lm-responses"
            client = CachedClient(client, directory)
        yield client


@contextlib.contextmanager
def lm_scoring(config: LMConfig) -> Iterator[ChatClient]:
    """Make ``lm.score.LM_SCORE(*parts, question=...)`` work without a client inside the block."""
    from lm import score

    with open_client(config) as client:
        score.configure(client, config)
        try:
            yield client
        finally:
            score.configure(None)
