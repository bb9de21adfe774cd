"""Reading the settings: the one place that touches ``os.environ``, ``.env`` and the TOML file.

Layers, lowest first: the built-in defaults (the seed's), a command's own
defaults (``validator daemon`` turns ``lm.enabled`` on), the TOML file
(``--config``), ``.env`` in the working directory overlaid by the process
environment (merged name by name), and command-line flags. In the
environment a field is read from ``VALIDATOR_<SECTION>__<FIELD>``, else from
its aliases in their declared order (``SERVER_URL``, ``AWS_REGION``, ...);
an empty value counts as unset. A bad value fails at start with a
``ConfigError`` naming the variable (or the file's ``section.field``, or the
command line) and the field.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from consensus.errors import ConfigError
from consensus.params import from_mapping
from validator.settings.sections import SECTIONS, Settings, aliases_of, secret_fields
from validator.settings.suggest import check_values, unknown_key, unknown_section

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ENV_PREFIX = "VALIDATOR_"
CACHE_NAME = "consensus-validator"
_TRUE = ("1", "true", "t", "yes", "y", "on")
_FALSE = ("0", "false", "f", "no", "n", "off")

# section -> field -> (value, where it came from: a variable, "command line", the config file, or None: a default)
Layer = dict[str, dict[str, tuple[Any, "str | None"]]]


class Environment(Mapping[str, str]):
    """The process environment over ``.env``: where named secrets (miners' and judges' keys) are looked up.

    Its ``repr`` shows how many variables it holds, never their values.
    """

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def __getitem__(self, name: str) -> str:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Environment({len(self._values)} variables)"


def load_env(env: Mapping[str, str] | None = None, dotenv_path: str | Path | None = ".env") -> Environment:
    """``env`` (default: the process environment) over the ``.env`` file, when there is one."""
    merged: dict[str, str] = {}
    if dotenv_path is not None and Path(dotenv_path).is_file():
        from dotenv import dotenv_values

        merged.update({k: v for k, v in dotenv_values(dotenv_path).items() if v is not None})
    merged.update(os.environ if env is None else env)
    return Environment(merged)


def prefer_offline_hub() -> None:
    """Set ``HF_HUB_OFFLINE=1`` unless the operator chose otherwise.

    The models ship inside installed packages, so the hub libraries must never
    reach for the network; the variable is theirs to read, so it is set for the
    process, once, by the command-line entry point.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _coerce(raw: str, f: dataclasses.Field, name: str) -> Any:
    """Parse an environment string into the type of the field's default; ``name`` is the variable."""
    text, default = raw.strip(), f.default
    if isinstance(default, bool):
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ConfigError(name, f"expected true/false (or t/f), got {raw!r}")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ConfigError(name, f"expected an integer, got {raw!r}") from None
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise ConfigError(name, f"expected a number, got {raw!r}") from None
    return text.lower() if f.metadata.get("choices") else text


def _fields(cls: type) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


def _environment_layer(env: Mapping[str, str]) -> Layer:
    out: Layer = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENV_PREFIX) :].partition("__")
        section, key = section.lower(), key.lower()
        cls = SECTIONS.get(section)
        if cls is None:
            raise ConfigError(
                name, unknown_section(section, SECTIONS, lambda s, k=key: f"{ENV_PREFIX}{s}__{k}".upper())
            )
        fields = _fields(cls)
        if key not in fields:
            raise ConfigError(
                name, unknown_key(section, key, cls, lambda k, s=section: f"{ENV_PREFIX}{s}__{k}".upper())
            )
        if raw.strip():
            out.setdefault(section, {})[key] = (_coerce(raw, fields[key], name), name)
    for section, cls in SECTIONS.items():
        fields = _fields(cls)
        for key, names in aliases_of(cls).items():
            if key in out.get(section, {}):
                continue  # the VALIDATOR_<SECTION>__<FIELD> name wins over every alias
            name = next((n for n in names if (env.get(n) or "").strip()), None)
            if name is not None:
                out.setdefault(section, {})[key] = (_coerce(env[name], fields[key], name), name)
    return out


def _file_layer(config_path: str | Path) -> Layer:
    path = Path(config_path)
    try:
        parsed = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read config file: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"invalid TOML: {exc}") from exc
    out: Layer = {}
    for section, values in parsed.items():
        if section not in SECTIONS:
            raise ConfigError(f"{path}: [{section}]", unknown_section(section, SECTIONS))
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: {section}", "must be a table")
        for key in values:
            if key in secret_fields(SECTIONS[section]):  # never echo the value: it is a secret
                raise ConfigError(
                    f"{path}: {section}.{key}",
                    "a secret is read only from the environment or .env, "
                    f"as VALIDATOR_{section.upper()}__{key.upper()} or "
                    "its alias (docs/configuration.md)",
                )
        out[section] = {key: (value, _FileOrigin(path)) for key, value in values.items()}  # errors name the file
    return out


class _FileOrigin(str):
    """A value's origin that is the config file: an error reads ``FILE: section.field: why``."""


def _plain_layer(values: Mapping[str, Mapping[str, Any]] | None, origin: str | None) -> Layer:
    return {
        section: {key: (value, origin) for key, value in fields.items()} for section, fields in (values or {}).items()
    }


def _default_cache_dir(env: Mapping[str, str]) -> str:
    base = (env.get("XDG_CACHE_HOME") or "").strip()
    return str(Path(base) / CACHE_NAME if base else Path.home() / ".cache" / CACHE_NAME)


def _build(section: str, cls: type, fields: dict[str, tuple[Any, str | None]]) -> Any:
    values = {key: value for key, (value, _) in fields.items()}
    try:
        check_values(section, cls, values)
        return from_mapping(cls, values, section)
    except ConfigError as exc:
        key = exc.field.partition(".")[2]
        origin = fields.get(key, (None, None))[1]
        if origin is None:
            raise
        message = str(exc)[len(exc.field) + 2 :]
        if isinstance(origin, _FileOrigin):
            raise ConfigError(f"{origin}: {exc.field}", message) from None
        raise ConfigError(f"{origin} ({exc.field})", message) from None


def load_settings(
    config_path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    dotenv_path: str | Path | None = ".env",
    *,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Validated settings from every layer (see the module docstring).

    ``env`` defaults to the process environment, ``dotenv_path`` to ``./.env``
    (None: no file). ``defaults`` are a command's own defaults, ``overrides``
    its flags: ``{"daemon": {"interval_s": 0.0}}``.
    """
    merged = load_env(env, dotenv_path)
    layers = [_plain_layer(defaults, None)]
    if config_path is not None:
        layers.append(_file_layer(config_path))
    layers += [_environment_layer(merged), _plain_layer(overrides, "command line")]
    data: Layer = {}
    for layer in layers:
        for section, fields in layer.items():
            if section not in SECTIONS:
                raise ConfigError(section, unknown_section(section, SECTIONS, str))
            data.setdefault(section, {}).update(fields)
    paths = data.setdefault("paths", {})
    if not paths.get("cache_dir", ("", None))[0]:
        paths["cache_dir"] = (_default_cache_dir(merged), None)
    return Settings(**{name: _build(name, cls, data.get(name, {})) for name, cls in SECTIONS.items()})
