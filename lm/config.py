"""LM settings as plain values, passed in by the caller.

``validator.settings`` builds an ``LMConfig`` from its ``[lm_client]`` section (and
the seed's variable names, ``SERVER_URL``, ``MODEL``, ...); nothing in ``lm/``
reads the environment. ``Secret`` keeps API tokens out of repr, logs and records.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class Secret:
    """A string that never shows itself in repr, str, logs or records."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self):  # never pickled or copied into a record by accident
        raise TypeError("Secret values cannot be serialised")


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible server; ``url`` None means the embedded local LM."""

    url: str | None = None
    token: Secret | None = field(default=None, repr=False)
    model: str | None = None
    label: str | None = None  # stable name for caches and logs (the embedded LM's port changes per run)

    @property
    def local(self) -> bool:
        return self.url is None


SCORE_MODES = ("sampled", "logprob", "yesno")


@dataclass(frozen=True)
class LMConfig:
    endpoint: Endpoint = field(default_factory=Endpoint)
    judge: Endpoint = field(default_factory=Endpoint)
    ensemble: bool = False  # ENSEMBLE: 3 samples instead of 1
    aggregation: str = "maj"  # AGGREGATION: maj (majority vote) or avg (rounded mean)
    thinking: bool = True  # THINKING: f prefills "<think>Okay, I think I have finished thinking</think>"
    score_mode: str = "yesno"  # LM_SCORE_MODE: yesno (calibrated P(yes), the default by measurement), sampled (the seed's prompt), logprob
    calibration_file: str | None = None  # LM_CALIBRATION: extra yes/no calibrations (lm/yesno.py)
    retries: int = 5  # LM_RETRIES: attempts per checked generation
    timeout_s: float = 120.0  # LM_TIMEOUT_S: per HTTP request
    cache: bool = False  # LM_CACHE: reuse identical calls (off live, on for replay)
    cache_dir: str | None = None  # LM_CACHE_DIR
    ensemble_temperature: float = 0.7  # temperature of ensemble samples (a single call uses 0)
    local_threads: int = 0  # VALIDATOR_LM_THREADS: CPU threads of the embedded LM; 0 = one per core
    local_cache_dir: str | None = None  # where the embedded LM's model file and logs are kept (paths.cache_dir)
