"""``validator lm serve`` and ``validator lm score``: the LM layer from the command line."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lm", help="the LM layer: serve the embedded local LM, score with LM_SCORE",
                       description="LM settings come from the environment / .env: SERVER_URL (unset: the embedded "
                                   "local LM), API_TOKEN, MODEL, ENSEMBLE (t/f), AGGREGATION (maj/avg), THINKING (t/f), "
                                   "LM_SCORE_MODE (sampled/logprob), LM_CACHE (t/f). See docs/lm.md.")
    lm_sub = p.add_subparsers(dest="lm_command", metavar="LM_COMMAND")
    serve = lm_sub.add_parser("serve", help="start the embedded local LM and serve until interrupted",
                              description="Assembles and verifies the local model (cached), starts an OpenAI-compatible "
                                          "llama.cpp server on 127.0.0.1 and prints its URL; Ctrl-C stops it.")
    serve.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    serve.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per core)")
    serve.set_defaults(run=run_serve)
    score = lm_sub.add_parser("score", help="print LM_SCORE (0..10) of CONTENT... for the yes/no --question",
                              description="LM_SCORE(CONTENT..., QUESTION): content parts are joined by newlines into "
                                          "the seed's prompt; prints an integer 0 (no) .. 10 (yes).")
    score.add_argument("content", nargs="+", help="content parts")
    score.add_argument("--question", "-q", required=True, help="a yes/no question")
    score.add_argument("--json", action="store_true", help="print the details (samples, expected score, fallback)")
    score.set_defaults(run=run_score)
    p.set_defaults(run=lambda args: (p.print_help(), 2)[1])


def _config():
    from validator.settings import load_lm_config

    return load_lm_config()


def run_serve(args: argparse.Namespace) -> int:
    from lm.errors import LocalServerError
    from lm.local import LocalServer

    # handlers first: a signal that arrives while the model loads or right after the
    # "serving" line must still stop the server cleanly
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        server = LocalServer(port=args.port, threads=args.threads).start()
    except LocalServerError as exc:
        print(f"validator lm serve: {exc}", file=sys.stderr)
        return 2
    print(f"serving {server.model.name} at {server.endpoint.url} (SERVER_URL={server.endpoint.url}); Ctrl-C stops",
          flush=True)
    try:
        while not stop.is_set() and server.proc is not None and server.proc.poll() is None:
            stop.wait(0.5)
    finally:
        server.stop()
    return 0


def run_score(args: argparse.Namespace) -> int:
    from consensus.errors import ConfigError
    from lm.errors import LMError, LocalServerError
    from lm.score import lm_score_detailed
    from validator.lm_session import open_client

    try:
        config = _config()
    except ConfigError as exc:
        print(f"validator lm score: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        with open_client(config) as client:
            result = lm_score_detailed(client, *args.content, question=args.question, config=config)
    except (LMError, LocalServerError) as exc:
        print(f"validator lm score: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"score": result.score, "expected": result.expected, "samples": list(result.samples),
                          "fallback": result.fallback, "mode": result.mode}))
    else:
        print(result.score)
    return 0
