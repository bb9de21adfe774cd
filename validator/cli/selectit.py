"""``validator selectit DATA.jsonl``: SelectIT token scores of instruction/response pairs."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

from consensus.errors import ConfigError
from judge.backoff import BackoffClient
from judge.config import ModelSpec, endpoint_for
from judge.datasets import read_samples
from judge.errors import InputError, RatingTokenError
from judge.selectit import SelectitScorer, load_selectit_config
from judge.tokens import discover_rating_tokens, open_tokenizer
from lm.client import OpenAIChatClient
from lm.errors import LMError, LocalServerError
from storage.files import write_atomic
from validator.cli.common import add_command
from validator.lm_session import local_endpoint
from validator.settings import load_env, load_settings

ABOUT = """\
score instruction/response pairs with the SelectIT token scorer (1..5)

For each JSON Lines record with 'instruction' and 'output' (Alpaca's 'input' is appended to the instruction),
the model rates the pair with k rating prompts; each rating is the expected value over the tokens '1'..'5' of
its next-token distribution, and k > 1 gives mu / (1 + alpha * sigma). Records without both fields score 3.0.
Writes one {"id": ..., "score": ...} line per record, in order.
"""

EPILOG = """\
The YAML file holds the seed's keys (name, model, rp_file, k, alpha, max_length, batch_size) and optionally
served_model, api_key (the NAME of an environment variable holding the key), top_logprobs, min_mass, workers,
timeout_s. model: local (the embedded LM, default) or an OpenAI-compatible URL. See docs/judging.md."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "selectit", ABOUT, epilog=EPILOG)
    p.add_argument("data", type=Path, help="JSON Lines file of samples")
    p.add_argument("--config", type=Path, default=None, help="SelectIT YAML file (default: the seed's defaults)")
    p.add_argument("--out", default="-", help="output JSON Lines file (default: standard output)")
    p.add_argument(
        "--details", action="store_true", help="add prompt_scores, valid, reason and truncated_from to each line"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="concurrent requests (default: the config's; the embedded LM: its slots)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:

    try:
        config = load_selectit_config(args.config)
        samples = read_samples(args.data)
        spec = ModelSpec(model=config.model, api_key=config.api_key, served_model=config.served_model, name=config.name)
        settings, env = load_settings(), load_env()  # the key is looked up by name in the environment and .env
        if not spec.local:
            endpoint_for(spec, env, "selectit.model", None)
    except (ConfigError, InputError) as exc:
        print(f"validator selectit: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        local, slots = None, None
        if spec.local:  # a running `validator lm serve`, else started for the command
            try:
                local, slots = stack.enter_context(local_endpoint(settings.lm_config()))
            except LocalServerError as exc:
                print(f"validator selectit: {exc}", file=sys.stderr)
                return 2
        endpoint = endpoint_for(spec, env, "selectit.model", local)
        client = BackoffClient(OpenAIChatClient(endpoint, timeout_s=config.timeout_s))
        try:
            tokenizer = open_tokenizer(endpoint)
            tokens = discover_rating_tokens(tokenizer)
            scorer = SelectitScorer(
                client, config, tokens=tokens, tokenizer=tokenizer, workers=args.workers or config.workers or slots
            )
        except (RatingTokenError, ConfigError, InputError, LMError) as exc:
            print(f"validator selectit: {exc}", file=sys.stderr)
            return 2
        scores = scorer.score(samples, progress=not args.no_progress)
    data = "".join(json.dumps(s.record(args.details), ensure_ascii=False) + "\n" for s in scores)
    if args.out == "-":
        sys.stdout.write(data)
    else:
        write_atomic(Path(args.out), data.encode("utf-8"))
    invalid = sum(1 for s in scores if not s.valid)
    truncated = sum(1 for s in scores if s.truncated_from is not None)
    mean = sum(s.score for s in scores) / len(scores)
    usage = client.meter.snapshot()
    print(
        f"{config.name}: {len(scores)} sample(s), mean {mean:.3f}, {invalid} at the default 3.0, "
        f"{truncated} truncated; rating tokens from the {tokens.source}; {usage['calls']} calls, "
        f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens; "
        f"{time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )
    return 0
