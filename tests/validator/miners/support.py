"""Shared by the miners tests: a key that must never print, default limits, the loopback test miners."""

from __future__ import annotations

import dataclasses

from lm.config import Secret
from minerpool import SimMiner
from validator.miners import MinerSpec, QueryLimits, query_miners

KEY = "sk-test-9f8e7d6c5b4a-never-print-me"
LIMITS = QueryLimits(request_timeout_s=2.0, deadline_s=4.0, max_answer_chars=1000, max_tokens=64)

MINERS = [
    SimMiner(
        "ok",
        "canned",
        api_key=Secret(KEY),
        text="The answer to {prompt} is forty-two.",
        logprob=-0.5,
        entity="operator-a",
    ),
    SimMiner("plain", "canned", text="Plain answer."),
    SimMiner("slow", "slow", api_key=Secret(KEY), delay_s=30.0),
    SimMiner("empty", "empty", api_key=Secret(KEY)),
    SimMiner("blank", "canned", text="  \n\t "),
    SimMiner("http500", "http500", api_key=Secret(KEY)),
    SimMiner("malformed", "malformed"),
    SimMiner("nontext-list", "nontext"),
    SimMiner("nontext-number", "nontext", content=42),
    SimMiner("oversized", "oversized", size=32 * 1024 * 1024),
    SimMiner("long", "canned", text="x" * 5000),
    SimMiner("trickle", "canned", text="Trickled answer about {prompt}.", trickle_s=0.3),
    SimMiner("copycat", "copycat", copy_of="ok"),
    SimMiner("offtopic", "offtopic"),
    SimMiner("injection", "injection", api_key=Secret(KEY)),
    *[SimMiner(f"delayed-{i}", "canned", text="Delayed answer {name}.", delay_s=0.2) for i in range(6)],
]


def specs_of(addresses):
    """The validator's specs of the pool's addresses (checked as a miners file's are)."""
    return [a if isinstance(a, MinerSpec) else MinerSpec.of(a) for a in addresses]


def ask(specs, prompt="Why is the sky blue?", system_prompt=None, **overrides):
    """One query with ``LIMITS`` changed by ``overrides`` (pool addresses or specs)."""
    return query_miners(prompt, specs_of(specs), dataclasses.replace(LIMITS, **overrides), system_prompt=system_prompt)


def one(pool, name, **overrides):
    return ask([pool.spec(name)], **overrides)[0]
