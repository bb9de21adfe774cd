"""One miner as the validator knows it (``MinerSpec``) and the field checks shared by the file and the pool.

A spec is where a round's collect step sends the prompt: the hotkey that is
paid, the OpenAI-compatible base URL, the model name, the resolved API key
and an optional timeout of its own. ``entity`` is who runs the miner (an
operator name, a coldkey or a network address), carried into every response so
consensus can see several hotkeys of one operator.
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from consensus.errors import ConfigError
from lm.config import Secret

MAX_HOTKEY_CHARS = 256  # the same bound as a round's miner ids (InputLimits.max_id_chars)
MAX_MODEL_CHARS = 256
MAX_ENTITY_CHARS = 256
MAX_TIMEOUT_S = 3600.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Control, format (bidi overrides, zero-width), surrogate and line/paragraph separator characters
# would let a hotkey rewrite a log line or hide itself; everything else, '/' included, is allowed
# (storage percent-encodes keys).
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


class Invalid(ValueError):
    """One field's problem; the miners file turns it into a ``MinersFileError`` naming the entry."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def show(value: Any, limit: int = 60) -> str:
    """A short, escaped repr of an untrusted value for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def has_forbidden(text: str) -> str | None:
    """The first control or format character of ``text``, or None."""
    return next((c for c in text if unicodedata.category(c) in FORBIDDEN_CATEGORIES), None)


def clean_text(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise Invalid(name, f"must be a string, got {type(value).__name__}")
    if not value.strip():
        raise Invalid(name, "empty")
    if len(value) > limit:
        raise Invalid(name, f"{len(value)} characters, more than the limit of {limit}")
    bad = has_forbidden(value)
    if bad is not None:
        raise Invalid(name, f"contains the control or format character U+{ord(bad):04X}")
    if value != value.strip():
        raise Invalid(name, "has leading or trailing whitespace")
    return value


def check_url(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("base_url", f"expected an http(s) URL such as http://127.0.0.1:8000/v1, got {show(value)}")
    try:
        parts = urlsplit(value.strip())
        port = parts.port  # raises on a malformed port
    except ValueError as exc:
        raise Invalid("base_url", f"malformed URL {show(value)}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid(
            "base_url", f"expected an http(s) URL with a host, such as http://127.0.0.1:8000/v1, got {show(value)}"
        )
    if parts.username is not None or parts.password is not None:
        # credentials in a URL end up in logs and records; keys belong in api_key_env
        raise Invalid("base_url", "must not contain user:password@ (put the key in api_key_env)")
    if parts.query or parts.fragment:
        raise Invalid("base_url", f"must not have a query or fragment, got {show(value)}")
    if port == 0:
        raise Invalid("base_url", "port 0 is not a port")
    if any(unicodedata.category(c) in FORBIDDEN_CATEGORIES or c.isspace() for c in value.strip()):
        raise Invalid("base_url", "contains whitespace or control characters")
    return value.strip().rstrip("/")


def check_env_name(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        raise Invalid("api_key_env", f"expected an environment variable name such as MINER_KEY, got {show(value)}")
    return value


def check_timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid("timeout_s", f"must be a number of seconds, got {show(value)}")
    value = float(value)
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT_S:
        raise Invalid("timeout_s", f"must be > 0 and <= {MAX_TIMEOUT_S:g} seconds, got {value!r}")
    return value


def check_entity(value: Any) -> str | None:
    return None if value is None else clean_text("entity", value, MAX_ENTITY_CHARS)


@dataclass(frozen=True)
class MinerSpec:
    """One miner: who it is, where its OpenAI-compatible server is, and how long it may take.

    ``api_key`` is the resolved key (never printed, never serialised; ``dataclasses.asdict``
    refuses it); ``api_key_env`` only records which variable it came from. ``timeout_s``
    None means the round's ``request_timeout_s``. ``entity`` (optional) names who runs the
    miner: an operator, a coldkey or a network address.
    """

    hotkey: str
    base_url: str  # e.g. http://127.0.0.1:8000/v1; the request goes to {base_url}/chat/completions
    model: str
    api_key_env: str | None = None
    timeout_s: float | None = None
    api_key: Secret | None = field(default=None, repr=False)
    entity: str | None = None

    def __post_init__(self) -> None:
        try:
            clean_text("hotkey", self.hotkey, MAX_HOTKEY_CHARS)
            object.__setattr__(self, "base_url", check_url(self.base_url))
            clean_text("model", self.model, MAX_MODEL_CHARS)
            check_env_name(self.api_key_env)
            object.__setattr__(self, "timeout_s", check_timeout(self.timeout_s))
            check_entity(self.entity)
            if self.api_key is not None and not isinstance(self.api_key, Secret):
                raise Invalid("api_key", "must be an lm.config.Secret")
        except Invalid as exc:
            raise ConfigError(f"miner {show(self.hotkey)}.{exc.field}", exc.message) from None

    @classmethod
    def of(cls, address: Any) -> MinerSpec:
        """A spec from a dataclass whose fields are all a spec's (``minerpool.MinerAddress``), checked like a
        miners file's."""
        return cls(**{f.name: getattr(address, f.name) for f in dataclasses.fields(address)})

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"
