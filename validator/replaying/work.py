"""The per-round work of ``validator whatif`` and ``validator replay STORE``, the same under every engine.

A batch of stored rounds (their ``input.json`` keys) goes through
``run_batch``: read the input and the original record, reuse the stored
embeddings when the model and policy match (embed otherwise, on the model
this process loaded once), evaluate under the new settings, write the new
record (and its heatmap, and its embeddings when re-embedded) beside the
original under ``rounds/<round>/replays/<replay>/``, and return a compact
``RoundResult``: what the ledger fold and the report need, never the texts.

Writes are idempotent (``put_once``): every key is deterministic, an absent
key is written, a present key holding the same bytes is left alone (a task
retried after its worker died), and a present key holding other bytes is an
error for that round: nothing is ever overwritten, the originals least of all.

``WorkSpec`` is what a remote worker is handed: the store's URI and the
settings with every secret blanked (a worker reads its own from its
environment, ``with_local_secrets``), plus picklable factories for the
embedder and the store (tests hand in the fake embedder and a journaling
store). ``resources_for`` builds them once per worker process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import pickle
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

from consensus.embedder import Embedder
from storage import keys
from storage.base import KeyNotFound, Store
from storage.codec import dumps
from storage.embeddings import encode_embeddings
from validator import record as rec
from validator.artefacts import embedder_policy, reusable_embeddings
from validator.ledger import MinerEntry, consensus_right, entries_from_record
from validator.replay import RoundDiff, RoundSelection, diff_records
from validator.settings import Settings, secret_fields

log = logging.getLogger(__name__)

StoreFactory = Callable[[str, Settings], Store]
EmbedderFactory = Callable[[Settings], Embedder]


class WriteConflict(OSError):
    """A key this run must write already holds other bytes: it is left as it is."""


def put_once(store: Store, key: str, data: bytes, content_type: str) -> bool:
    """Write ``data`` under ``key`` unless it is there already; True when this call wrote it.

    The same bytes already there: a retried task, nothing to do. Other bytes: ``WriteConflict``.
    """
    try:
        held = store.get(key)
    except KeyNotFound:
        store.put(key, data, content_type)
        return True
    if held != data:
        raise WriteConflict(f"{key} exists with other contents; a replay never overwrites (use another id)")
    return False


@dataclass(frozen=True)
class Side:
    """One evaluation of a round (the stored original or the new one), as the fold and the report need it."""

    reached: bool
    no_quorum: bool
    score: float | None
    members: tuple[str, ...]  # miners in consensus, sorted
    entries: tuple[MinerEntry, ...]
    consensus_right: bool | None
    alpha: float  # the moving_average_alpha this evaluation was made with
    canary_alpha: float

    @classmethod
    def of(cls, record: rec.RoundRecord) -> Side:
        daemon = record.config.get("daemon", {}) if isinstance(record.config, dict) else {}
        return cls(reached=bool(record.consensus.reached), no_quorum=not record.evaluated,
                   score=record.consensus.score,
                   members=tuple(sorted({r.miner for r in record.responses if r.in_consensus})),
                   entries=tuple(entries_from_record(record)), consensus_right=consensus_right(record),
                   alpha=float(daemon.get("moving_average_alpha", 0.1)),
                   canary_alpha=float(daemon.get("canary_alpha", 0.3)))


@dataclass(frozen=True)
class RoundResult:
    """One stored round's outcome: ``status`` is "ok", "skipped" (outside the selection) or "failed"."""

    key: str
    status: str
    round_id: str | None = None
    error: str | None = None
    old: Side | None = None  # None: no readable original record
    new: Side | None = None
    diff: RoundDiff | None = None
    embeddings_reused: bool = False
    model: tuple[str, str] | None = None  # the embedding model the worker evaluated with: (name, checksum)


@dataclass(frozen=True)
class Resources:
    """What a worker evaluates with: opened once per process (``resources_for``) or handed in (in-process)."""

    store: Store
    embedder: Embedder
    settings: Settings


@dataclass(frozen=True)
class WorkSpec:
    """Everything a worker needs, picklable and without secrets (see the module docstring)."""

    store_uri: str
    settings: Settings
    replay_id: str
    selection: RoundSelection = RoundSelection()
    embedder_factory: EmbedderFactory | None = None  # None: the configured model (validator.app)
    store_factory: StoreFactory | None = None  # None: validator.app.store_for
    first: bool = False  # a rounds file's first evaluation (validator.replaying.first), not a re-evaluation


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
    from validator.settings import load_settings

    local = load_settings(None)
    sections = {}
    for f in dataclasses.fields(settings):
        names = secret_fields(type(getattr(settings, f.name)))
        if names:
            mine = getattr(local, f.name)
            sections[f.name] = dataclasses.replace(getattr(settings, f.name),
                                                   **{n: getattr(mine, n) for n in names})
    return dataclasses.replace(settings, **sections)


_RESOURCES: dict[str, Resources] = {}  # per worker process: one store and one model load per spec


def resources_for(spec: WorkSpec) -> Resources:
    """The store and embedder of ``spec`` in this process, built on first use and kept."""
    fingerprint = hashlib.sha256(pickle.dumps((spec.store_uri, spec.settings, spec.embedder_factory,
                                               spec.store_factory))).hexdigest()
    if fingerprint not in _RESOURCES:
        from validator.app import load_configured_embedder, store_for

        settings = with_local_secrets(spec.settings)
        store = (spec.store_factory or store_for)(spec.store_uri, settings)
        embedder = (spec.embedder_factory or load_configured_embedder)(_worker_threads(settings))
        _RESOURCES[fingerprint] = Resources(store, embedder, spec.settings)
    return _RESOURCES[fingerprint]


def _worker_threads(settings: Settings) -> Settings:
    """In a Ray worker, ``embedding.threads = 0`` (one per core) means the CPUs Ray gave the task.

    Every worker of a node would otherwise start one runtime thread per core of the node: two workers
    on two cores ran four threads and re-embedded slower than the in-process run (0.84x). The thread
    count changes no number (each window is embedded alone, whatever the threads).
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


def round_keys(store: Store) -> list[str]:
    """The ``input.json`` key of every stored round, in the store's (sorted) order: the fold's order."""
    return [k for k in store.list("rounds/") if k.endswith("/input.json") and k.count("/") == 2]


def run_batch(res: Resources, replay_id: str, selection: RoundSelection, batch: Sequence[str],
              first: bool = False) -> list:
    """Re-evaluate the rounds under ``batch`` (input keys); one result per key, in order.

    ``first``: evaluate them for the first time instead (``validator.replaying.first``: ``FirstResult``).
    """
    if first:
        from validator.replaying.first import evaluate_first

        return [evaluate_first(res, key) for key in batch]
    return [_one(res, replay_id, selection, key) for key in batch]


def _one(res: Resources, replay_id: str, selection: RoundSelection, key: str) -> RoundResult:
    from validator.daemon import evaluate_record
    from validator.rounds import RoundError, parse_round

    store, settings = res.store, res.settings
    try:
        doc = json.loads(store.get(key))
        round_ = parse_round(doc, key, settings.input)
    except (ValueError, RoundError, KeyNotFound) as exc:
        return RoundResult(key, "failed", error=f"unreadable input: {exc}")
    rid = round_.round_id
    marker = doc.get("daemon") if isinstance(doc.get("daemon"), dict) else {}
    if not selection.keeps(rid, marker.get("started_at")):
        return RoundResult(key, "skipped", rid)
    embeddings = reusable_embeddings(store, rid, res.embedder, len(round_.responses))
    try:
        record, outcome = evaluate_record(round_, settings, res.embedder, dict(marker.get("failures", {})),
                                          embeddings=embeddings, canary=marker.get("canary") is True)
        record = dataclasses.replace(record, replay=rec.ReplayMarker(
            replay_id=replay_id, of=keys.evaluation(rid), embeddings_reused=embeddings is not None))
        if outcome is not None and outcome.heatmap_png is not None:
            put_once(store, keys.replay_heatmap(rid, replay_id), outcome.heatmap_png, "image/png")
        if embeddings is None and outcome is not None:  # another model or policy: keep what this run used
            put_once(store, keys.replay_embeddings(rid, replay_id),
                     encode_embeddings(outcome.embeddings, model_checksum=res.embedder.checksum,
                                       policy=embedder_policy(res.embedder),
                                       edges=outcome.embeddings.edges), "application/octet-stream")
        put_once(store, keys.replay_evaluation(rid, replay_id), dumps(record.to_json()), "application/json")
    except Exception as exc:  # one round's failure must not lose the others
        log.exception("round %r: re-evaluation failed", rid)
        return RoundResult(key, "failed", rid, error=f"evaluation failed: {type(exc).__name__}: {exc}")
    try:
        original: rec.RoundRecord | None = rec.load_record(store.get(keys.evaluation(rid)), keys.evaluation(rid))
    except (OSError, ValueError):  # none (a crash before its commit) or unreadable: everything is new
        original = None
    diff = diff_records(original, record)
    diff.embeddings_reused = embeddings is not None
    return RoundResult(key, "ok", rid, old=None if original is None else Side.of(original), new=Side.of(record),
                       diff=diff, embeddings_reused=embeddings is not None,
                       model=(res.embedder.name, res.embedder.checksum))
