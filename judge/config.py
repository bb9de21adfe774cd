"""LLM-as-a-judge settings: the seed's ``llm_aaj`` section (YAML) and the equivalent flags.

A model or a judge is a ``ModelSpec``: ``model`` is ``local`` (the embedded
LM) or the URL of an OpenAI-compatible server; ``name`` labels it in the
outputs; ``api_key`` is the NAME of an environment variable (or ``.env``
entry) holding the key, never the key itself (the key is read when the run
starts and only ever held as an ``lm.config.Secret``); ``chat_template`` is
an optional prompt template; ``served_model`` is the model name sent in
requests (servers with several models need it).

``LlmaajConfig`` holds a whole run; the mode follows from what is given:
models and judges -> ask then judge; models only -> ask; judges with
response files -> judge only. Its fields are declared with ``param`` (the
project's one vocabulary: default, doc, limits) and validated once, here; the
YAML section's keys are its fields, and a spec's keys ``ModelSpec``'s.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from consensus.errors import ConfigError
from consensus.params import check_fields, param
from judge.errors import JudgeConfigError
from judge.outputs import FORMATS
from judge.templates import DEFAULT_MODEL_TEMPLATE, SEED_JUDGE_TEMPLATE, check_template
from lm.config import Endpoint, Secret
from storage.files import FileFormatError, read_yaml

LOCAL = "local"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _unset(value: Any) -> bool:
    """The seed writes ``chat_template: None`` (a string in YAML) for "the default"."""
    return value is None or (isinstance(value, str) and value.strip() in ("", "None", "none", "null", "~"))


@dataclass(frozen=True)
class ModelSpec:
    model: str = param(LOCAL, "local (the embedded LM) or the URL of an OpenAI-compatible server.")
    name: str = param("", "Its label in the outputs; empty = derived from the model.")
    api_key: str = param("", "The NAME of the environment variable (or .env entry) holding the key.")
    chat_template: str = param("", "A prompt template; empty = the default template of its role.")
    served_model: str = param("", "The model name sent in requests (servers with several models need it).")

    @property
    def local(self) -> bool:
        return self.model == LOCAL

    def label(self) -> str:
        """The name, or one derived from the model: ``local``, or the server's host and port."""
        if self.name:
            return self.name
        if self.local:
            return LOCAL
        host = urlparse(self.model).netloc or self.model
        return f"{host}/{self.served_model}" if self.served_model else host


def check_spec(spec: ModelSpec, where: str, role: str) -> ModelSpec:
    if spec.model != LOCAL:
        parsed = urlparse(spec.model)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise JudgeConfigError(
                f"{where}.model",
                f"expected 'local' (the embedded LM) or an http(s) URL such as "
                f"http://127.0.0.1:8080/v1, got {spec.model!r} (models on the "
                f"file system are not served by this tool)",
            )
    if spec.api_key and not _ENV_NAME.match(spec.api_key):
        # never echo the value: it may be a key pasted by mistake
        raise JudgeConfigError(
            f"{where}.api_key",
            "must be the NAME of an environment variable (or .env entry) that holds the key, not the key itself",
        )
    required = ("question",) if role == "model" else ("question", "answer", "reference_answer")
    if spec.chat_template:
        check_template(spec.chat_template, required, f"{where}.chat_template")
    return spec


def spec_from_mapping(data: Any, where: str, role: str) -> ModelSpec:
    if isinstance(data, str):
        data = {"model": data}
    if not isinstance(data, dict):
        raise JudgeConfigError(where, "expected a mapping with model, name, api_key, chat_template")
    unknown = [k for k in data if k not in SPEC_KEYS]
    if unknown:
        raise JudgeConfigError(f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(SPEC_KEYS)})")
    values: dict[str, str] = {}
    for key in SPEC_KEYS:
        raw = data.get(key)
        if _unset(raw):
            continue
        if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
            raise JudgeConfigError(f"{where}.{key}", f"expected text, got {type(raw).__name__}")
        values[key] = str(raw).strip() if key != "chat_template" else str(raw)
    return check_spec(ModelSpec(**values), where, role)


@dataclass(frozen=True)
class LlmaajConfig:
    """One run of LLM-as-a-judge."""

    models: tuple[ModelSpec, ...] = param((), "Models to ask (ModelSpec entries).")
    judges: tuple[ModelSpec, ...] = param((), "Judges of the answers (ModelSpec entries).")
    score_output_format: tuple[str, ...] = param(("csv",), "Output formats: csv, jsonl, xlsx.")
    input_qna: tuple[str, ...] = param((), "Question files (csv, jsonl, qna.yaml) or directories of them.")
    input_responses: tuple[str, ...] = param((), "Responses files to judge.")
    out: str = param(".", "Output directory.")
    workers: int = param(4, "Concurrent requests per model or judge.", lo=1)
    retries: int = param(5, "Attempts per judgement (checked generation).", lo=1)
    answer_max_tokens: int = param(512, "max_tokens of a model's answer.", lo=1)
    judge_max_tokens: int = param(512, "max_tokens of a judgement.", lo=16)
    timeout_s: float = param(120.0, "Seconds per request.", lo=0.0, lo_open=True)
    local_parallel: int = param(1, "Slots of the embedded LM when one is started.", lo=1)

    def __post_init__(self) -> None:
        try:
            check_fields(self, "llm_aaj")
        except ConfigError as exc:  # the judge's own error type, naming the key as the YAML and the flags do
            raise JudgeConfigError(exc.field.partition(".")[2], str(exc)[len(exc.field) + 2 :]) from None
        for fmt in self.score_output_format:
            if fmt not in FORMATS:
                raise JudgeConfigError("score_output_format", f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
        if not self.score_output_format:
            raise JudgeConfigError("score_output_format", "give at least one of csv, jsonl, xlsx")
        for role, specs in (("models", self.models), ("judges", self.judges)):
            labels = [s.label() for s in specs]
            dupes = sorted({n for n in labels if labels.count(n) > 1})
            if dupes:
                raise JudgeConfigError(role, f"two entries named {dupes[0]!r}; give each a distinct name")
        if not self.models and not self.judges:
            raise JudgeConfigError("models", "nothing to do: give models to ask (--models) and/or judges (--judges)")
        if self.models and not self.input_qna:
            raise JudgeConfigError(
                "input_qna", "models need questions: give --input-qna (csv, jsonl, qna.yaml, or a directory of them)"
            )
        if not self.models and not self.input_responses:
            raise JudgeConfigError(
                "input_responses", "judges need answers: give --models to ask, or --resp-path with responses files"
            )
        if self.input_qna and not self.models:
            raise JudgeConfigError("input_qna", "questions are only used to ask models: give --models too")

    @property
    def mode(self) -> str:
        """ask+judge, ask, or judge."""
        if self.models and self.judges:
            return "ask+judge"
        return "ask" if self.models else "judge"

    @property
    def uses_local(self) -> bool:
        return any(s.local for s in (*self.models, *self.judges))


SPEC_KEYS = tuple(f.name for f in dataclasses.fields(ModelSpec))
SECTION_KEYS = tuple(f.name for f in dataclasses.fields(LlmaajConfig))
LIST_KEYS = tuple(f.name for f in dataclasses.fields(LlmaajConfig) if isinstance(f.default, tuple))


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The ``llm_aaj`` section of a YAML file (top level, or under ``evaluate`` as in ilab's file)."""
    path = Path(path)
    try:
        doc = read_yaml(path)
    except FileFormatError as exc:
        raise JudgeConfigError(exc.where, exc.problem) from None
    if isinstance(doc, dict) and isinstance(doc.get("evaluate"), dict) and "llm_aaj" in doc["evaluate"]:
        doc = doc["evaluate"]
    if not isinstance(doc, dict) or not isinstance(doc.get("llm_aaj"), dict):
        raise JudgeConfigError(str(path), "expected an 'llm_aaj' section (see docs/judging.md)")
    section = doc["llm_aaj"]
    unknown = [k for k in section if k not in SECTION_KEYS]
    if unknown:
        raise JudgeConfigError(f"{path}: llm_aaj.{unknown[0]}", f"unknown key (known: {', '.join(SECTION_KEYS)})")
    return dict(section)


def _list(value: Any, where: str) -> tuple[str, ...]:
    if _unset(value):
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return tuple(str(v).strip() for v in value)
    raise JudgeConfigError(where, "expected a list of text values")


def split_flag(value: str | None) -> list[str] | None:
    """A comma-separated flag value; empty entries are kept (``k1,,k3``: no key for the second)."""
    if value is None:
        return None
    return [v.strip() for v in value.split(",")]


def specs_from_flags(
    models: list[str], names: list[str] | None, keys: list[str] | None, served: list[str] | None, flag: str
) -> tuple[ModelSpec, ...]:
    """Specs from ``--models``-style lists.

    Keys line up with the models, or (the seed's rule) with the models that are
    endpoints, skipping ``local`` ones. Empty entries mean none.
    """
    role = "judge" if flag == "judges" else "model"
    if any(not m for m in models):
        raise JudgeConfigError(f"--{flag}", "empty entry in the list")
    if names is not None and len(names) != len(models):
        raise JudgeConfigError(f"--{role}-names", f"{len(names)} name(s) for {len(models)} {flag}")
    if served is not None and len(served) != len(models):
        raise JudgeConfigError(f"--{role}-served-names", f"{len(served)} entries for {len(models)} {flag}")
    per_model = [""] * len(models)
    if keys is not None:
        endpoints = [i for i, m in enumerate(models) if m != LOCAL]
        if len(keys) == len(models):
            per_model = keys
        elif len(keys) == len(endpoints):
            for i, key in zip(endpoints, keys):
                per_model[i] = key
        else:
            raise JudgeConfigError(
                f"--{role}-api-keys",
                f"{len(keys)} key variable(s) for {len(models)} {flag} ({len(endpoints)} of them endpoints)",
            )
    return tuple(
        check_spec(
            ModelSpec(
                model=m,
                name=(names[i] if names else ""),
                api_key=per_model[i],
                served_model=(served[i] if served else ""),
            ),
            f"--{flag}[{i}]",
            role,
        )
        for i, m in enumerate(models)
    )


def build_config(file_values: Mapping[str, Any] | None, overrides: Mapping[str, Any]) -> LlmaajConfig:
    """The run's configuration: the file's ``llm_aaj`` values, then flags (``overrides``, None = not given)."""
    data = dict(file_values or {})
    values: dict[str, Any] = {}
    for role in ("models", "judges"):
        entries = data.get(role)
        if _unset(entries):
            entries = []
        if not isinstance(entries, list):
            raise JudgeConfigError(f"llm_aaj.{role}", "expected a list of entries")
        values[role] = tuple(spec_from_mapping(e, f"llm_aaj.{role}[{i}]", role[:-1]) for i, e in enumerate(entries))
    for key in LIST_KEYS:
        if key in data and key not in ("models", "judges"):
            values[key] = _list(data[key], f"llm_aaj.{key}")
    for key in SECTION_KEYS:
        if key not in LIST_KEYS and key in data and not _unset(data[key]):
            values[key] = str(data[key]) if key == "out" else data[key]
    for key, value in overrides.items():
        if value is not None:
            values[key] = value
    if "score_output_format" in values and not values["score_output_format"]:
        del values["score_output_format"]
    return LlmaajConfig(**values)


def resolve_key(spec: ModelSpec, env: Mapping[str, str], where: str) -> Secret | None:
    """The API key named by ``spec.api_key``, read from ``env`` (the environment and .env)."""
    if not spec.api_key or spec.local:
        return None
    value = env.get(spec.api_key)
    if not value:
        raise JudgeConfigError(
            spec.api_key,
            f"the environment variable named by the api_key of {where} "
            f"{spec.label()!r} is not set (export it or put it in .env)",
        )
    return Secret(value)


def endpoint_for(spec: ModelSpec, env: Mapping[str, str], where: str, local: Endpoint | None) -> Endpoint:
    """The server of a model or judge; ``local`` is the embedded LM's endpoint once started."""
    if spec.local:
        if local is None:
            raise JudgeConfigError(where, "the embedded local LM is not running")
        return replace(local, label=f"{local.label} as {spec.label()}")
    return Endpoint(
        url=spec.model.rstrip("/"),
        token=resolve_key(spec, env, where),
        model=spec.served_model or None,
        label=f"{spec.model.rstrip('/')} {spec.label()}",
    )


def template_for(spec: ModelSpec, role: str) -> str:
    if spec.chat_template:
        return spec.chat_template
    return DEFAULT_MODEL_TEMPLATE if role == "model" else SEED_JUDGE_TEMPLATE
