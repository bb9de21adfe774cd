"""The miners file: the operator's list of miners (TOML ``[[miner]]`` tables or a YAML ``miners:`` list).

``load_miners`` reads it once at start into validated ``MinerSpec`` values and
resolves each API key from the environment it is handed, into an
``lm.config.Secret`` that never prints. The whole file is checked before anything
is reported: every mistake (each entry, each field) comes in one
``MinersFileError`` naming the file, the entry (number and hotkey) and the field,
so an operator fixes them in one go, not one per start::

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
from validator.settings.suggest import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_MINERS = 4096  # InputLimits.max_responses
MAX_FILE_BYTES = 16 * 1024 * 1024
FIELDS = ("hotkey", "base_url", "model", "api_key_env", "timeout_s", "entity")
REQUIRED = ("hotkey", "base_url", "model")


class MinersFileError(ConfigError):
    """The miners file is invalid; the message names the file, the entry, its hotkey and the field.

    ``problems`` holds every mistake found (this one first); with several, the message lists them all,
    one per line, and ``index``, ``hotkey`` and ``field_name`` are the first one's.
    """

    def __init__(
        self, path: str | Path, message: str, *, index: int | None = None, hotkey: Any = None, field: str | None = None
    ) -> None:
        where = str(path)
        entry = ""
        if index is not None:
            entry = f"miner entry #{index + 1}"
            if isinstance(hotkey, str):
                entry += f" (hotkey {show(hotkey)})"
        if field is not None:
            entry += f", field {field!r}" if entry else f"field {field!r}"
        super().__init__(f"{where}: {entry}" if entry else where, message)
        self.path = str(path)
        self.index = index
        self.hotkey = hotkey if isinstance(hotkey, str) else None
        self.field_name = field
        self.line = f"{entry}: {message}" if entry else message  # this mistake without the file's name
        self.problems: tuple[MinersFileError, ...] = (self,)

    @classmethod
    def of(cls, path: str | Path, problems: list[MinersFileError]) -> MinersFileError:
        """One error for every mistake of the file: the first's when there is one, else all of them listed."""
        first = problems[0]
        if len(problems) == 1:
            return first
        error = cls(path, f"{len(problems)} mistakes:\n" + "\n".join(f"  {p.line}" for p in problems))
        error.index, error.hotkey, error.field_name = first.index, first.hotkey, first.field_name
        error.problems = tuple(problems)
        return error


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
        raise Invalid("api_key_env", f"environment variable {key_env} is {state} (it should hold this miner's API key)")
    if has_forbidden(raw.strip()) is not None:
        raise Invalid("api_key_env", f"environment variable {key_env} contains control characters")
    return Secret(raw.strip())


def _entry(entry: dict[str, Any], env: Mapping[str, str]) -> tuple[MinerSpec | None, list[Invalid]]:
    """One entry checked field by field: its spec when every field is valid, and every field's problem."""
    problems: list[Invalid] = [
        Invalid(str(k), f"unknown key ({did_you_mean(str(k), FIELDS) or 'known: ' + ', '.join(FIELDS)})")
        for k in entry
        if k not in FIELDS
    ]
    problems += [Invalid(name, "missing") for name in REQUIRED if entry.get(name) is None]
    values: dict[str, Any] = {}
    checks = (
        ("hotkey", lambda v: clean_text("hotkey", v, MAX_HOTKEY_CHARS)),
        ("base_url", check_url),
        ("model", lambda v: clean_text("model", v, MAX_MODEL_CHARS)),
    )
    for name, check in checks:
        if entry.get(name) is not None:
            values[name] = _checked(problems, check, entry[name])
    values["api_key_env"] = _checked(problems, check_env_name, entry.get("api_key_env"))
    values["timeout_s"] = _checked(problems, check_timeout, entry.get("timeout_s"))
    values["entity"] = _checked(problems, check_entity, entry.get("entity"))
    key_env = values["api_key_env"]
    api_key = _checked(problems, lambda v: _resolve_key(v, env), key_env) if key_env is not None else None
    if problems:
        return None, problems
    return MinerSpec(
        hotkey=values["hotkey"],
        base_url=values["base_url"],
        model=values["model"],
        api_key_env=key_env,
        timeout_s=values["timeout_s"],
        api_key=api_key,
        entity=values["entity"],
    ), []


_BAD = object()  # a field that failed its check (the problem is recorded)


def _checked(problems: list[Invalid], check, value: Any) -> Any:
    try:
        return check(value)
    except Invalid as exc:
        problems.append(exc)
        return _BAD


def load_miners(path: str | Path, env: Mapping[str, str]) -> list[MinerSpec]:
    """Read and validate a miners file (format chosen by extension); resolve API keys from ``env``.

    ``env`` is the environment as ``validator.settings`` merged it (this module reads no
    environment itself). Problems raise one ``MinersFileError`` naming the file, and each
    entry and field: a bad URL, a duplicate hotkey, an unset key variable (named), an unknown
    key, a bad timeout or entity. Every entry is checked before it is raised, so it lists
    every mistake of the file. A file that cannot be read or parsed is one mistake.
    """
    path = Path(path)
    specs: list[MinerSpec] = []
    first: dict[str, int] = {}
    problems: list[MinersFileError] = []
    for index, entry in enumerate(_read_table(path)):
        if not isinstance(entry, dict):
            problems.append(
                MinersFileError(
                    path, f"must be a table of {', '.join(FIELDS)}, got {type(entry).__name__}", index=index
                )
            )
            continue
        hotkey = entry.get("hotkey")
        if isinstance(hotkey, str) and hotkey in first:
            problems.append(
                MinersFileError(
                    path,
                    f"duplicate hotkey, first used by entry #{first[hotkey] + 1}",
                    index=index,
                    hotkey=hotkey,
                    field="hotkey",
                )
            )
        elif isinstance(hotkey, str):
            first[hotkey] = index
        spec, invalid = _entry(entry, env)
        problems += [MinersFileError(path, exc.message, index=index, hotkey=hotkey, field=exc.field) for exc in invalid]
        if spec is not None:
            specs.append(spec)
    if problems:
        raise MinersFileError.of(path, problems)
    return specs
