"""``validator daemon`` (round after round) and ``validator round`` (one round now, printed)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Iterator

from validator.terminal import safe

log = logging.getLogger(__name__)

# the embedded pool's per-miner timeouts (seconds)
SLOW_TIMEOUT_S = 10.0
HONEST_TIMEOUT_S = 120.0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=None, help="TOML settings file (see docs/configuration.md)")
    p.add_argument("--miners", default=None,
                   help="miners file (TOML or YAML, docs/miners.md); default: the [daemon] miners_file setting, "
                        "else the embedded local miner pool on loopback")
    p.add_argument("--lm", action=argparse.BooleanOptionalAction, default=True,
                   help="use the LM for polarity and the narrative (SERVER_URL, or the embedded local LM); default on")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "daemon", help="run rounds: ask miners, evaluate, pay, persist, update the ledger",
        description="One round per [daemon] interval_s: a prompt from the source (cycled) goes to every miner "
                    "concurrently; answers are evaluated (consensus, polarity, scores, emissions, heatmap, narrative) "
                    "and stored with the ledger (cumulative emissions, EMA scores, weights). With no miners file an "
                    "embedded pool of honest and misbehaving miners on loopback answers, backed by the local LM. "
                    "SIGINT/SIGTERM stop after the current round; a restart resumes where it stopped. "
                    "Prometheus metrics are served on 127.0.0.1 (metrics_port).")
    p.add_argument("--rounds", type=int, default=0, help="stop after N rounds (default: run until stopped)")
    p.add_argument("--store", default="./rounds", help="where rounds go: a directory or s3://bucket/prefix "
                                                        "(default ./rounds)")
    p.add_argument("--prompts", default=None, help="prompt source (JSONL, CSV, qna.yaml); default: built-in prompts")
    p.add_argument("--interval", type=float, default=None, help="seconds between round starts (overrides the setting)")
    p.add_argument("--metrics-port", type=int, default=None, help="metrics port on 127.0.0.1 (0 free, -1 off)")
    _common(p)
    p.set_defaults(run=run_daemon)

    r = sub.add_parser("round", help="run one round now against the miners and print a readable summary",
                       description="Asks every miner PROMPT once, evaluates the answers and prints who agreed, "
                                   "who failed and why, the scores and the emissions. Stores nothing unless --store.")
    r.add_argument("--prompt", required=True, help="the prompt to send")
    r.add_argument("--reference", default=None, help="a known-good answer, kept in the record")
    r.add_argument("--store", default=None, help="also store the round (directory or s3://bucket/prefix)")
    _common(r)
    r.set_defaults(run=run_round_cmd)


@contextlib.contextmanager
def open_network(settings, lm_config, miners_file: str, env) -> Iterator[tuple[list, object | None]]:
    """The miners and, when the embedded LM was started for them, its endpoint (so the validator shares it)."""
    from validator.miners import load_miners

    if miners_file:
        yield load_miners(miners_file, env), None
        return
    from validator.minerpool import default_pool

    with contextlib.ExitStack() as stack:
        endpoint = lm_config.endpoint
        if endpoint.local:
            from lm.local import LocalServer

            endpoint = stack.enter_context(LocalServer()).endpoint
        pool, specs = default_pool(endpoint.url, upstream_model=endpoint.model, upstream_key=endpoint.token,
                                   max_tokens=96, slow_delay_s=SLOW_TIMEOUT_S + 30)
        stack.callback(pool.stop)
        # The honest miners share one LM slot and answer one after another: give them room (the
        # fourth waits for the other three), and the slow miner a short timeout of its own so a
        # demo round does not wait 30 s for it.
        specs = [dataclasses.replace(s, timeout_s=SLOW_TIMEOUT_S if s.hotkey == "slow" else HONEST_TIMEOUT_S)
                 for s in specs]
        log.info("embedded miner pool on %s: %d miners", pool.url, len(specs))
        yield specs, endpoint


def _store(uri: str, settings, env):
    from consensus.embed import cache_dir
    from storage import open_store

    spool = None
    if uri.startswith("s3://"):
        digest = hashlib.sha256(uri.encode()).hexdigest()[:16]
        spool = settings.daemon.spool_dir or str(cache_dir() / "spool" / digest)
    store = open_store(uri, env=env, spool_dir=spool, create_bucket=True)
    ensure = getattr(getattr(store, "primary", store), "ensure_bucket", None)
    if ensure is not None:
        from storage.base import StoreError

        try:
            ensure()
        except StoreError as exc:  # down at start: rounds wait in the spool until it is back
            log.warning("store %s unreachable at start (%s); rounds are spooled locally until it is back", uri, exc)
    state = Path(settings.daemon.spool_dir or cache_dir() / "daemon-state") / \
        hashlib.sha256(uri.encode()).hexdigest()[:16]
    return store, state


def _presign(store):
    presign = getattr(store, "presign", None)
    if presign is None:
        return None

    def url(key: str) -> str | None:
        try:
            return presign(key)
        except Exception as exc:  # a URL for review is a convenience, never a reason to lose a round
            log.warning("no presigned URL for %s: %s", key, type(exc).__name__)
            return None
    return url


@contextlib.contextmanager
def _session(args, *, store_uri: str | None, overrides: dict) -> Iterator[dict]:
    """Settings, store, embedder, miners and LM for a daemon or a single round."""
    import dataclasses

    from consensus.embed import load_embedder
    from consensus.warmup import preload
    from validator.daemon import miners_query
    from validator.round import LMHandle
    from validator.settings import load_env, load_lm_config, load_settings

    preload()
    settings = load_settings(args.config)
    if overrides:
        settings = dataclasses.replace(settings, daemon=dataclasses.replace(settings.daemon, **overrides))
    env = load_env()
    lm_config = load_lm_config(env)
    miners_file = args.miners if args.miners is not None else settings.daemon.miners_file
    with contextlib.ExitStack() as stack:
        store = state = None
        if store_uri is not None:
            store, state = _store(store_uri, settings, env)
            if hasattr(store, "close"):
                stack.callback(store.close)
        embedder = load_embedder(settings.embedding.runtime, threads=settings.embedding.threads,
                                 long_texts=settings.embedding.policy())
        specs, shared = stack.enter_context(open_network(settings, lm_config, miners_file, env))
        handle = None
        if args.lm:
            from lm.client import OpenAIChatClient
            from validator.lm_session import open_client

            if shared is not None and lm_config.endpoint.local:
                client = OpenAIChatClient(shared, timeout_s=lm_config.timeout_s)
            else:
                client = stack.enter_context(open_client(lm_config))
            handle = LMHandle(client, lm_config)
        yield {"settings": settings, "store": store, "state": state, "embedder": embedder, "specs": specs,
               "query": miners_query(specs, settings), "lm": handle}


def _errors():
    from consensus.errors import ConfigError, EmbeddingError
    from lm.errors import LocalServerError
    from storage.base import StoreError
    from validator.daemon import DaemonError
    from validator.prompts import PromptSourceError

    return (ConfigError, EmbeddingError, LocalServerError, StoreError, DaemonError, PromptSourceError, ValueError)


def run_daemon(args: argparse.Namespace) -> int:
    from validator.daemon import Daemon
    from validator.metrics import Metrics
    from validator.prompts import load_prompts

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum, _frame):
        if received:  # a second signal: leave now (a restart resumes the round)
            raise KeyboardInterrupt
        received.append(signum)
        stop.set()
        print(f"\nsignal {signal.Signals(signum).name}: stopping after the current round "
              f"(again to stop at once)", file=sys.stderr, flush=True)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    overrides = {}
    if args.interval is not None:
        overrides["interval_s"] = args.interval
    if args.metrics_port is not None:
        overrides["metrics_port"] = args.metrics_port
    if args.prompts is not None:
        overrides["prompts_file"] = args.prompts
    metrics = Metrics()
    try:
        with _session(args, store_uri=args.store, overrides=overrides) as s:
            settings = s["settings"]
            prompts = load_prompts(settings.daemon.prompts_file)
            if settings.daemon.metrics_port >= 0:
                _, port = metrics.serve(settings.daemon.metrics_port)
                print(f"metrics: http://127.0.0.1:{port}/metrics", flush=True)
            daemon = Daemon(store=s["store"], embedder=s["embedder"], settings=settings, prompts=prompts,
                            query=s["query"], lm=s["lm"], presign=_presign(s["store"]), metrics=metrics,
                            state_dir=s["state"], stop=stop)
            print(f"daemon: {len(s['specs'])} miners, store {args.store}, resuming after round "
                  f"{daemon.ledger.last_sequence}" if daemon.ledger.last_sequence else
                  f"daemon: {len(s['specs'])} miners, store {args.store}, first round", flush=True)
            daemon.run(rounds=args.rounds, stop=stop, on_round=lambda r: print(r.line(), flush=True))
            _print_weights(daemon.ledger)
            pending = getattr(s["store"], "pending", None)
            if pending is not None and pending():
                print(f"{pending()} object(s) still spooled locally; they upload when the store is back "
                      f"(next start or next round)", file=sys.stderr)
    except KeyboardInterrupt:
        print("stopped during a round; a restart resumes it", file=sys.stderr)
        return 130
    except _errors() as exc:
        print(f"validator daemon: {exc}", file=sys.stderr)
        return 2
    finally:
        metrics.close()
    return 0


def _print_weights(ledger) -> None:
    weights = ledger.weights()
    if not weights:
        return
    print(f"ledger after round {ledger.last_sequence}: {ledger.emitted:,} units emitted in {ledger.rounds} rounds")
    print(f"  {'miner':<32} {'weight':>7} {'ema':>6} {'emissions':>12} {'in cons.':>8}")
    for miner, w in sorted(weights.items(), key=lambda kv: -kv[1]):
        m = ledger.miners[miner]
        print(f"  {safe(miner, 32):<32} {w:>7.3f} {m.ema:>6.3f} {m.emissions:>12,} {m.in_consensus:>4}/{m.rounds}")


def run_round_cmd(args: argparse.Namespace) -> int:
    import time

    from consensus.types import Round
    from storage import keys
    from storage.codec import dumps
    from validator.daemon import evaluate_record
    from validator.rounds import round_to_json

    try:
        with _session(args, store_uri=args.store, overrides={}) as s:
            result = s["query"](args.prompt)
            rid = time.strftime("adhoc-%Y%m%dT%H%M%SZ", time.gmtime())
            round_ = Round(rid, args.prompt, result.responses, args.reference)
            record, outcome = evaluate_record(round_, s["settings"], s["embedder"], result.details, lm=s["lm"])
            if s["store"] is not None:
                s["store"].put(keys.round_input(rid), dumps(round_to_json(round_)), "application/json")
                if outcome is not None and outcome.heatmap_png is not None:
                    s["store"].put(keys.heatmap(rid), outcome.heatmap_png, "image/png")
                s["store"].put(keys.evaluation(rid), dumps(record), "application/json")
    except _errors() as exc:
        print(f"validator round: {exc}", file=sys.stderr)
        return 2
    print(summarise(record, round_, result.seconds))
    return 0


def summarise(record: dict, round_, query_seconds: float) -> str:
    """A round record as text for a terminal (miner text escaped and cut)."""
    lines = [f"round {safe(record['round_id'], 40)}: {safe(record['prompt'], 100)}"]
    c = record["consensus"]
    if record.get("status") == "no_quorum":
        lines.append(f"NO QUORUM: {c.get('note')}; nobody is paid")
    else:
        lines.append(f"consensus {c['score']:.3f} ({'reached' if c['reached'] else 'not reached'}, threshold "
                     f"{c['threshold']}); pool {record['emissions']['pool']:,} units; miners asked in "
                     f"{query_seconds:.1f} s")
    lines.append(f"  {'miner':<20} {'status':<16} {'score':>6} {'paid':>7} {'latency':>8}  answer / failure")
    for r in sorted(record["responses"], key=lambda r: (-r["score"]["composite"], r["index"])):
        status = "in consensus" if r["in_consensus"] else (r.get("error") or r["reason"])
        shown = r.get("detail") or r.get("error") if r.get("error") else round_.responses[r["index"]].text
        lines.append(f"  {safe(r['miner'], 20):<20} {safe(status, 16):<16} {r['score']['composite']:>6.1f} "
                     f"{r['emissions']['amount']:>7,} {r['latency_s']:>7.2f}s  {safe(shown or '', 60)}")
    narrative = record.get("narrative", {}).get("text")
    if narrative:
        lines.append("")
        lines.extend(safe(line, 400) for line in narrative.splitlines())
    return "\n".join(lines)
