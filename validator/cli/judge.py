"""``validator judge``: LLM-as-a-judge over evaluation questions (ask models, judge answers, or both)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from datetime import datetime, timezone
from typing import Any

from consensus.errors import ConfigError
from judge.backoff import BackoffClient
from judge.config import build_config, endpoint_for, read_config_file, specs_from_flags, split_flag, template_for
from judge.errors import InputError, JudgeConfigError
from judge.llmaaj import Participant, load_inputs
from judge.llmaaj import run as run_judging
from lm.client import OpenAIChatClient
from lm.errors import LocalServerError
from validator.cli.common import add_command
from validator.lm_session import local_endpoint
from validator.settings import load_env, load_settings

ABOUT = """\
LLM-as-a-judge: ask models the questions and/or score answers 1..5 with judges

Ask models questions from csv / jsonl / InstructLab qna.yaml files and have judge models score each answer
against the ground truth from 1 to 5. Lists are comma-separated; flags override the --config file's llm_aaj
section.
"""

EPILOG = """\
modes (from what is given):
  --models and --judges     ask the models every question, write <model>-responses-<time>.csv, then judge
  --models only             ask only: write <model>-responses-<time>.csv
  --judges and --resp-path  judge answers from responses files

A model or judge is 'local' (the embedded LM, started once for the run) or the URL of an
OpenAI-compatible server. --model-api-keys / --judge-api-keys take the NAMES of environment
variables (or .env entries) that hold the keys, never the keys: secrets stay out of shell
history, process lists and every output file. Keys line up with the list, or, as in the seed,
with its endpoints only (local entries skipped); an empty entry means no key.

example:
  export JUDGE_KEY=...
  validator judge --models local --judges https://api.example.com/v1 --judge-api-keys JUDGE_KEY \\
      --judge-served-names gpt-4o --judge-names gpt4o --input-qna questions.csv \\
      --score-output-format csv,jsonl,xlsx --out runs/judge

Outputs in --out: scores.<fmt> (one row per question, model and judge: question, ground_truth,
model, answer, judge, answer_score, answer_score_reasoning, error, source), summary.json (mean
score per model and judge, Krippendorff's alpha and weighted kappa between judges, token usage).
Exit code 1 when some answer or judgement failed (its row says why). See docs/judging.md.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "judge", ABOUT, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="YAML file with an llm_aaj section (the seed's layout)")
    g = p.add_argument_group("models to ask")
    g.add_argument("--models", help="'local' or OpenAI-compatible URLs")
    g.add_argument("--model-api-keys", metavar="ENV_NAMES", help="names of environment variables holding the keys")
    g.add_argument("--model-names", help="names used in outputs (default: 'local' or the server's host)")
    g.add_argument("--model-served-names", help="model names sent in requests (default: the server's default)")
    g = p.add_argument_group("judges")
    g.add_argument("--judges", help="'local' or OpenAI-compatible URLs")
    g.add_argument("--judge-api-keys", metavar="ENV_NAMES", help="names of environment variables holding the keys")
    g.add_argument("--judge-names", help="names used in outputs")
    g.add_argument("--judge-served-names", help="model names sent in requests")
    g = p.add_argument_group("inputs and outputs")
    g.add_argument("--input-qna", help="csv / jsonl / qna.yaml files or directories of them (questions)")
    g.add_argument("--resp-path", help="responses files to judge (csv / jsonl)")
    g.add_argument("--score-output-format", help="csv, jsonl, xlsx (default: csv)")
    g.add_argument("--out", help="output directory (default: the current directory)")
    g = p.add_argument_group("running")
    g.add_argument("--workers", type=int, help="concurrent requests per model or judge (default 4)")
    g.add_argument("--retries", type=int, help="attempts per judgement before giving up on it (default 5)")
    g.add_argument("--local-parallel", type=int, help="slots of the embedded LM (default 1)")
    g.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(run=run)


def _config(args: argparse.Namespace):

    file_values = read_config_file(args.config) if args.config else None
    overrides: dict[str, Any] = {}
    for role, flag in (("models", "model"), ("judges", "judge")):
        listed = split_flag(getattr(args, role))
        if listed is not None:
            overrides[role] = specs_from_flags(
                listed,
                split_flag(getattr(args, f"{flag}_names")),
                split_flag(getattr(args, f"{flag}_api_keys")),
                split_flag(getattr(args, f"{flag}_served_names")),
                role,
            )
        elif any(getattr(args, f"{flag}_{x}") is not None for x in ("names", "api_keys", "served_names")):
            raise JudgeConfigError(f"--{flag}-names/--{flag}-api-keys", f"given without --{role}")
    for key, flag in (
        ("input_qna", "input_qna"),
        ("input_responses", "resp_path"),
        ("score_output_format", "score_output_format"),
    ):
        value = split_flag(getattr(args, flag))
        if value is not None:
            overrides[key] = tuple(v for v in value if v)
    for key in ("out", "workers", "retries", "local_parallel"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    return build_config(file_values, overrides)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def run(args: argparse.Namespace) -> int:

    try:
        config = _config(args)
        qnas, loaded = load_inputs(config)
        settings, env = load_settings(), load_env()  # keys are looked up by name in the environment and .env
        for role, specs in (("model", config.models), ("judge", config.judges)):  # keys fail before any start-up
            for spec in specs:
                if not spec.local:
                    endpoint_for(spec, env, role, None)
    except (ConfigError, InputError) as exc:
        print(f"validator judge: {exc}", file=sys.stderr)
        return 2
    print(
        f"mode: {config.mode}; {len(qnas)} question(s), {len(loaded)} response(s) from files; "
        f"models: {', '.join(s.label() for s in config.models) or '-'}; "
        f"judges: {', '.join(s.label() for s in config.judges) or '-'}",
        file=sys.stderr,
    )
    with contextlib.ExitStack() as stack:
        local = None
        if config.uses_local:  # a running `validator lm serve`, else started for the command
            try:
                local, _ = stack.enter_context(local_endpoint(settings.lm_config(), parallel=config.local_parallel))
            except LocalServerError as exc:
                print(f"validator judge: {exc}", file=sys.stderr)
                return 2

        def participants(specs, role):
            return [
                Participant(
                    spec.label(),
                    BackoffClient(
                        OpenAIChatClient(endpoint_for(spec, env, role, local), timeout_s=config.timeout_s), seed=i
                    ),
                    template_for(spec, role),
                )
                for i, spec in enumerate(specs)
            ]

        result = run_judging(
            config,
            participants(config.models, "model"),
            participants(config.judges, "judge"),
            qnas,
            loaded,
            now=datetime.now(timezone.utc),
            progress=not args.no_progress,
        )
    if result.summary:
        print(
            "| model | judge | answers | scored | failed | mean | alpha | kappa |\n|---|---|---:|---:|---:|---:|---:|---:|"
        )
        for row in result.summary:
            print(
                f"| {row['model']} | {row['judge']} | {row['answers']} | {row['scored']} | {row['failed']} | "
                f"{_fmt(row['mean_score'])} | {_fmt(row['krippendorff_alpha'])} | {_fmt(row['weighted_kappa'])} |"
            )
    for role, usage in result.usage.items():
        for name, meter in usage.items():
            print(
                f"usage {role[:-1]} {name}: {meter['calls']} calls, {meter['failures']} failed, "
                f"{meter['prompt_tokens']} prompt + {meter['completion_tokens']} completion tokens"
            )
    for path in result.files:
        print(f"wrote {path}")
    if result.failures:
        print(
            f"validator judge: {result.failures} answer(s) or judgement(s) failed; their rows say why", file=sys.stderr
        )
        return 1
    return 0
