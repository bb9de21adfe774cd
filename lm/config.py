"""LM settings as plain values, passed in by the caller.

``validator.settings`` builds an ``LMConfig`` from its ``[lm_client]`` section (and
the seed's variable names, ``SERVER_URL``, ``MODEL``, ...); nothing in ``lm/``
reads the environment. The scalar settings are declared here, once, with
``param`` (default, doc, limits; checked when the value is made): the settings
section takes them over (``validator.settings.fields.like``). ``Secret`` keeps
API tokens out of repr, logs and records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from consensus.params import check_fields, param


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
    thinking: bool = param(True, "false prefills the assistant turn with the seed's finished think block.")
    score_mode: str = param(
        "yesno",
        "LM_SCORE mode: yesno (calibrated P(yes), the default by measurement), "
        "sampled (the seed's prompt) or logprob (docs/lm.md).",
        choices=SCORE_MODES,
    )
    calibration_file: str | None = None  # extra yes/no calibrations (lm/yesno.py), consulted before the shipped one
    retries: int = param(5, "Attempts per checked generation.", lo=1, hi=100)
    timeout_s: float = param(120.0, "Seconds per HTTP request to the LM.", lo=0.001, hi=3600)
    cache: bool = param(False, "Answer identical LM calls from a disk cache (off live; replay turns it on).")
    cache_dir: str | None = None  # where that cache is kept
    local_threads: int = param(0, "CPU threads of the embedded local LM; 0 = one per core.", lo=0, hi=1024)
    local_cache_dir: str | None = None  # where the embedded LM's model file and logs are kept (paths.cache_dir)

    def __post_init__(self) -> None:
        check_fields(self, "lm_client")
