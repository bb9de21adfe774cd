"""``SimMiner``: one simulated miner of the pool and its behaviour; ``Call``: one request it is answering.

Behaviours (``BEHAVIOURS``; docs/miners.md has the table): ``honest`` forwards to
the upstream LM with its persona and sampling; ``canned`` answers a fixed text;
``slow``, ``empty``, ``copycat``, ``offtopic``, ``http500`` and ``injection`` are
the misbehaving miners of the embedded default; ``malformed``, ``nontext`` and
``oversized`` are failure modes for tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lm.config import Secret
from minerpool.personas import honest_sampling, task_temperature

BEHAVIOURS = (
    "honest",
    "canned",
    "slow",
    "empty",
    "copycat",
    "offtopic",
    "http500",
    "injection",
    "malformed",
    "nontext",
    "oversized",
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


@dataclass(frozen=True)
class SimMiner:
    """One simulated miner and its behaviour (fields a behaviour does not use are ignored).

    An honest miner's ``seed`` and ``temperature`` default to ``honest_sampling(name)`` and its
    ``task_temperature`` to ``task_temperature(name)``: every honest miner samples in its own way
    unless told otherwise.
    """

    name: str  # URL path segment and the hotkey in ``pool.specs()``
    behaviour: str
    api_key: Secret | None = field(default=None, repr=False)
    persona: str = ""  # honest: the system prompt put before the validator's
    temperature: float | None = None  # honest: upstream temperature (None: from the name)
    task_persona: str = ""  # honest: the system prompt on a task prompt (personas.is_task_prompt; "" = persona)
    task_temperature: float | None = None  # honest: upstream temperature on a task prompt (None: from the name)
    task_examples: tuple[tuple[str, str], ...] = ()  # honest: worked (question, reply) pairs shown before a task
    seed: int | None = None  # honest: upstream seed (None: from the name); canned variant without upstream
    max_tokens: int = 160  # honest: cap on the upstream answer's tokens
    delay_s: float = 0.0  # canned, slow, and any other behaviour: seconds before answering
    trickle_s: float = 0.0  # canned: spread the body's bytes over this many seconds
    text: str | None = None  # canned, offtopic, injection: the answer; {prompt} and {name} are filled in
    logprob: float | None = None  # canned: every token gets this log-probability (when asked for them)
    copy_of: str | None = None  # copycat: the miner whose answer it returns
    content: Any = None  # nontext: the content value (default: a list of parts)
    size: int = 8 * 1024 * 1024  # oversized: bytes of answer streamed
    entity: str | None = None  # who runs it, carried into its spec

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"simulated miner name {self.name!r}: letters, digits, '_', '.', '-' (max 64)")
        if self.behaviour not in BEHAVIOURS:
            raise ValueError(
                f"simulated miner {self.name}: unknown behaviour {self.behaviour!r} (known: {', '.join(BEHAVIOURS)})"
            )
        if self.behaviour == "copycat" and not self.copy_of:
            raise ValueError(f"simulated miner {self.name}: a copycat needs copy_of")
        seed, temperature = honest_sampling(self.name)
        if self.seed is None:
            object.__setattr__(self, "seed", seed)
        if self.temperature is None:
            object.__setattr__(self, "temperature", temperature)
        if self.task_temperature is None:
            object.__setattr__(self, "task_temperature", task_temperature(self.name))

    @property
    def model(self) -> str:
        """The model name the miner reports (and its spec sends)."""
        return f"sim-{self.behaviour}"


@dataclass(frozen=True)
class Call:
    """One chat request a simulated miner is answering."""

    miner: SimMiner
    request: Any  # the aiohttp request (streaming behaviours write to it)
    body: dict[str, Any]
    messages: list[dict[str, Any]]
    prompt: str  # the last user message

    @property
    def wants_logprobs(self) -> bool:
        return bool(self.body.get("logprobs"))
