"""Miners: the collect edge of a round (prompt -> one ``Response`` per miner) and the simulated miners.

- ``spec``: ``MinerSpec``, one miner (hotkey, URL, model, key, timeout, entity);
- ``file``: ``load_miners``, the operator's miners file (TOML or YAML) and ``MinersFileError``;
- ``limits``: ``QueryLimits``, a round query's timeouts and caps as one checked value;
- ``client``: ``query_miners``, every miner asked at once, timed to the last byte, each failure a reason;
- ``request``: one request to one miner (the POST, its timing, the body under its cap, failures by type);
- ``answers``: ``MinerAnswer``, ``FailureReason``, the chat completion parser, ``to_response``;
- ``query``: ``Query``, ``QueryResult``, ``miners_query``: the collect edge as the daemon sees it;
- ``fake``: ``FakeMiners``, the in-memory miner transport (scripted answers; tests, notebooks).

The simulated miners on loopback (the embedded network) are a package of their own, ``minerpool``.

A miner's failure is a value, never an exception; errors raised here are about the
validator's own inputs (``MinersFileError`` is a ``ConfigError``, so a ``ValueError``).
docs/miners.md describes the file, the clocks, latency, confidence and the pool.
"""

from __future__ import annotations

from validator.miners.answers import (
    FailureReason,
    MinerAnswer,
    logprob_confidence,
    outcome_counts,
    parse_chat_completion,
    to_response,
)
from validator.miners.client import query_miners, query_miners_async
from validator.miners.file import MinersFileError, load_miners
from validator.miners.limits import QueryLimits, default_max_body_bytes
from validator.miners.spec import MinerSpec

__all__ = [
    "FailureReason",
    "MinerAnswer",
    "MinerSpec",
    "MinersFileError",
    "QueryLimits",
    "default_max_body_bytes",
    "load_miners",
    "logprob_confidence",
    "outcome_counts",
    "parse_chat_completion",
    "query_miners",
    "query_miners_async",
    "to_response",
]
