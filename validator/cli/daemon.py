"""``validator daemon``: round after round against the miners, paid and persisted with the ledger."""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import threading
import time
from collections.abc import Callable

from embedding.warmup import preload
from validator.cli.common import (
    add_command,
    add_round_args,
    app_errors,
    check_miners_file,
    fail,
    load_round,
    miners_file,
)
from validator.daemon import chain as chain_mode
from validator.daemon.chain.flags import add_chain_args, chain_overrides
from validator.daemon.chain.metrics import ChainMetrics
from validator.daemon.committee_secret import committee_secret
from validator.daemon.daemon import DaemonError
from validator.daemon.prometheus import Metrics
from validator.daemon.task_source import TaskSource, TaskSourceError
from validator.review.unpaid import Tally, closing_summary, stored_identical
from validator.round.canaries import load_canaries
from validator.round.prompt_source import BUILTIN, load_prompts
from validator.settings.sections import DaemonSettings
from validator.terminal import Progress

ABOUT = """\
run rounds: ask miners, evaluate, pay, persist, update the ledger

One tick per [daemon] interval_s: the miners are split into committees of about [daemon] committee_size (16;
one committee, everyone in one round, below twice that) and each committee's round asks its miners, concurrently,
its own prompt from the source, in an order drawn from the committees' secret (docs/daemon.md); answers
are evaluated (consensus, polarity, scores, emissions, heatmap, narrative) and stored with the ledger
(cumulative emissions, EMA scores, weights). With no miners file an embedded pool of honest and misbehaving
miners on loopback answers, backed by the local LM. With --netuid the miners are a Bittensor subnet's (its
metagraph's served axons, every request signed with the validator's hotkey) and the ledger's weights are
planned, or set with --set-weights, once per tempo (docs/chain.md). SIGINT/SIGTERM stop after the current
round; a restart resumes where it stopped. Prometheus metrics are served on 127.0.0.1 (metrics_port).
"""


# The flags that override a [daemon] setting for this run: flag -> (setting, metavar, help); the type is the setting's
SETTING_FLAGS = {
    "--prompts": (
        "prompts_file",
        "FILE",
        "prompt source (JSONL, CSV, qna.yaml), asked beside tasks; default: every round a task",
    ),
    "--canaries": (
        "canaries_file",
        "FILE",
        "known-answer prompts (JSONL, CSV, qna.yaml, each with a reference answer) mixed into the "
        "rounds at daemon.canary_rate (default 10%%); each miner's accuracy on them scales its "
        "weight. examples/canaries/boolq.jsonl is one (docs/daemon.md)",
    ),
    "--canary-rate": ("canary_rate", "SHARE", "share of rounds that ask a canary (0..1)"),
    "--interval": ("interval_s", "SECONDS", "seconds between round starts (0 with the embedded miner pool)"),
    "--metrics-port": ("metrics_port", "PORT", "metrics port on 127.0.0.1 (0 a free one, -1 off)"),
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "daemon", ABOUT)
    p.add_argument("--rounds", type=int, default=0, help="stop after N rounds (default: run until stopped)")
    p.add_argument(
        "--store", default="./rounds", help="where rounds go: a directory or s3://bucket/prefix (default ./rounds)"
    )
    p.add_argument(
        "--create-bucket",
        action="store_true",
        help="create the S3 bucket of --store if it does not exist (default: a missing bucket is an "
        "error, so a mistyped name does not start a new ledger)",
    )
    for flag, (setting, metavar, help_) in SETTING_FLAGS.items():
        declared = {f.name: f for f in dataclasses.fields(DaemonSettings)}[setting]
        kind = type(declared.default)
        p.add_argument(
            flag,
            type=None if kind is str else kind,
            default=None,
            metavar=metavar,
            help=f"{help_} ([daemon] {setting}" + (f", default {declared.default})" if declared.default != "" else ")"),
        )
    add_round_args(p, "true for the daemon")
    add_chain_args(p, daemon=True)
    p.set_defaults(run=run_daemon)


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum, _frame):
        if received:  # a second signal: leave now (a restart resumes the round)
            raise KeyboardInterrupt
        received.append(signum)
        stop.set()
        print(
            f"\nsignal {signal.Signals(signum).name}: stopping after the current round (again to stop at once)",
            file=sys.stderr,
            flush=True,
        )

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    return stop


def run_daemon(args: argparse.Namespace) -> int:
    # lazy: looked up at each call, tests replace validator.app.open_app
    from validator.app import open_app
    from validator.daemon.daemon import Daemon, store_lease

    stop = _stop_on_signals()
    progress = Progress()
    flags = {setting: getattr(args, flag[2:].replace("-", "_")) for flag, (setting, _, _) in SETTING_FLAGS.items()}
    metrics = Metrics()
    try:
        settings, env = load_round(
            args, {"daemon": {k: v for k, v in flags.items() if v is not None}, **chain_overrides(args)}
        )
        if settings.chain.enabled and miners_file(args, settings):
            return fail("daemon", "a netuid and a miners file: the miners come from the metagraph or the file")
        prompts, canaries, miners = _inputs(args, settings, env)  # an operator's mistake first, in one line
        # /metrics from the first second: an outage at boot (a silent chain, a lease held elsewhere, a model that
        # loads slowly) is then visible to Prometheus; in chain mode the metagraph's age counts from now
        chain_metrics = ChainMetrics(metrics.registry, started_at=time.time()) if settings.chain.enabled else None
        busy: ValueError | None = None  # a port in use is said after the lease: "store in use" names the cause
        if settings.daemon.metrics_port >= 0:
            try:
                _, port = metrics.serve(settings.daemon.metrics_port)
                progress.done(f"metrics: http://127.0.0.1:{port}/metrics")
            except ValueError as exc:
                busy = exc
        preload()
        # chain mode: wallet, subnet, registration and permit checked before the lease and any server
        with (
            progress,
            chain_mode.session(settings, stop=stop) as chain,
            store_lease(args.store, settings, create_bucket=args.create_bucket, stop=stop) as renew_lease,
            open_app(
                settings,
                env,
                store=args.store,
                durable_store=True,
                create_bucket=args.create_bucket,
                miners_file=None if chain else miners,
                on_progress=progress.later,
            ) as app,
        ):
            if busy is not None:
                raise busy
            secret = committee_secret(settings, app.state_dir)
            daemon = Daemon(
                secret=secret,
                tasks=_task_source(settings, secret, prompts, app.state_dir),
                store=app.store,
                embedder=app.embedder,
                settings=settings,
                prompts=prompts,
                query=chain.miners if chain else app.miners.query,
                lm=app.lm,
                nli=app.nli,
                presign=app.presign(),
                metrics=metrics,
                state_dir=app.state_dir,
                stop=stop,
                clock=app.clock,
                on_progress=progress,
                canaries=canaries,
            )
            if chain:
                getattr(app.embedder, "open", lambda: None)()  # a model that cannot load stops now, not in round 1
                chain.start(daemon, app.store, on_line=progress.done, on_fatal=stop.set, metrics=chain_metrics)
                progress.done(f"chain: {chain.describe()}")
            where = f"daemon: {len((chain.miners if chain else app.miners).specs)} miners, store {args.store}"
            if canaries:
                where += f", {len(canaries)} canaries at {settings.daemon.canary_rate:.0%} of rounds"
            if daemon.tasks is not None:
                t = daemon.tasks
                where += f", tasks in {t.share:.0%} of rounds ({len(t.families)} families)"
            notice = daemon.repeat_notice()
            if notice is not None:
                progress.done(notice)
            progress.done(
                f"{where}, resuming after round {daemon.ledger.last_sequence}"
                if daemon.ledger.last_sequence
                else f"{where}, first round"
            )

            def between_rounds() -> None:
                renew_lease()
                if chain:
                    chain.after_round(daemon)

            tally = Tally()
            after = _after_round(progress, between_rounds, settings, args, tally, metrics, lambda: daemon.ledger)
            daemon.run(rounds=args.rounds, stop=stop, on_round=after)
            if chain and chain.fatal:
                return fail("daemon", chain.fatal)
            _closing(daemon.ledger, tally, app.store, args.store)
            pending = getattr(app.store, "pending", None)
            if pending is not None and pending():
                print(
                    f"{pending()} object(s) still spooled locally; they upload when the store is back "
                    f"(next start or next round)",
                    file=sys.stderr,
                )
    except KeyboardInterrupt:
        print("stopped during a round; a restart resumes it", file=sys.stderr)
        return 130
    except app_errors() as exc:
        return fail("daemon", exc)
    finally:
        metrics.close()
    return 0


def _inputs(args: argparse.Namespace, settings, env) -> tuple:
    """Every input read and checked before the lease is taken and any server starts (issue 27: --prompts was read
    after three LM servers and the pool had started): the prompts, the canaries, the whole miners file (its path)."""

    miners = check_miners_file(args, settings, env)
    prompts = load_prompts(settings.daemon.prompts_file) if settings.daemon.prompts_file else ()
    if not prompts and not settings.tasks.enabled:
        if settings.chain.enabled:
            raise DaemonError(
                "chain mode needs a prompt source: tasks are off ([tasks] enabled = false) and no daemon.prompts_file "
                "is given; the six built-in prompts would repeat every six rounds (turn tasks on, or give prompts)"
            )
        prompts = BUILTIN  # a local trial: its start line says they repeat
    canaries = load_canaries(settings.daemon.canaries_file) if settings.daemon.canaries_file else ()
    return prompts, canaries, miners


def _task_source(settings, secret: bytes, prompts, state_dir):
    """The daemon's tasks (``validator.daemon.task_source``): every round without prompts, else ``tasks.share`` of them."""
    if not settings.tasks.enabled:
        return None
    try:
        return TaskSource(settings.tasks, secret, every_round=not prompts, state_dir=state_dir)
    except TaskSourceError as exc:
        raise DaemonError(str(exc)) from None


def _after_round(
    progress: Progress,
    between_rounds: Callable[[], None],
    settings,
    args: argparse.Namespace,
    tally: Tally | None = None,
    metrics=None,
    ledger: Callable[[], object] | None = None,
):
    """After each round: its line, its unpaid miners counted (``tally``), the metrics (reasons, LM time, the
    ``ledger``'s weights), ``between_rounds`` (the lease renewed; in chain mode the weights' turn), and when
    the next round starts if it waits."""
    done = [0]

    def after(report) -> None:
        progress.done(report.line())
        if tally is not None:
            # each miner's rounds are those it sat in (with committees, not every round of the run)
            tally.add(report.unpaid, report.members or None, round_id=report.round_id)
        if metrics is not None:
            metrics.observe_unpaid(report.unpaid)
            metrics.observe_lm(report.stages, settings.lm.round_budget_s)
            if ledger is not None:
                metrics.observe_ledger(ledger())
        between_rounds()
        done[0] += 1
        wait = settings.daemon.interval_s - report.seconds
        if wait >= 1 and (not args.rounds or done[0] < args.rounds):
            progress.idle(f"next round in {wait:.0f} s (daemon.interval_s {settings.daemon.interval_s:g})")

    return after


def _closing(ledger, tally, store, uri: str) -> None:
    """The run's last words (``validator.review.unpaid``): weights, why each 0, where the results are."""

    if ledger.weights():
        print(closing_summary(ledger, tally, uri, identical=stored_identical(store, tally.last)))
