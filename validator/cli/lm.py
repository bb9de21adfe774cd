"""``validator lm serve`` and ``validator lm score``: the LM layer from the command line."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import signal
import sys
import threading
import time
from pathlib import Path

from consensus.errors import ConfigError
from lm import score_eval, yesno
from lm.client import OpenAIChatClient
from lm.config import SCORE_MODES
from lm.embedded import DEFAULT, MODELS, LocalServer
from lm.errors import LMError, LocalServerError
from lm.lm_score import lm_score_detailed
from lm.running_server import advertise, withdraw
from validator.cli.common import add_command
from validator.lm_session import open_client, open_endpoint
from validator.settings import load_settings
from validator.terminal import Progress

ABOUT = """\
the LM layer: serve the embedded local LM, score with LM_SCORE

LM settings come from the environment / .env: SERVER_URL (unset: the embedded local LM), API_TOKEN, MODEL,
ENSEMBLE (t/f), AGGREGATION (maj/avg), THINKING (t/f), LM_SCORE_MODE (sampled/logprob/yesno), LM_CALIBRATION,
LM_CACHE (t/f). See docs/lm.md.
"""

ABOUT_SERVE = """\
start the embedded local LM and serve until interrupted

Assembles and verifies the local model (cached), starts an OpenAI-compatible llama.cpp server on 127.0.0.1 and
prints its URL; Ctrl-C stops it. While it runs, `validator lm score`, `lm eval`, `lm calibrate` and the other
commands that would start the embedded LM use it instead (about 20 s saved per command on two cores).
"""

ABOUT_SCORE = """\
print LM_SCORE (0..10) of CONTENT... for the yes/no --question

LM_SCORE(CONTENT..., QUESTION): prints an integer 0 (no) .. 10 (yes). The content parts are joined by newlines
and asked as LM_SCORE_MODE says: yesno (the default) asks the content and the question plainly and reads
P(yes) against P(no) from one call's log-probabilities, calibrated per model; sampled puts them into the
seed's prompt and reads the number written; logprob reads the score tokens' probabilities in that prompt
(docs/lm.md). On the embedded LM it answers questions about the content well and does not know facts: to ask
whether the content is true, give --reference (a text known to be right). Example: validator lm score "The sky
is green." --question "Is the statement true?" --reference "The sky is blue."
"""

ABOUT_EVAL = """\
measure LM_SCORE on a labeled yes/no set (accuracy, AUROC, calibration)

Runs LM_SCORE over labeled items {"content": [...], "question": ..., "answer": true|false} (one JSON per line)
in each mode, one item at a time, and reports per mode: accuracy, AUROC with a bootstrap interval, expected
calibration error, fallbacks to 5, the share on one value, seconds per item; writes report.json, report.md and
reliability.png to --out.
"""

ABOUT_CALIBRATE = """\
fit the yes/no calibration of the configured model on labeled items

Runs LM_SCORE's yesno mode over labeled items, fits p = sigmoid(a*z + b) on the log-odds z and writes it for
(model, prompt) to --out; point LM_CALIBRATION at that file to use it.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "lm", ABOUT)
    lm_sub = p.add_subparsers(dest="lm_command", metavar="LM_COMMAND")
    serve = add_command(lm_sub, "serve", ABOUT_SERVE)
    serve.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    serve.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads (default: the lm_client.local_threads setting, VALIDATOR_LM_THREADS; 0 = one per core)",
    )
    serve.set_defaults(run=run_serve)
    score = add_command(lm_sub, "score", ABOUT_SCORE)
    score.add_argument("content", nargs="+", help="content parts (each one argument; quote text with spaces)")
    score.add_argument("--question", "-q", required=True, help="a yes/no question")
    score.add_argument(
        "--reference",
        default=None,
        metavar="TEXT",
        help="a text known to be right: the content is judged against it (a comparison; far more reliable "
        "with the embedded LM than recalling facts: docs/lm.md)",
    )
    score.add_argument("--json", action="store_true", help="print the details (samples, expected score, fallback)")
    score.set_defaults(run=run_score)
    ev = add_command(lm_sub, "eval", ABOUT_EVAL)
    ev.add_argument("data", help="labeled items (JSONL), e.g. examples/boolq/test.jsonl")
    ev.add_argument("--modes", default="sampled,logprob,yesno", help="comma-separated: sampled, logprob, yesno")
    ev.add_argument("--out", default="lm-eval", help="report directory (default: ./lm-eval)")
    ev.add_argument("--limit", type=int, default=None, help="only the first N items")
    _local_model_arg(ev)
    ev.set_defaults(run=run_eval)
    cal = add_command(lm_sub, "calibrate", ABOUT_CALIBRATE)
    cal.add_argument("data", help="labeled items (JSONL), e.g. examples/boolq/calibration.jsonl")
    cal.add_argument("--out", required=True, help="calibrations file to add the fit to (JSON, created if missing)")
    _local_model_arg(cal)
    cal.set_defaults(run=run_calibrate)
    p.set_defaults(run=lambda args: (p.print_help(), 2)[1])


def _local_model_arg(parser: argparse.ArgumentParser) -> None:

    parser.add_argument(
        "--local-model",
        choices=sorted(MODELS),
        default=None,
        help=f"with SERVER_URL unset: which embedded model to start (default {DEFAULT.name})",
    )


def _config():
    """The LM settings (``lm.config.LMConfig``) from the environment / .env, through the settings package."""

    return load_settings().lm_config()


def run_serve(args: argparse.Namespace) -> int:

    # handlers first: a signal that arrives while the model loads or right after the
    # "serving" line must still stop the server cleanly
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        config = _config()
        server = LocalServer.for_config(config, port=args.port, threads=args.threads or config.local_threads or None)
        with Progress() as progress:
            progress.later(f"starting the embedded LM {server.model.name}")
            server.start()
    except (ConfigError, LocalServerError) as exc:
        print(f"validator lm serve: {exc}", file=sys.stderr)
        return 2
    advert = advertise(server)  # the other lm commands find it here and use it instead of starting their own
    print(
        f"serving {server.model.name} at {server.endpoint.url} (SERVER_URL={server.endpoint.url}); Ctrl-C stops",
        flush=True,
    )
    try:
        while not stop.is_set() and server.proc is not None and server.proc.poll() is None:
            stop.wait(0.5)
    finally:
        withdraw(advert)
        server.stop()
    return 0


def run_score(args: argparse.Namespace) -> int:

    try:
        config = _config()
    except ConfigError as exc:
        print(f"validator lm score: configuration error: {exc}", file=sys.stderr)
        return 2

    # lazy: looked up at each call, tests replace lm.running_server.running
    from lm.running_server import running

    started = config.endpoint.local and running(config.local_cache_dir) is None  # no `lm serve` to use
    t = time.perf_counter()
    try:
        with _starting(config) as progress, open_client(config) as client:
            progress.later("asking the LM")
            parts, question = with_reference(args.content, args.question, args.reference)
            result = lm_score_detailed(client, *parts, question=question, config=config)
    except (LMError, LocalServerError) as exc:
        print(f"validator lm score: {exc}", file=sys.stderr)
        return 2
    if started:
        print(
            f"({time.perf_counter() - t:.0f} s, most of it starting the embedded LM: `validator lm serve` in "
            "another terminal keeps one running, and every later call uses it)",
            file=sys.stderr,
        )
    if args.json:
        print(
            json.dumps(
                {
                    "score": result.score,
                    "expected": result.expected,
                    "samples": list(result.samples),
                    "fallback": result.fallback,
                    "mode": result.mode,
                }
            )
        )
    else:
        print(result.score)
    return 0


def with_reference(content: list[str] | tuple[str, ...], question: str, reference: str | None):
    """The content parts and question ``lm score --reference`` asks: the reference first, as a passage the
    question is answered from (the shape of the yes/no calibration's BoolQ items); unchanged without one."""
    if not reference:
        return list(content), question
    return [f"Reference (known to be correct): {reference}", "Statement: " + "\n".join(content)], (
        f"{question} Judge it only by the reference."
    )


@contextlib.contextmanager
def _starting(config):
    """Progress while the embedded LM starts (about 20 s on two cores), when no `validator lm serve` runs."""

    with Progress() as progress:
        if config.endpoint.local:
            progress.later("starting the embedded LM (`validator lm serve` in another terminal keeps one running)")
        yield progress


@contextlib.contextmanager
def _eval_client(config, local_model: str | None):
    """A client without the response cache: evaluation measures the model, not the cache; the embedded LM of
    `validator lm serve` when it runs that model, else one started for the command."""

    with (
        _starting(config) as progress,
        open_endpoint(config.endpoint, config, MODELS[local_model] if local_model else DEFAULT) as endpoint,
    ):
        progress.clear()
        yield OpenAIChatClient(endpoint, timeout_s=config.timeout_s)


def _progress(label: str, total: int):
    def show(done: int) -> None:
        print(f"\r{label}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return show


def run_eval(args: argparse.Namespace) -> int:

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in SCORE_MODES]
    if unknown or not modes:
        print(f"validator lm eval: unknown mode(s) {unknown} (known: {', '.join(SCORE_MODES)})", file=sys.stderr)
        return 2
    try:
        config = _config()
        items = score_eval.read_items(args.data)[: args.limit]
    except (ConfigError, score_eval.EvalDataError) as exc:
        print(f"validator lm eval: {exc}", file=sys.stderr)
        return 2
    reports = []
    try:
        with _eval_client(config, args.local_model) as client:
            for mode in modes:
                scored = score_eval.run_mode(
                    client,
                    items,
                    dataclasses.replace(config, score_mode=mode),
                    on_item=_progress(f"{client.model} {mode}", len(items)),
                )
                reports.append(score_eval.summarise(client.model, mode, scored))
                if mode == "yesno":  # the same answers before calibration, to show what it changes
                    identity = yesno.Calibration(model=client.model)
                    reports.append(
                        score_eval.summarise(
                            client.model, "yesno-uncalibrated", score_eval.rescored(scored, identity.score)
                        )
                    )
    except (LMError, LocalServerError) as exc:
        print(f"validator lm eval: {exc}", file=sys.stderr)
        return 2
    out = score_eval.write_report(args.out, reports)
    print(score_eval.markdown_table(reports))
    print(f"report: {out / 'report.md'}, {out / 'report.json'}, {out / 'reliability.png'}")
    return 0


def run_calibrate(args: argparse.Namespace) -> int:

    try:
        config = dataclasses.replace(_config(), score_mode="yesno")
        items = score_eval.read_items(args.data)
    except (ConfigError, score_eval.EvalDataError) as exc:
        print(f"validator lm calibrate: {exc}", file=sys.stderr)
        return 2
    try:
        with _eval_client(config, args.local_model) as client:
            scored = score_eval.run_mode(client, items, config, on_item=_progress(f"{client.model} yesno", len(items)))
    except (LMError, LocalServerError) as exc:
        print(f"validator lm calibrate: {exc}", file=sys.stderr)
        return 2
    usable = [s for s in scored if s.log_odds is not None]
    try:
        fit = yesno.fit_calibration(
            [s.log_odds for s in usable],
            [s.answer for s in usable],
            client.model,
            source=f"{Path(args.data).name} ({len(usable)} of {len(items)} items)",
        )
    except ValueError as exc:
        print(f"validator lm calibrate: {exc}", file=sys.stderr)
        return 2
    yesno.save_calibration(args.out, fit)
    print(
        f"{client.model}: p = sigmoid({fit.a:.4f} * z + {fit.b:.4f}) from {fit.n} items "
        f"({len(items) - len(usable)} without a yes/no answer); written to {args.out}"
    )
    return 0
