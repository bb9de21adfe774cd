"""Settings: the only module that reads configuration files, ``.env`` and the environment.

Precedence, lowest first: built-in defaults (the seed's) < TOML file
(``--config``) < ``.env`` in the working directory < process environment.
Every value is validated once, here, and a bad one fails at start with a
message naming the file section or the variable.

Environment names are ``VALIDATOR_<SECTION>__<FIELD>`` in upper case, e.g.
``VALIDATOR_CONSENSUS__CONSENSUS_THRESHOLD=0.75`` or
``VALIDATOR_EMBEDDING__RUNTIME=torch``.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from consensus._params import check_fields, from_mapping, param
from consensus.config import ConsensusConfig
from consensus.errors import ConfigError
from emissions.config import EmissionsConfig
from validator.rounds import InputLimits

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ENV_PREFIX = "VALIDATOR_"


@dataclass(frozen=True)
class EmbeddingSettings:
    runtime: str = param("onnx", "Embedding runtime: onnx (fp32, default) or torch (fp32 reference).",
                         choices=("onnx", "torch"))
    threads: int = param(0, "Threads for the embedding runtime; 0 = one per CPU core.", lo=0)
    long_texts: str = param("sample", "Texts over one window: sample (bounded cost, spans the text) or full (every word piece).",
                            choices=("sample", "full"))
    token_budget: int = param(256, "Word pieces embedded per long text in sample mode.", lo=1, hi=100_000)
    sample_window: int = param(62, "Word pieces per sampled window (plus [CLS] and [SEP]).", lo=1, hi=254)
    window_seed: int = param(0, "Seed mixed into sampled window offsets; a private value makes them unpredictable.",
                             lo=-(2**63), hi=2**63 - 1)

    def policy(self):
        from consensus.embed import LongTextPolicy

        return LongTextPolicy(mode=self.long_texts, token_budget=self.token_budget,
                              sample_window=self.sample_window, seed=self.window_seed)

    def __post_init__(self) -> None:
        check_fields(self, "embedding")
        if self.token_budget < self.sample_window:
            raise ConfigError("embedding.token_budget", f"must be >= sample_window ({self.sample_window})")


@dataclass(frozen=True)
class LMRoundSettings:
    enabled: bool = param(False, "Use an LM in rounds (polarity, narrative): SERVER_URL, or the embedded local LM.")
    polarity: bool = param(True, "With the LM on: classify the dominant cluster's answers as yes / no / unclear.")
    narrative: bool = param(True, "With the LM on: write the narrative with the LM (template on failure).")
    workers: int = param(8, "Concurrent LM checks per round.", lo=1, hi=64)
    reference_judging: bool = param(True, "With the LM on and a round reference answer: judge each answer against "
                                          "it (LLM-as-a-judge, 1..5) and blend it into the composite "
                                          "(consensus.weight_reference).")
    selectit_confidence: bool = param(False, "With the LM on: a miner that reports no confidence gets the SelectIT "
                                             "score of (prompt, answer) as its confidence (docs/judging.md).")

    def __post_init__(self) -> None:
        check_fields(self, "lm")


@dataclass(frozen=True)
class DaemonSettings:
    interval_s: float = param(30.0, "Seconds from one round's start to the next (a slow round starts the next at once).",
                              lo=0.0)
    quorum: int = param(3, "Fewest usable answers for a round to count; below it the round is stored as no quorum "
                           "and pays nobody.", lo=2)
    request_timeout_s: float = param(30.0, "Per-miner request timeout (a miner's own timeout_s in the miners file wins).",
                                     lo=0.001, hi=3600)
    round_deadline_s: float = param(60.0, "Deadline for all miners' answers in a round.", lo=0.001, hi=7200)
    max_answer_chars: int = param(20_000, "A longer answer fails as oversized.", lo=1, hi=1_000_000)
    max_tokens: int = param(200, "max_tokens asked of miners.", lo=1, hi=100_000)
    moving_average_alpha: float = param(0.1, "Weight of the newest round in each miner's EMA score.", lo=0.0, hi=1.0,
                                        lo_open=True)
    metrics_port: int = param(0, "Port of the Prometheus endpoint on 127.0.0.1; 0 = a free port, -1 = off.",
                              lo=-1, hi=65535)
    round_prefix: str = param("round-", "Round ids are this prefix and a 6-digit sequence number.")
    miners_file: str = param("", "Miners file (TOML or YAML); empty = the embedded local miner pool.")
    prompts_file: str = param("", "Prompt source (JSONL, CSV or InstructLab qna.yaml), cycled; empty = built-in prompts.")
    spool_dir: str = param("", "Local spool for a remote store that is down; empty = <cache>/spool/<store hash>.")

    def __post_init__(self) -> None:
        check_fields(self, "daemon")
        if any(c in self.round_prefix for c in "\x00\n\r") or len(self.round_prefix) > 64:
            raise ConfigError("daemon.round_prefix", "at most 64 characters, no control characters")


@dataclass(frozen=True)
class Settings:
    consensus: ConsensusConfig = field(default_factory=ConsensusConfig)
    emissions: EmissionsConfig = field(default_factory=EmissionsConfig)
    input: InputLimits = field(default_factory=InputLimits)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    lm: LMRoundSettings = field(default_factory=LMRoundSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {s.name: dataclasses.asdict(getattr(self, s.name)) for s in dataclasses.fields(self)}


SECTIONS: dict[str, type] = {
    "consensus": ConsensusConfig,
    "emissions": EmissionsConfig,
    "input": InputLimits,
    "embedding": EmbeddingSettings,
    "lm": LMRoundSettings,
    "daemon": DaemonSettings,
}


def _coerce(raw: str, default: Any, name: str) -> Any:
    """Parse an environment string into the type of the field's default."""
    text = raw.strip()
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("1", "true", "t", "yes", "y", "on"):
            return True
        if lowered in ("0", "false", "f", "no", "n", "off"):
            return False
        raise ConfigError(name, f"expected true/false, got {raw!r}")
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
    return text


def _env_overrides(env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENV_PREFIX):].partition("__")
        section, key = section.lower(), key.lower()
        cls = SECTIONS.get(section)
        if cls is None:
            raise ConfigError(name, f"unknown settings section {section!r} (known: {', '.join(SECTIONS)})")
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        if key not in defaults:
            raise ConfigError(name, f"unknown setting {section}.{key} (known: {', '.join(sorted(defaults))})")
        out.setdefault(section, {})[key] = _coerce(raw, defaults[key], name)
    return out


LM_VARIABLES = ("SERVER_URL", "API_TOKEN", "MODEL", "ENSEMBLE", "AGGREGATION", "THINKING", "LM_SCORE_MODE",
                "LM_RETRIES", "LM_TIMEOUT_S", "LM_CACHE", "LM_CACHE_DIR", "LM_CALIBRATION",
                "LM_AS_JUDGE_SERVER_URL", "LM_AS_JUDGE_API_TOKEN", "LM_AS_JUDGE_MODEL")


def _merged_env(env: Mapping[str, str] | None, dotenv_path: str | Path | None) -> dict[str, str]:
    merged: dict[str, str] = {}
    if dotenv_path is not None and Path(dotenv_path).is_file():
        from dotenv import dotenv_values

        merged.update({k: v for k, v in dotenv_values(dotenv_path).items() if v is not None})
    merged.update(os.environ if env is None else env)
    return merged


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("t", "true", "1", "yes", "y", "on"):
        return True
    if value in ("f", "false", "0", "no", "n", "off"):
        return False
    raise ConfigError(name, f"expected t or f, got {raw!r}")


def _url(env: Mapping[str, str], name: str) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    from urllib.parse import urlparse

    parsed = urlparse(raw)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(name, f"expected an http(s) URL such as http://127.0.0.1:8080/v1, got {raw!r}")
    return raw.rstrip("/")


def load_lm_config(env: Mapping[str, str] | None = None, dotenv_path: str | Path | None = ".env"):
    """The LM settings (lm.config.LMConfig) from the environment and .env; bad values name the variable.

    SERVER_URL unset means the embedded local LM. API tokens are wrapped so
    they never appear in logs or records.
    """
    from lm.config import SCORE_MODES, Endpoint, LMConfig, Secret

    e = _merged_env(env, dotenv_path)

    def token(name: str):
        raw = e.get(name)
        return Secret(raw) if raw else None

    aggregation = (e.get("AGGREGATION") or "maj").strip().lower()
    if aggregation not in ("maj", "avg"):
        raise ConfigError("AGGREGATION", f"expected maj or avg, got {e.get('AGGREGATION')!r}")
    mode = (e.get("LM_SCORE_MODE") or "yesno").strip().lower()
    if mode not in SCORE_MODES:
        raise ConfigError("LM_SCORE_MODE", f"expected one of {', '.join(SCORE_MODES)}, got {e.get('LM_SCORE_MODE')!r}")

    def number(name: str, default: float, cast: type, lo: float) -> Any:
        raw = e.get(name)
        if raw is None or raw.strip() == "":
            return default
        try:
            value = cast(raw.strip())
        except ValueError:
            raise ConfigError(name, f"expected a {cast.__name__}, got {raw!r}") from None
        if value < lo:
            raise ConfigError(name, f"must be >= {lo}, got {raw!r}")
        return value

    endpoint = Endpoint(_url(e, "SERVER_URL"), token("API_TOKEN"), (e.get("MODEL") or "").strip() or None)
    judge_url = _url(e, "LM_AS_JUDGE_SERVER_URL")
    judge = Endpoint(judge_url, token("LM_AS_JUDGE_API_TOKEN"), (e.get("LM_AS_JUDGE_MODEL") or "").strip() or None) \
        if judge_url else endpoint
    return LMConfig(
        endpoint=endpoint, judge=judge,
        ensemble=_flag(e, "ENSEMBLE", False), aggregation=aggregation, thinking=_flag(e, "THINKING", True),
        score_mode=mode, retries=number("LM_RETRIES", 5, int, 1), timeout_s=number("LM_TIMEOUT_S", 120.0, float, 0.001),
        cache=_flag(e, "LM_CACHE", False), cache_dir=(e.get("LM_CACHE_DIR") or None),
        calibration_file=(e.get("LM_CALIBRATION") or None))


def load_env(env: Mapping[str, str] | None = None, dotenv_path: str | Path | None = ".env") -> dict[str, str]:
    """The process environment over ``.env``: where miners' API keys and other secrets are read from."""
    return _merged_env(env, dotenv_path)


def load_settings(config_path: str | Path | None = None, env: Mapping[str, str] | None = None,
                  dotenv_path: str | Path | None = ".env") -> Settings:
    """Build validated settings from defaults, a TOML file, ``.env`` and the environment."""
    data: dict[str, dict[str, Any]] = {}
    if config_path is not None:
        path = Path(config_path)
        try:
            parsed = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(str(path), f"cannot read config file: {exc.strerror or exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(str(path), f"invalid TOML: {exc}") from exc
        for section, values in parsed.items():
            if section not in SECTIONS:
                raise ConfigError(f"{path}: [{section}]", f"unknown section (known: {', '.join(SECTIONS)})")
            if not isinstance(values, dict):
                raise ConfigError(f"{path}: {section}", "must be a table")
            data[section] = dict(values)
    for section, values in _env_overrides(_merged_env(env, dotenv_path)).items():
        data.setdefault(section, {}).update(values)
    built = {name: from_mapping(cls, data.get(name, {}), name) for name, cls in SECTIONS.items()}
    return Settings(**built)
