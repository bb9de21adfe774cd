"""The application object: what the daemon, round and replay commands work with, built once.

A command parses its flags into ``Settings`` (``validator.settings``, the only
reader of the environment) and opens an ``App``: the settings, the merged
environment (where miners' named API keys are looked up), the store, the
embedder (from a factory: tests hand in the fake one), the LM handle when
``lm.enabled``, the NLI judge when its extra is installed (``judge.nli.installed_judge``), the miners (daemon and
round) and the clock. ``open_app``
starts what must run for the block (the embedded LM, the embedded miner
pool, the store's connections) and stops it when the block ends; nothing
below it reads a setting from anywhere but the ``App`` it is given.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lm.client import OpenAIChatClient
from minerpool.embedded import POOL_SERVERS
from storage import open_store
from storage.base import PermanentStoreError, StoreError
from storage.probe import probe
from validator.daemon.chain.edge import request_signer
from validator.lm_session import open_client
from validator.miners import MinerSpec, load_miners
from validator.miners.query import miners_query
from validator.round.stages import LMHandle
from validator.settings import Environment, Settings

if TYPE_CHECKING:
    from consensus.embedder import Embedder
    from judge.nli import Judge
    from lm.config import Endpoint, LMConfig
    from storage.base import Store
    from validator.miners import MinerSpec
    from validator.miners.query import Query
    from validator.round.stages import LMHandle

log = logging.getLogger(__name__)

EmbedderFactory = Callable[[Settings], "Embedder"]


@dataclass(frozen=True)
class Miners:
    """The miners of a daemon or round command and the query edge over them."""

    specs: tuple[MinerSpec, ...]
    query: Query


@dataclass(frozen=True)
class App:
    """Settings and the opened edges of one command; ``env`` never shows in ``repr``."""

    settings: Settings
    env: Environment = field(repr=False)
    embedder: Embedder
    store: Store | None = None
    state_dir: Path | None = None  # the daemon's local state for this store (ledger copy, pending round)
    lm: LMHandle | None = None
    miners: Miners | None = None
    clock: Callable[[], float] = time.time
    nli: Judge | None = None  # the NLI judge (judge.nli): None where the extra ``nli`` is not installed

    def presign(self) -> Callable[[str], str | None] | None:
        """A presigned-URL maker for the store's objects (S3), or None; a failure gives None, never an error."""
        presign = getattr(self.store, "presign", None)
        if presign is None:
            return None

        def url(key: str) -> str | None:
            try:
                return presign(key)
            except Exception as exc:  # a URL for review is a convenience, never a reason to lose a round
                log.warning("no presigned URL for %s: %s", key, type(exc).__name__)
                return None

        return url


def load_configured_embedder(settings: Settings) -> Embedder:
    """The embedding model the settings ask for, its export cached under ``paths.cache_dir``."""
    # lazy: looked up at each call, tests replace embedding.loader.load_embedder
    from embedding.loader import load_embedder

    e = settings.embedding
    return load_embedder(e.runtime, threads=e.threads, long_texts=e.policy(), cache_dir=settings.paths.cache)


def installed_nli() -> Judge | None:
    """The NLI judge when its extra is installed, else None (``judge.nli.installed_judge``; its model loads on the
    first round with a reference it reads)."""
    # lazy: looked up at each call, tests replace judge.nli.installed_judge
    from judge import nli

    return nli.installed_judge()


def store_for(uri: str, settings: Settings, **options: object) -> Store:
    """``storage.open_store`` with the ``[s3]`` settings for an ``s3://`` URI (boto3 loads only then)."""

    s3 = settings.s3_settings() if uri.startswith("s3://") else None
    return open_store(uri, s3=s3, **options)  # type: ignore[arg-type]


def check_store(store: Store, uri: str) -> None:
    """Write, read and delete a probe object before any miner is asked.

    A store that can never work raises ``PermanentStoreError`` (the command exits 2 with its one
    line); an outage is only logged: rounds are spooled (S3) or the ledger read waits until it is back.
    """

    try:
        probe(store)
    except PermanentStoreError as exc:
        if exc.kind == "missing bucket":
            exc.hint += "; or pass --create-bucket"
        line = " ".join(str(exc).split())  # one line, whatever the server put in its message
        raise PermanentStoreError(f"store {uri} is unusable: {exc.kind}: {line}", kind=exc.kind) from None
    except StoreError as exc:
        log.warning(
            "store %s unreachable at start (%s); waiting for it (S3: rounds are spooled locally until it is back)",
            uri,
            exc,
        )


def daemon_store(uri: str, settings: Settings, *, create_bucket: bool = False) -> tuple[Store, Path]:
    """The daemon's store (S3 behind a local spool), probed, and its local state directory."""
    # a directory is keyed by its absolute path: "runs/daemon" in two checkouts is two stores, not one
    where = uri if "://" in uri else str(Path(uri).expanduser().resolve())
    digest = hashlib.sha256(where.encode()).hexdigest()[:16]
    spool = None
    if uri.startswith("s3://"):
        spool = settings.daemon.spool_dir or str(settings.paths.cache / "spool" / digest)
    store = store_for(uri, settings, spool_dir=spool, create_bucket=create_bucket)
    check_store(store, uri)
    state = Path(settings.daemon.spool_dir or settings.paths.cache / "daemon-state") / digest
    return store, state


@contextlib.contextmanager
def open_miners(
    settings: Settings, env: Environment, lm_config: LMConfig, miners_file: str
) -> Iterator[tuple[Sequence[MinerSpec], Endpoint | None]]:
    """The miners and, when the embedded LM was started for them, its endpoint (so the validator shares it)."""

    if miners_file:
        yield load_miners(miners_file, env), None
        return
    # lazy: looked up at each call, tests replace minerpool.embedded.embedded_network
    from minerpool.embedded import embedded_network

    # the honest pool miners get an embedded LM of their own (docs/miners.md, by measurement)
    with embedded_network(lm_config, validator_lm=settings.lm.enabled) as (addresses, endpoint):
        yield [MinerSpec.of(a) for a in addresses], endpoint


def _embedded_network_stage(settings: Settings, lm_config: LMConfig) -> str:
    """What starting the embedded pool does, as the progress line says it."""
    if not lm_config.endpoint.local:
        return "starting the embedded miner pool"

    servers = POOL_SERVERS + int(settings.lm.enabled)
    return f"starting the embedded LM ({servers} llama.cpp servers) and the miner pool"


def _lm_handle(
    stack: contextlib.ExitStack, lm_config: LMConfig, shared: Endpoint | None, cache: bool | None
) -> LMHandle:

    if shared is not None and lm_config.endpoint.local:  # the embedded LM the miner pool already runs
        # streamed: a call given up on is cancelled on the server, not finished for nobody (lm.client)
        client = OpenAIChatClient(shared, timeout_s=lm_config.timeout_s, stream=True)
    else:
        client = stack.enter_context(open_client(lm_config, cache=cache))
    return LMHandle(client, lm_config)


@contextlib.contextmanager
def open_app(
    settings: Settings,
    env: Environment,
    *,
    store: str | None = None,
    durable_store: bool = False,
    create_bucket: bool = False,
    miners_file: str | None = None,
    lm_cache: bool | None = None,
    embedder_factory: EmbedderFactory = load_configured_embedder,
    clock: Callable[[], float] = time.time,
    on_progress: Callable[[str], None] | None = None,
) -> Iterator[App]:
    """Open what a command needs and close it after the block.

    ``store``: a store URI; with ``durable_store`` it is the daemon's (spooled
    when remote, probed at start, with a state directory). ``miners_file``: ask
    miners (daemon, round); "" = the embedded local pool, None = no miners
    (replay). The LM is opened when ``settings.lm.enabled``; ``lm_cache``
    overrides ``lm_client.cache`` (replay answers repeated calls from it).
    ``on_progress`` is told each step as it starts (loading the model, starting
    the LM servers and the pool: tens of seconds; ``validator.terminal.Progress``).
    """

    say = on_progress or (lambda text: None)
    lm_config = settings.lm_config()
    with contextlib.ExitStack() as stack:
        opened, state = None, None
        if store is not None:
            say(f"checking the store {store}")
            opened, state = (
                daemon_store(store, settings, create_bucket=create_bucket)
                if durable_store
                else (store_for(store, settings), None)
            )
            if hasattr(opened, "close"):
                stack.callback(opened.close)
        say("loading the embedding model")
        embedder = embedder_factory(settings)
        miners, shared = None, None
        if miners_file is not None:
            # live rounds: a model that cannot load stops the command now (exit 2), not in its first round;
            # replay and what-if open it on the first text to embed (none, over stored embeddings)
            getattr(embedder, "open", lambda: None)()
            # requests are signed with the validator's hotkey when [chain] names one (docs/chain.md); a wallet
            # that cannot be read stops the command before any miner or server starts
            signer = request_signer(settings.chain)
            say("reading the miners file" if miners_file else _embedded_network_stage(settings, lm_config))
            specs, shared = stack.enter_context(open_miners(settings, env, lm_config, miners_file))
            miners = Miners(tuple(specs), miners_query(specs, settings, signer))
        if settings.lm.enabled and shared is None and lm_config.endpoint.local:
            say("starting the embedded LM")
        handle = _lm_handle(stack, lm_config, shared, lm_cache) if settings.lm.enabled else None
        yield App(
            nli=installed_nli(),
            settings=settings,
            env=env,
            embedder=embedder,
            store=opened,
            state_dir=state,
            lm=handle,
            miners=miners,
            clock=clock,
        )
