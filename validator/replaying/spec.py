"""What a worker is handed and what it evaluates with: the job, the ``WorkSpec`` and the ``Resources``.

A ``Job`` is the per-round work as a value: a rounds file's first
evaluation (``Job.first()``: artefacts at the round's own keys) or a
re-evaluation of stored rounds (``Job.replay(replay_id, selection)``: new
records beside the originals). Engines carry it to their workers; nothing
switches on a flag.

``WorkSpec`` is what a remote worker receives: the store's URI, the settings
with every secret blanked (a worker reads its own from its environment,
``with_local_secrets``), the job, and picklable factories for the embedder
and the store (tests hand in the fake embedder and a journaling store).
``resources_for`` builds the worker's ``Resources`` once per process; the
in-process engine is handed its ``Resources`` (the command's own store,
embedder and LM).
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from consensus.embedder import Embedder
from storage.base import Store
from storage.keys import ORIGINAL, Target
from validator.app import installed_nli, load_configured_embedder, store_for
from validator.replaying.selection import RoundSelection
from validator.settings import Settings, load_settings, secret_fields

if TYPE_CHECKING:
    from judge.nli import Judge
    from validator.round.stages import LMHandle

StoreFactory = Callable[[str, Settings], Store]
EmbedderFactory = Callable[[Settings], Embedder]


@dataclass(frozen=True)
class Job:
    """The per-round work (module docstring); ``replay_id`` None is a rounds file's first evaluation."""

    replay_id: str | None = None
    selection: RoundSelection = RoundSelection()

    @classmethod
    def first(cls) -> Job:
        return cls()

    @classmethod
    def replay(cls, replay_id: str, selection: RoundSelection = RoundSelection()) -> Job:
        return cls(replay_id, selection)

    @property
    def is_first(self) -> bool:
        return self.replay_id is None

    @property
    def target(self) -> Target:
        return ORIGINAL if self.replay_id is None else Target.replay(self.replay_id)


@dataclass(frozen=True)
class Resources:
    """What a worker evaluates with: opened once per process (``resources_for``) or handed in (in-process)."""

    store: Store
    embedder: Embedder
    settings: Settings
    lm: LMHandle | None = None  # in-process only: Ray workers run without the LM
    nli: Judge | None = None  # the NLI judge (judge.nli) when its extra is installed: asked as ``jobs.finish`` says


@dataclass(frozen=True)
class WorkSpec:
    """Everything a remote worker needs, picklable and without secrets (see the module docstring)."""

    store_uri: str
    settings: Settings
    job: Job
    embedder_factory: EmbedderFactory | None = None  # None: the configured model (validator.app)
    store_factory: StoreFactory | None = None  # None: validator.app.store_for


def without_secrets(settings: Settings) -> Settings:
    """``settings`` with every secret field blanked: what may travel to workers in task arguments."""
    sections = {}
    for f in dataclasses.fields(settings):
        section = getattr(settings, f.name)
        blank = {name: "" for name in secret_fields(type(section))}
        sections[f.name] = dataclasses.replace(section, **blank) if blank else section
    return dataclasses.replace(settings, **sections)


def with_local_secrets(settings: Settings) -> Settings:
    """``settings`` with the secrets of this process's environment (the worker's own, never sent to it)."""

    local = load_settings(None)
    sections = {}
    for f in dataclasses.fields(settings):
        names = secret_fields(type(getattr(settings, f.name)))
        if names:
            mine = getattr(local, f.name)
            sections[f.name] = dataclasses.replace(getattr(settings, f.name), **{n: getattr(mine, n) for n in names})
    return dataclasses.replace(settings, **sections)


_RESOURCES: dict[str, Resources] = {}  # per worker process: one store and one model load per spec


def resources_for(spec: WorkSpec) -> Resources:
    """The store and embedder of ``spec`` in this process, built on first use and kept."""
    fingerprint = hashlib.sha256(
        pickle.dumps((spec.store_uri, spec.settings, spec.embedder_factory, spec.store_factory))
    ).hexdigest()
    if fingerprint not in _RESOURCES:
        settings = with_local_secrets(spec.settings)
        store = (spec.store_factory or store_for)(spec.store_uri, settings)
        embedder = (spec.embedder_factory or load_configured_embedder)(_worker_threads(settings))
        _RESOURCES[fingerprint] = Resources(store, embedder, spec.settings, nli=installed_nli())
    return _RESOURCES[fingerprint]


def _worker_threads(settings: Settings) -> Settings:
    """In a Ray worker, ``embedding.threads = 0`` (one per core) means the CPUs Ray gave the task.

    Every worker of a node would otherwise start one runtime thread per core of the node: two workers
    on two cores ran four threads and re-embedded slower than the in-process run (0.84x). On the reference
    host the thread count changes no number (each window is embedded alone, whatever the threads); on other
    CPUs it may move the model's last bits, within what a replay promises (docs/round-format.md).
    """
    if settings.embedding.threads:
        return settings
    ray = sys.modules.get("ray")  # never imported here: an in-process run does not pay Ray's import
    if ray is None:
        return settings
    try:
        if not ray.is_initialized():
            return settings
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
    except Exception:  # not in a Ray worker (or no Ray): the process's own default
        return settings
    if not cpus:
        return settings
    embedding = dataclasses.replace(settings.embedding, threads=max(1, int(cpus)))
    return dataclasses.replace(settings, embedding=embedding)
