"""What the subcommands share: the settings flags, loading settings at start, and the one-line failure.

Every command that evaluates rounds takes ``--config`` (a TOML file), ``--profile`` (a named profile shipped
with the product: ``seed``, the seed's behaviour) and ``--lm/--no-lm``; its flags become the top layer of ``load_settings`` (so a
bad flag value is reported like a bad variable, naming the field), and its
own defaults sit under the file (``validator daemon`` turns the LM on).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tqdm import tqdm

from chain.errors import ChainError
from consensus.errors import ConfigError, EmbeddingError
from lm.errors import LocalServerError
from storage.base import StoreError
from storage.codec import dumps
from storage.files import write_atomic
from validator.app import store_for
from validator.daemon.daemon import DaemonError
from validator.miners import load_miners
from validator.replaying.committee_whatif import committee_whatif
from validator.replaying.committees_report import CommitteesFile
from validator.replaying.engine import LocalExecutor
from validator.replaying.ray_engine import RayExecutor, RayOptions
from validator.replaying.selection import RoundSelection
from validator.round.prompt_source import PromptSourceError
from validator.settings import PROFILES, Environment, Settings, load_env, load_settings
from validator.terminal import safe

if TYPE_CHECKING:
    from consensus.embedder import Embedder
    from storage.base import Store
    from validator.replaying.engine import Executor

T = TypeVar("T")

# daemon and round ask the LM unless told otherwise (lm.enabled's own default, false, is replay's)
LM_DEFAULT = {"lm": {"enabled": True}}
# With the embedded LM (no server_url) the narrative is the template unless a config asks for the LM's:
# on 2 cores the 1.5B model never finished one within its 30 s allowance (3 of 3 rounds in every
# `python -m benchmarks.main_job` run, docs/performance.md), so the LM narrative only delayed the next round.
# The reference check likewise: one LLM-as-a-judge call (the seed's prompt, a reasoning before the verdict)
# took the whole 30 s round budget on 2 cores (idle main job, 2026-11-23), so the embedded LM compares the
# factual check's short answers with the reference instead (lm.reference_mode, docs/lm.md).
EMBEDDED_LM_DEFAULT = {"lm": {"narrative": False, "reference_mode": "short"}}
# With the embedded miner pool (no miners file) the daemon's rounds run back to back: [daemon] interval_s paces
# the queries real miners receive, and the pool is a simulation on loopback (README's first command waited
# 9-10 s between its rounds for nobody; docs/daemon.md). A config file, the environment or --interval still set it.
EMBEDDED_POOL_DEFAULT = {"daemon": {"interval_s": 0.0}}


def add_command(sub: argparse._SubParsersAction, name: str, about: str, **kwargs: Any) -> argparse.ArgumentParser:
    """Subcommand ``name`` of ``sub``. ``about``'s first line is its one-line help in the parent's ``--help``, the
    rest (after a blank line) the description of its own ``--help``, as click reads a command's docstring."""
    summary, _, description = about.partition("\n\n")
    return sub.add_parser(name, help=summary.strip(), description=description.strip(), **kwargs)


def add_config_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=None, help="TOML settings file (see docs/configuration.md)")
    add_profile_arg(p)


def add_profile_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        choices=tuple(PROFILES),
        default=None,
        help="a named profile under --config, the environment and the flags: seed = the seed's behaviour, every "
        "default changed since at its old value (LOF, the tanh top bonus, ...; docs/configuration.md, 'Profiles')",
    )


def add_lm_arg(p: argparse.ArgumentParser, default_text: str) -> None:
    p.add_argument(
        "--lm",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="use the LM for polarity, reference judging and the narrative (SERVER_URL, or the embedded "
        f"local LM); overrides the [lm] enabled setting, which defaults to {default_text}",
    )


def add_miners_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--miners",
        default=None,
        help="miners file (TOML or YAML, docs/miners.md); default: the [daemon] miners_file setting, "
        "else the embedded local miner pool on loopback",
    )


def add_round_args(p: argparse.ArgumentParser, lm_default_text: str) -> None:
    """--config, --miners and --lm: the flags of a command that asks miners for rounds (daemon, round); its
    settings come from ``load_round``."""
    add_config_arg(p)
    add_miners_arg(p)
    add_lm_arg(p, lm_default_text)


def load_round(
    args: argparse.Namespace, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> tuple[Settings, Environment]:
    """``load`` for a command that asks miners for rounds (``add_round_args``): the LM on unless told otherwise."""
    return load(args, defaults=LM_DEFAULT, overrides=overrides)


def miners_file(args: argparse.Namespace, settings) -> str:
    """--miners, else the [daemon] miners_file setting ("" = the embedded pool); the flag stays out of records."""
    return args.miners if args.miners is not None else settings.daemon.miners_file


def check_miners_file(args: argparse.Namespace, settings, env) -> str:
    """The miners file (--miners, else the setting; "" = the embedded pool) read and checked whole before anything
    starts: every mistake in it is reported at once (``MinersFileError``), not one per run after the servers have
    started. Returns the path checked, the one to open."""
    path = miners_file(args, settings)
    if path:
        load_miners(path, env)
    return path


def load(
    args: argparse.Namespace,
    *,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[Settings, Environment]:
    """Settings for a command (``--profile``, ``--config``, ``--lm`` and the given flag overrides) and the merged environment.

    Whenever the embedded LM will be asked (``LM_DEFAULT``: daemon, round; or ``--lm``: replay) it adds
    ``EMBEDDED_LM_DEFAULT``, and with ``LM_DEFAULT`` the embedded miner pool adds ``EMBEDDED_POOL_DEFAULT``,
    as defaults: below the config file, the environment and the flags.
    """
    layered = {section: dict(values) for section, values in (overrides or {}).items()}
    if getattr(args, "lm", None) is not None:
        layered.setdefault("lm", {})["enabled"] = args.lm
    profile = getattr(args, "profile", None)
    settings = load_settings(getattr(args, "config", None), profile=profile, defaults=defaults, overrides=layered)
    extra = []
    if (defaults is LM_DEFAULT or settings.lm.enabled) and not settings.lm_client.server_url:
        extra.append(EMBEDDED_LM_DEFAULT)
    if (
        defaults is LM_DEFAULT
        and hasattr(args, "miners")
        and miners_file(args, settings) == ""
        and not settings.chain.enabled
    ):
        extra.append(EMBEDDED_POOL_DEFAULT)
    if extra:
        merged = {section: dict(values) for section, values in (defaults or {}).items()}
        for more in extra:
            for section, values in more.items():
                merged.setdefault(section, {}).update(values)
        settings = load_settings(getattr(args, "config", None), profile=profile, defaults=merged, overrides=layered)
    return settings, load_env()


def app_errors() -> tuple[type[BaseException], ...]:
    """What a command reports in one line and exits 2 for: bad settings or inputs, a store or LM that cannot start."""

    return (
        ConfigError,
        EmbeddingError,
        LocalServerError,
        StoreError,
        DaemonError,
        PromptSourceError,
        ValueError,
        ChainError,
    )


def fail(command: str, exc: BaseException | str) -> int:
    print(f"validator {command}: {exc}", file=sys.stderr)
    return 2


def unwritable(directory: str | Path) -> str | None:
    """Why ``directory`` (an ``--out``) cannot take a file, in words, or None when it can: made if missing and a
    file written and removed in it, before a long computation whose result would otherwise be lost at the end."""
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-check-"):
            pass
    except OSError as exc:
        return f"cannot write to --out {safe(str(path), 200)}: {exc.strerror or exc}"
    return None


def failure_line(failure) -> str:  # a validator.records.failed_round.Failure
    """One round that failed, as a line: its round id (when its input could be read) and why; the error of an
    unreadable input names its key."""

    where = f"{safe(failure.round_id, 80)}: " if failure.round_id is not None else ""
    return f"  failed: {where}{safe(failure.error, 400)}"


def add_engine_args(p: argparse.ArgumentParser) -> None:
    """--engine, --address and --num-cpus: shared by ``whatif`` and ``replay``."""
    p.add_argument(
        "--engine",
        choices=("inprocess", "ray"),
        default="inprocess",
        help="inprocess (default): one round after the other in this process; ray: rounds as Ray tasks "
        "on a cluster (--address) or on a local Ray runtime started for this run",
    )
    p.add_argument(
        "--address",
        default=None,
        help="with --engine ray: the cluster to join (host:port of `ray start --head`, ray://..., auto); "
        "workers read and write the same store (s3:// for machines that share no disk)",
    )
    p.add_argument(
        "--num-cpus",
        type=int,
        default=None,
        help="with --engine ray and no --address: worker processes of the local runtime (default: one per core this process may run on)",
    )


@dataclass(frozen=True)
class Engine:
    """What ``replay`` and ``whatif`` drive: the settings, the driver's store, the executor of --engine."""

    settings: Settings
    store: Store
    executor: Executor
    embedder: Embedder | None  # in this process only (Ray workers load their own)
    clock: Callable[[], float] = time.time


@contextlib.contextmanager
def open_engine(
    args: argparse.Namespace, settings: Settings, env: Environment, uri: str, *, lm_cache: bool | None = None
) -> Iterator[Engine]:
    """The --engine of ``args`` over the store at ``uri``: Ray (``--address``, ``--num-cpus``), or this process
    with the command's own store, model and LM (``validator.app.open_app``), closed after the block."""
    if args.engine == "ray":
        yield Engine(
            settings, store_for(uri, settings), RayExecutor(uri, RayOptions(args.address, args.num_cpus)), None
        )
        return
    # lazy: looked up at each call, tests replace validator.app.open_app
    from validator.app import open_app

    with open_app(settings, env, store=uri, lm_cache=lm_cache) as app:
        assert app.store is not None
        yield Engine(
            settings, app.store, LocalExecutor(app.store, app.embedder, app.lm, app.nli), app.embedder, app.clock
        )


def with_progress(no_progress: bool, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``work(*args, **kwargs, on_total=..., on_done=...)`` under a progress bar over rounds (``progress``)."""
    with progress(no_progress) as bar:
        return work(*args, on_total=total_of(bar), on_done=bar.update, **kwargs)


def total_of(bar) -> Callable[[int], None]:
    """An ``on_total(n)`` that sets the progress bar's total."""

    def on_total(n: int) -> None:
        bar.total = n
        bar.refresh()

    return on_total


def add_selection_args(p: argparse.ArgumentParser, scope: str = "") -> None:
    """--round-ids, --since and --until: which stored rounds (``selection_from``); ``scope`` prefixes their help."""
    p.add_argument("--round-ids", default=None, help=f"{scope}only these round ids (comma-separated)")
    p.add_argument("--since", default=None, help=f"{scope}rounds started at or after this ISO time (UTC)")
    p.add_argument("--until", default=None, help=f"{scope}rounds started before this ISO time (UTC)")


def selection_from(args: argparse.Namespace):
    """The ``RoundSelection`` of --round-ids/--since/--until; ``ValueError`` naming a bad time."""

    for flag, bound in (("--since", args.since), ("--until", args.until)):
        if bound is not None:
            try:
                datetime.fromisoformat(bound.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(f"{flag}: not an ISO 8601 time: {bound!r}") from None
    ids = frozenset(x.strip() for x in args.round_ids.split(",") if x.strip()) if args.round_ids else None
    return RoundSelection(ids, args.since, args.until)


def progress(no_progress: bool):
    """A tqdm bar over rounds (rounds done / total, rounds per second) on stderr."""

    return tqdm(total=None, unit="round", disable=no_progress, file=sys.stderr, dynamic_ncols=True)


def committees_command(
    args: argparse.Namespace, settings, env, selection, *, command: str = "whatif", source: str | None = None
) -> int:
    """``--committee-size K`` of ``whatif`` and of ``replay STORE``: the stored rounds of ``source`` (``args.store``)
    split into committees (``validator.replaying.committee_whatif``), OUT/committees.json written, the store not."""

    if args.committee_size < 2:
        return fail(command, f"--committee-size {args.committee_size}: at least 2")
    if (why := unwritable(args.out)) is not None:
        return fail(command, why)
    if args.committee_seed is not None:
        secret = hashlib.sha256(f"whatif-committees:{args.committee_seed}".encode()).digest()
    elif settings.committees.secret:
        secret = settings.committees.secret.encode("utf-8")
    else:
        return fail(
            command,
            "--committee-size needs --committee-seed S or committees.secret (VALIDATOR_COMMITTEE_SECRET); a daemon "
            "run without one generated its own and logged its file at start "
            "(<cache>/daemon-state/<store hash>/committee-secret): VALIDATOR_COMMITTEE_SECRET=$(cat that file) "
            "draws with it",
        )
    try:
        with open_engine(args, settings, env, source or args.store) as engine:
            if engine.embedder is None:
                return fail(command, "--committee-size runs in this process: leave out --engine ray")
            result = with_progress(
                args.no_progress,
                committee_whatif,
                engine.store,
                settings,
                engine.embedder,
                committee_size=args.committee_size,
                secret=secret,
                selection=selection,
            )
    except app_errors() as exc:
        return fail(command, exc)
    out = Path(args.out) / "committees.json"
    report = CommitteesFile.of(result)
    try:
        write_atomic(out, dumps(report.to_json()))
    except OSError as exc:  # it could be written a moment ago: a full disk, a directory gone
        return fail(command, f"cannot write {safe(str(out), 200)}: {exc.strerror or exc}")
    print(
        f"{result.rounds} rounds split into {result.committees} committees of about {args.committee_size}\n"
        f"{'miner':32}  {'weight as stored':>16}  {'with committees':>16}  {'units as stored':>16}  {'with committees':>16}"
    )
    for m in report.miners:
        print(
            f"{safe(m.miner, 32):32}  {m.weight_before:16.4f}  {m.weight_after:16.4f}"
            f"  {m.units_before:16,}  {m.units_after:16,}"
        )
    for line in committee_notes(result, args):
        print(line)
    print(f"\ncommittees.json: {safe(str(out), 200)}")
    return 0


def committee_notes(result, args: argparse.Namespace) -> list[str]:
    """Why the committees' units grow, and which settings the committees ran with that the stored rounds did not
    (a ``validator.replaying.committee_whatif.CommitteeWhatIf``)."""
    drawn = f"--committee-seed {args.committee_seed}" if args.committee_seed is not None else "committees.secret"
    before, after = result.original.emitted, result.split.emitted
    lines = [
        "",
        f"units emitted: {before:,} as stored, {after:,} with committees"
        + (f" (x{after / before:.2f})" if before else "")
        + f": each committee is paid as a round of its own, {result.rounds} rounds became {result.committees} "
        f"committees, so {result.committees} pools instead of {result.rounds} (x{result.pools:.2f}), each scaled by "
        "its own committee's consensus (a small committee agrees less); compare the weights (shares of the "
        "ledger), not the units",
        f"settings: committees of about {args.committee_size}, drawn with {drawn}; the LM off (a what-if asks none)",
    ]
    if result.compared:
        changed = [
            f"  {safe(c['setting'], 60)}: {safe(repr(c['old']), 60)} -> {safe(repr(c['new']), 60)}"
            for c in result.changes
        ]
        lines += (
            ["recorded settings that differ from the stored rounds':", *changed]
            if changed
            else ["no recorded setting differs from the stored rounds'"]
        )
    return lines
