"""Ready-made pools: the embedded default network (``default_pool``) and n fast canned miners (``canned_pool``)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from lm.config import Secret
from minerpool.address import MinerAddress
from minerpool.personas import HONEST_CANNED, PERSONAS
from minerpool.server import MinerPool
from minerpool.sim import SimMiner


def _key(keys: bool) -> Secret | None:
    return Secret(secrets.token_urlsafe(24)) if keys else None


def default_miners(*, max_tokens: int = 160, slow_delay_s: float = 600.0, keys: bool = True) -> list[SimMiner]:
    """The embedded default network: 4 honest miners and 6 misbehaving ones (slow, empty, copycat, off-topic,
    HTTP 500, prompt injection).

    Each honest miner has a persona (``PERSONAS``, with its task persona) and its own seed and temperatures
    (``honest_sampling`` and ``task_temperature`` of its name); without an upstream it answers one of the four canned
    on-topic texts, each with its own synthetic log-probability.
    """
    miners = [
        SimMiner(
            p.name,
            "honest",
            api_key=_key(keys),
            persona=p.system,
            task_persona=p.task,
            task_examples=p.examples,
            max_tokens=max_tokens,
            text=HONEST_CANNED[i % len(HONEST_CANNED)],
            logprob=-0.05 - 0.05 * i,
        )
        for i, p in enumerate(PERSONAS)
    ]
    return miners + [
        SimMiner("slow", "slow", api_key=_key(keys), delay_s=slow_delay_s),
        SimMiner("empty", "empty", api_key=_key(keys)),
        SimMiner("copycat", "copycat", api_key=_key(keys), copy_of=PERSONAS[0].name, delay_s=0.5),
        SimMiner("offtopic", "offtopic", api_key=_key(keys)),
        SimMiner("http500", "http500", api_key=_key(keys)),
        SimMiner("injection", "injection", api_key=_key(keys)),
    ]


def default_pool(
    upstream_url: str | Sequence[str] | None = None,
    *,
    upstream_model: str | None = None,
    upstream_key: Secret | None = None,
    max_tokens: int = 160,
    slow_delay_s: float = 600.0,
    keys: bool = True,
) -> tuple[MinerPool, list[MinerAddress]]:
    """The embedded default network (``default_miners``), started, and its specs.

    Honest miners forward to ``upstream_url`` (the local LM's base URL); None gives them
    canned on-topic answers. With ``keys`` each miner requires a random bearer key, which
    its spec carries. Stop the pool when done (``with pool:``).
    """
    miners = default_miners(max_tokens=max_tokens, slow_delay_s=slow_delay_s, keys=keys)
    pool = MinerPool(miners, upstream_url=upstream_url, upstream_model=upstream_model, upstream_key=upstream_key)
    pool.start()
    return pool, pool.specs()


def canned_pool(
    n: int,
    *,
    text: str = "Canned answer {name}: {prompt}",
    delay_s: float = 0.0,
    logprob: float | None = None,
    keys: bool = False,
) -> tuple[MinerPool, list[MinerAddress]]:
    """``n`` fast canned miners (``canned-0000``...), started: the benchmark's and fast tests' network."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    miners = [
        SimMiner(f"canned-{i:04d}", "canned", text=text, delay_s=delay_s, logprob=logprob, api_key=_key(keys))
        for i in range(n)
    ]
    pool = MinerPool(miners)
    pool.start()
    return pool, pool.specs()
