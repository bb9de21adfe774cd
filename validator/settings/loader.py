"""Reading the settings: the one place that touches ``os.environ``, ``.env`` and the TOML file.

Layers, lowest first: the built-in defaults, a command's own
defaults (``validator daemon`` turns ``lm.enabled`` on), a named profile
(``--profile seed``: a settings file shipped in ``validator/settings/profiles/``,
``PROFILES``), the TOML file (``--config``), ``.env`` in the working directory overlaid by the process
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
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from consensus.errors import ConfigError
from consensus.params import ConfigDeprecationWarning, build, choices_of, leaves, resolve
from validator.settings.sections import SECTIONS, Settings, aliases_of, secret_fields
from validator.settings.suggest import unknown_key, unknown_section

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ENV_PREFIX = "VALIDATOR_"
# The named profiles an operator selects (``--profile NAME``): each a settings file shipped beside this module,
# read as ``--config`` is, under it. ``seed``: the seed's behaviour, each changed default at its old value.
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
PROFILES: dict[str, Path] = {p.stem: p for p in sorted(PROFILES_DIR.glob("*.toml"))}
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


def quiet_hub_progress() -> None:
    """Set ``HF_HUB_DISABLE_PROGRESS_BARS=1`` (``--no-progress``): the hub libraries' own bars (transformers'
    "Loading weights") read it, as ``HF_HUB_OFFLINE``, when they are imported."""
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"


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
    return text.lower() if choices_of(f) else text


def _as_type_of(like: Any, text: str) -> Any:
    """``text`` read as a value of ``like``'s type (a retired key's constant), or ``text`` itself."""
    lowered = text.strip().lower()
    if isinstance(like, bool):
        return True if lowered in _TRUE else False if lowered in _FALSE else text
    try:
        return type(like)(lowered)
    except ValueError:
        return text


def _fields(cls: type) -> dict[str, dataclasses.Field]:
    return leaves(cls)


def _place(section: str, key: str, value: Any, where: str, show: Any = str) -> tuple[str, str] | None:
    """Where ``section.key`` is read today: (section, dotted field). A deprecated key (an old flat
    ``[consensus]`` key, a renamed or moved one) says so in one line naming the new key; a retired one is
    dropped when it holds the constant's value and refused otherwise; an unknown key is a ``ConfigError``
    with the closest known ones. ``where`` names the source (the file's key, the variable, the command line)."""
    cls = SECTIONS[section]
    name, mark, _ = resolve(cls, key)
    if mark is None and name is not None:
        return section, name
    if mark is None:
        raise ConfigError(where, unknown_key(section, key, cls, show))
    note = f" ({mark.note})" if mark.note and mark.new is not None else ""
    if mark.new is None:
        if isinstance(value, str) and not isinstance(mark.value, str):  # a variable's text: read as the constant's type
            value = _as_type_of(mark.value, value)
        if value != mark.value or isinstance(value, bool) != isinstance(mark.value, bool):
            raise ConfigError(where, mark.refusal(f"{section}.{key}"))
        warnings.warn_explicit(f"{where}: {mark.warning(f'{section}.{key}')}", ConfigDeprecationWarning, "settings", 0)
        return None
    new_section, new_key = (section, str(name)) if name is not None else str(mark.new).split(".", 1)
    table, _, field = f"{new_section}.{new_key}".rpartition(".")
    warnings.warn_explicit(
        f"{where}: deprecated, write [{table}] {field} (VALIDATOR_{table.replace('.', '__').upper()}__"
        f"{field.upper()}){note}",
        ConfigDeprecationWarning,
        "settings",
        0,
    )
    return new_section, new_key


def _environment_layer(env: Mapping[str, str]) -> Layer:
    out: Layer = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENV_PREFIX) :].partition("__")
        section, key = section.lower(), key.lower().replace("__", ".")
        if section not in SECTIONS:
            raise ConfigError(
                name, unknown_section(section, SECTIONS, lambda s, k=key: f"{ENV_PREFIX}{s}__{k}".upper())
            )
        if not raw.strip():
            continue
        show = _variable_of(section)
        first = _place(section, key, raw, name, show) if key not in _fields(SECTIONS[section]) else (section, key)
        if first is None:
            continue
        section, key = first
        value = _coerce(raw, _fields(SECTIONS[section])[key], name)
        out.setdefault(section, {})[key] = (value, name)
    for section, cls in SECTIONS.items():
        fields = _fields(cls)
        for key, mark in getattr(cls, "DEPRECATED", {}).items():  # a retired key's old names (the seed's ENSEMBLE)
            name = next((n for n in mark.aliases if (env.get(n) or "").strip()), None)
            if name is not None and f"{ENV_PREFIX}{section}__{key}".upper() not in env:
                _place(section, key, env[name], name, _variable_of(section))
        for key, names in aliases_of(cls).items():
            if key in out.get(section, {}):
                continue  # the VALIDATOR_<SECTION>__<FIELD> name wins over every alias
            name = next((n for n in names if (env.get(n) or "").strip()), None)
            if name is not None:
                out.setdefault(section, {})[key] = (_coerce(env[name], fields[key], name), name)
    return out


def _variable_of(section: str) -> Any:
    return lambda k: f"{ENV_PREFIX}{section}__{k.replace('.', '__')}".upper()


def _keys(cls: type, values: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """A table's keys as dotted names: ``[consensus.quality] x = 1`` (a sub-table) is ``quality.x``."""
    sections = {name.partition(".")[0] for name in _fields(cls) if "." in name}
    for key, value in values.items():
        if key in sections and isinstance(value, dict):
            yield from ((f"{key}.{k}", v) for k, v in value.items())
        else:
            yield key, value


def _table_of(section: str) -> Any:
    """How a settings file writes a key: ``[consensus.clusters] consensus_threshold`` (a bare key stays bare)."""
    return lambda k: f"[{section}.{k.rpartition('.')[0]}] {k.rpartition('.')[2]}" if "." in k else k


def _placed(layer: Mapping[str, Mapping[str, Any]], origin: Any, where: Any) -> Layer:
    """Every key of a layer where it is read today (``_place``), with its origin."""
    out: Layer = {}
    for section, values in layer.items():
        if section not in SECTIONS:
            raise ConfigError(section, unknown_section(section, SECTIONS, str))
        for key, value in _keys(SECTIONS[section], values):
            if key in _fields(SECTIONS[section]):
                out.setdefault(section, {})[key] = (value, origin)
                continue
            show = _table_of(section) if isinstance(origin, _FileOrigin) else (lambda k, s=section: f"{s}.{k}")
            place = _place(section, key, value, where(section, key), show)
            if place is not None:
                out.setdefault(place[0], {})[place[1]] = (value, origin)
    return out


def _file_layer(config_path: str | Path) -> Layer:
    path = Path(config_path)
    try:
        parsed = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read config file: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"invalid TOML: {exc}") from exc
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
    return _placed(parsed, _FileOrigin(path), lambda section, key: f"{path}: {section}.{key}")  # errors name the file


class _FileOrigin(str):
    """A value's origin that is the config file: an error reads ``FILE: section.field: why``."""


def profile_path(name: str) -> Path:
    """The shipped settings file of profile ``name``; ``ConfigError`` naming the profiles there are."""
    if name not in PROFILES:
        raise ConfigError("--profile", f"no profile {name!r}; the profiles: {', '.join(PROFILES)}")
    return PROFILES[name]


def _plain_layer(values: Mapping[str, Mapping[str, Any]] | None, origin: str | None) -> Layer:
    return _placed(values or {}, origin, lambda section, key: f"{origin or 'defaults'} ({section}.{key})")


def _default_cache_dir(env: Mapping[str, str]) -> str:
    base = (env.get("XDG_CACHE_HOME") or "").strip()
    return str(Path(base) / CACHE_NAME if base else Path.home() / ".cache" / CACHE_NAME)


def _build(section: str, cls: type, fields: dict[str, tuple[Any, str | None]]) -> Any:
    values = {key: value for key, (value, _) in fields.items()}
    try:
        return build(cls, values, section)
    except ConfigError as exc:
        key = exc.field.partition(".")[2]
        origin = fields.get(key, (None, None))[1]
        if origin is None:
            raise
        message = str(exc)[len(exc.field) + 2 :]
        if isinstance(origin, _FileOrigin):
            raise ConfigError(f"{origin}: {exc.field}", message) from None
        raise ConfigError(f"{origin} ({exc.field})", message) from None


def with_changes(settings: Settings, changes: Mapping[str, Mapping[str, Any]], origin: str = "--set") -> Settings:
    """``settings`` with some values changed (``{"consensus": {"quality.quality_prose": 0}}``), each key read as a
    settings file's is (a deprecated key with its warning, an unknown one refused with the closest known ones)."""
    placed = _placed(changes, origin, lambda section, key: f"{origin} ({section}.{key})")
    try:
        return dataclasses.replace(
            settings,
            **{
                section: build(
                    SECTIONS[section], {k: v for k, (v, _) in values.items()}, section, getattr(settings, section)
                )
                for section, values in placed.items()
            },
        )
    except ConfigError as exc:
        raise ConfigError(f"{origin} ({exc.field})", str(exc)[len(exc.field) + 2 :]) from None


def load_settings(
    config_path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    dotenv_path: str | Path | None = ".env",
    *,
    profile: str | None = None,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Validated settings from every layer (see the module docstring).

    ``env`` defaults to the process environment, ``dotenv_path`` to ``./.env``
    (None: no file). ``profile`` names one of ``PROFILES`` (None: the defaults alone).
    ``defaults`` are a command's own defaults, ``overrides`` its flags: ``{"daemon": {"interval_s": 0.0}}``.
    """
    merged = load_env(env, dotenv_path)
    layers = [_plain_layer(defaults, None)]
    if profile is not None:
        layers.append(_file_layer(profile_path(profile)))
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
