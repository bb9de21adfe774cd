"""The miners file: the operator's list of miners (TOML ``[[miner]]`` tables or a YAML ``miners:`` list).

``load_miners`` reads it once at start into validated ``MinerSpec`` values and
resolves each API key from the environment it is handed, into an
``lm.config.Secret`` that never prints. Every problem stops the command with a
``MinersFileError`` naming the file, the entry (number and hotkey) and the field::

    ValueError
     +-- ConfigError (consensus.errors)
          +-- MinersFileError   the miners file is unreadable or invalid
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from consensus.errors import ConfigError
from lm.config import Secret
from validator.miners.spec import (
    MAX_HOTKEY_CHARS,
    MAX_MODEL_CHARS,
    Invalid,
    MinerSpec,
    check_entity,
    check_env_name,
    check_timeout,
    check_url,
    clean_text,
    has_forbidden,
    show,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_MINERS = 4096  # InputLimits.max_responses
MAX_FILE_BYTES = 16 * 1024 * 1024
FIELDS = ("hotkey", "base_url", "model", "api_key_env", "timeout_s", "entity")
REQUIRED = ("hotkey", "base_url", "model")


class MinersFileError(ConfigError):
    """The miners file is invalid; the message names the file, the entry, its hotkey and the field."""

    def __init__(self, path: str | Path, message: str, *, index: int | None = None, hotkey: Any = None,
                 field: str | None = None) -> None:
        where = str(path)
        if index is not None:
            where += f": miner entry #{index + 1}"
            if isinstance(hotkey, str):
                where += f" (hotkey {show(hotkey)})"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(where, message)
        self.path = str(path)
        self.index = index
        self.hotkey = hotkey if isinstance(hotkey, str) else None
        self.field_name = field


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise MinersFileError(path, f"{size:,} bytes, more than the limit of {MAX_FILE_BYTES:,}")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise MinersFileError(path, f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except OSError as exc:
        raise MinersFileError(path, f"cannot read the miners file: {exc.strerror or exc}") from None


def _parse(path: Path, text: str) -> tuple[Any, str, str]:
    """The parsed document, the key holding the list, and the shape to name in errors."""
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(text), "miner", "[[miner]] tables"
        except tomllib.TOMLDecodeError as exc:
            raise MinersFileError(path, f"invalid TOML: {exc}") from None
    try:
        return yaml.safe_load(text), "miners", "a list under 'miners:'"
    except yaml.YAMLError as exc:
        raise MinersFileError(path, f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else exc}") from None


def _read_table(path: Path) -> list[Any]:
    """The raw miner entries of a TOML or YAML miners file."""
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise MinersFileError(path, f"unknown miners file type {suffix or '(none)'!r}: use .toml, .yaml or .yml")
    data, key, shape = _parse(path, _read_text(path))
    if not isinstance(data, dict):
        raise MinersFileError(path, f"expected {shape}, got {type(data).__name__}")
    unknown = [k for k in data if k != key]
    if unknown:
        raise MinersFileError(path, f"unknown top-level key {show(unknown[0])} (expected {shape})")
    entries = data.get(key)
    if not isinstance(entries, list) or not entries:
        raise MinersFileError(path, f"no miners: expected {shape}")
    if len(entries) > MAX_MINERS:
        raise MinersFileError(path, f"{len(entries)} miners, more than the limit of {MAX_MINERS}")
    return entries


def _resolve_key(key_env: str | None, env: Mapping[str, str]) -> Secret | None:
    """The API key named by ``key_env``; the value itself is never shown, not even in an error."""
    if key_env is None:
        return None
    raw = env.get(key_env)
    if raw is None or not raw.strip():
        state = "empty" if raw is not None else "not set"
        raise Invalid("api_key_env", f"environment variable {key_env} is {state} "
                                     f"(it should hold this miner's API key)")
    if has_forbidden(raw.strip()) is not None:
        raise Invalid("api_key_env", f"environment variable {key_env} contains control characters")
    return Secret(raw.strip())


def _entry(entry: dict[str, Any], env: Mapping[str, str]) -> MinerSpec:
    """One validated entry; a problem raises ``Invalid`` naming the field."""
    unknown = [k for k in entry if k not in FIELDS]
    if unknown:
        raise Invalid(str(unknown[0]), f"unknown key (known: {', '.join(FIELDS)})")
    for required in REQUIRED:
        if entry.get(required) is None:
            raise Invalid(required, "missing")
    hotkey = clean_text("hotkey", entry["hotkey"], MAX_HOTKEY_CHARS)
    base_url = check_url(entry["base_url"])
    model = clean_text("model", entry["model"], MAX_MODEL_CHARS)
    key_env = check_env_name(entry.get("api_key_env"))
    timeout = check_timeout(entry.get("timeout_s"))
    entity = check_entity(entry.get("entity"))
    return MinerSpec(hotkey=hotkey, base_url=base_url, model=model, api_key_env=key_env, timeout_s=timeout,
                     api_key=_resolve_key(key_env, env), entity=entity)


def load_miners(path: str | Path, env: Mapping[str, str]) -> list[MinerSpec]:
    """Read and validate a miners file (format chosen by extension); resolve API keys from ``env``.

    ``env`` is the environment as ``validator.settings`` merged it (this module reads no
    environment itself). Every problem raises ``MinersFileError`` naming the file, the
    entry and the field: a bad URL, a duplicate hotkey, an unset key variable (named),
    an unknown key, a bad timeout or entity.
    """
    path = Path(path)
    specs: list[MinerSpec] = []
    first: dict[str, int] = {}
    for index, entry in enumerate(_read_table(path)):
        if not isinstance(entry, dict):
            raise MinersFileError(path, f"must be a table of {', '.join(FIELDS)}, got {type(entry).__name__}",
                                  index=index)
        hotkey = entry.get("hotkey")
        if isinstance(hotkey, str) and hotkey in first:
            raise MinersFileError(path, f"duplicate hotkey, first used by entry #{first[hotkey] + 1}",
                                  index=index, hotkey=hotkey, field="hotkey")
        try:
            spec = _entry(entry, env)
        except Invalid as exc:
            raise MinersFileError(path, exc.message, index=index, hotkey=hotkey, field=exc.field) from None
        first[spec.hotkey] = index
        specs.append(spec)
    return specs
