"""Where a simulated miner listens: what the pool tells a validator (the validator checks it as it checks a
miners file: ``validator.miners.MinerSpec.of``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lm.config import Secret


@dataclass(frozen=True)
class MinerAddress:
    """One simulated miner: its hotkey, its OpenAI-compatible base URL, model, key, own timeout and entity."""

    hotkey: str
    base_url: str  # the request goes to {base_url}/chat/completions
    model: str
    timeout_s: float | None = None
    api_key: Secret | None = field(default=None, repr=False)
    entity: str | None = None
