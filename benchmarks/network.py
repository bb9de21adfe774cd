"""The daemon end to end over a recorded network: committees against everyone in one round (issue 37).

    python -m benchmarks.network ROUNDS TRUTH [--miners N] [--ticks T] [--committee-size K] [--seed S]
                                 [--farm F] [--sybils S] [--copycats C] [--declared] [--out DIR]
                                 [--same-model K [--per-model P]] [--keep-store DIR]

ROUNDS / TRUTH: a rounds file and its truth.json in the validity sets' format (``../shared/validity``,
``../shared/validity/wide``). The network (``benchmarks.recorded_network``, ``network``): one honest identity per model of the
truth, a farm of F identities of one operator serving the median model (the one measured), C copycats each
paired with an honest identity, a sybil group (``--sybils``, a share of the identities) voting for one
off-topic answer, and more farms of F serving the models again to reach N identities. The product's ``Daemon`` runs T
ticks (real MiniLM embeddings, cached on disk under ``--out``; no LM) with committees of K, then again
with everyone in one round (``committee_size = 0``).

The last printed line is one JSON object: per mode (``committees``, ``one_round``) ``spearman_weights`` (the
final ledger weights, mean per model, against the truth's lc_winrate), ``farm_per_answer`` (the farm's
units per answer it had to produce over an honest identity's of the same model), ``farm_majority_committees``
(committees in which any farm was more than half the usable answers) and ``sybil_majority_committees``,
``sybil_per_member`` (a sybil's units over an honest identity's mean), ``copycat_share`` (the copycats' units
over an honest identity's mean, per copycat), ``seconds_per_tick``; the committees' figures also at the top.
Per model, each honest identity's units per answer (``honest_per_answer_by_model``); with ``--same-model`` (several
honest identities per model, issue 46) their spread (``same_model_spread``, max / min) and their mean over the
single identities' median (``same_model_vs_singles_median``); ``why_honest``: for the honest identities of those
models (of five models spread over the ranks without ``--same-model``) their answers by reason, their copies by
the kind of their source and their units per answer in each half of the run. ``--keep-store DIR`` keeps the
daemon's store (rounds, inputs with the links they held, the ledger) under ``DIR/committees-K``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import json
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import network_memory
from benchmarks.data import CachedEmbedder, VectorCache
from benchmarks.lab.trust_voice import TrustDaemon
from benchmarks.recorded_network import RecordedNetwork, RecordedPersona
from benchmarks.task_network import (
    DEFAULT_DIR,
    LabTaskSource,
    Tally,
    TaskNetwork,
    load_ladder,
    task_figures,
    with_rungs,
)
from benchmarks.validity_report import spearman
from storage.local import LocalStore
from storage.memory import MemoryStore
from tasks.source import DEFAULT_CONFIGS
from validator.daemon.daemon import Daemon
from validator.miners.query import QueryResult
from validator.records.reader import RoundReader
from validator.round.prompt_source import PromptItem
from validator.settings import Settings, load_settings


def rss_kib() -> int:
    """This process's resident memory (Linux ``/proc``; 0 elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def read_answers(path: Path) -> dict[str, dict[str, str]]:
    """prompt -> model -> text, from a rounds file (``.jsonl`` or ``.jsonl.gz``)."""
    opener = gzip.open if path.suffix == ".gz" else open
    out: dict[str, dict[str, str]] = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[row["prompt"]] = {r["miner"]: r.get("text") or "" for r in row["responses"]}
    return out


def network(
    truth: dict[str, Any],
    miners: int,
    farm: int,
    sybils: int,
    copycats: int,
    declared: bool,
    sybil_answer: str = "off-topic",
    declared_farm: int = 0,
    same_model: int = 0,
    per_model: int = 4,
    cache_miners: int = 0,
    wrong_majority: int = 0,
    weak_majority: int = 0,
    guess_miners: int = 0,
) -> list[RecordedPersona]:
    """The identities: one honest identity per model (``h<rank>-<model>``), the measured farm (``farm0-*``,
        F identities serving the median model), the sybil group, the copycats (each paired with an honest
        identity), a declared farm of ``declared_farm`` identities (``farmD-*``, one entity, serving the model ranked
    just below the median: its own twin), the task adversaries (``cache``, ``guess``, ``wrong``, ``weak``:
    ``benchmarks.task_network``), and, to reach ``miners``, more farms of F serving the models again in rank order
    (``farm<k>-*``, as the issue's 256-miner network: models served more than once through farms).
    ``same_model`` (issue 46): that many models, evenly spread over the ranks, are each served by ``per_model``
    independent honest identities (``h<rank>-<model>``, then ``h<rank>-<model>~<j>``; no operator, no entity), as
    on a real subnet where most honest miners run a few popular models; they take the place of filler farms."""
    models = sorted(truth["lc_winrate"], key=lambda m: -truth["lc_winrate"][m])
    popular = popular_models(models, same_model)
    extra = (
        miners
        - len(models)
        - farm
        - sybils
        - copycats
        - declared_farm
        - len(popular) * (per_model - 1)
        - cache_miners
        - guess_miners
        - wrong_majority
        - weak_majority
    )
    if extra < 0:
        raise SystemExit(f"--miners {miners}: too few for {len(models)} models and the adversaries")
    farm_model = models[len(models) // 2]

    def farm_of(k: int, size: int, model: str) -> list[RecordedPersona]:
        entity = f"operator-{k}" if declared else None
        return [RecordedPersona(f"farm{k}-{i}", "farm", model, entity, operator=f"farm{k}") for i in range(size)]

    people = [RecordedPersona(f"h{i:03d}-{m}", "honest", m) for i, m in enumerate(models)]
    people += farm_of(0, farm, farm_model)
    people += [
        RecordedPersona(f"h{i:03d}-{m}~{j}", "honest", m)
        for i, m in enumerate(models)
        if m in popular
        for j in range(1, per_model)
    ]
    if declared_farm:
        declared_model = models[len(models) // 2 + 1]
        people += [
            RecordedPersona(f"farmD-{i}", "farm", declared_model, "operator-D", operator="farmD")
            for i in range(declared_farm)
        ]
    wrong = models[-1] if sybil_answer == "worst" else None  # the set's worst model: on topic, and poor
    people += [RecordedPersona(f"sybil{i:02d}", "sybil", wrong, operator="sybil") for i in range(sybils)]
    people += [
        RecordedPersona(f"copy{i}", "copycat", people[i].model, partner=people[i].hotkey) for i in range(copycats)
    ]
    # the task adversaries (benchmarks.task_network): each group one operator
    people += [RecordedPersona(f"cache{i}", "cache", models[0]) for i in range(cache_miners)]
    people += [RecordedPersona(f"guess{i}", "guess", models[0]) for i in range(guess_miners)]
    people += [RecordedPersona(f"wrong{i:03d}", "wrong", models[-1], operator="wrong") for i in range(wrong_majority)]
    people += [RecordedPersona(f"weak{i:03d}", "weak", models[-1], operator="weak") for i in range(weak_majority)]
    k = 1
    while extra > 0:
        size = min(max(farm, 1), extra)
        people += farm_of(k, size, models[(k - 1) % len(models)])
        extra -= size
        k += 1
    return people


def models_best_first(truth: dict[str, Any]) -> list[str]:
    """The truth's models, best first."""
    return sorted(truth["lc_winrate"], key=lambda m: -truth["lc_winrate"][m])


class WhyHonest:
    """Why the honest identities of ``models`` were or were not paid, read from the records (issue 46's band: which
    rounds and which rule make a shared model's identities earn more or less than its single identity): per
    identity its answers by reason, its copies by the kind of their source (``same model``: another honest identity
    of its model; ``farm``: a farm serving its model; ``other``), its units and answers in each half of the run."""

    def __init__(self, reader: Any, people: Sequence[RecordedPersona], models: Sequence[str]) -> None:
        self.reader = reader
        self.kind = {p.hotkey: p for p in people}
        self.watched = {p.hotkey for p in people if p.kind == "honest" and p.model in set(models)}
        self.detail: dict[str, dict[str, Any]] = {}

    def add(self, reports: Sequence[Any], late: bool) -> None:
        for report in reports:
            record = self.reader.record(report.round_id)
            for r in record.responses:
                if r.miner not in self.watched:
                    continue
                d = self.detail.setdefault(
                    r.miner, {"reasons": {}, "copied_from": {}, "units": [0, 0], "answers": [0, 0]}
                )
                d["reasons"][r.reason] = d["reasons"].get(r.reason, 0) + 1
                d["units"][late] += r.emissions.amount
                d["answers"][late] += 1
                if r.reason == "copy" and r.copy_of is not None:
                    source = self.kind.get(record.responses[r.copy_of].miner)
                    me = self.kind[r.miner]
                    label = "other"
                    if source is not None and source.model == me.model:
                        label = "same model" if source.kind == "honest" else source.kind
                    d["copied_from"][label] = d["copied_from"].get(label, 0) + 1

    def summary(self) -> dict[str, Any]:
        out = {}
        for m, d in sorted(self.detail.items()):
            halves = [round(u / max(a, 1), 1) for u, a in zip(d["units"], d["answers"])]
            out[m] = {"reasons": d["reasons"], "copied_from": d["copied_from"], "per_answer_halves": halves}
        return out


def popular_models(ranked: Sequence[str], count: int) -> list[str]:
    """``count`` of the ``ranked`` models (best first), evenly spread from the best to the worst."""
    if count <= 0:
        return []
    if count == 1:
        return [ranked[len(ranked) // 2]]
    return [ranked[round(k * (len(ranked) - 1) / (count - 1))] for k in range(min(count, len(ranked)))]


def same_model_stats(people: Sequence[RecordedPersona], units: dict[str, int], asked: dict[str, int]) -> dict[str, Any]:
    """Per model: each honest identity's units per answer; for a model served by several, their spread (max / min)
    and their mean per answer over the honest single identities' per-answer median (issue 46: independent workers)."""
    by_model: dict[str, list[float]] = {}
    for p in people:
        if p.kind == "honest":
            by_model.setdefault(p.model or "", []).append(units.get(p.hotkey, 0) / max(asked.get(p.hotkey, 0), 1))
    singles = [v[0] for v in by_model.values() if len(v) == 1]
    out: dict[str, Any] = {
        "honest_per_answer_by_model": {m: [round(x, 1) for x in v] for m, v in sorted(by_model.items())}
    }
    shared = {m: v for m, v in by_model.items() if len(v) > 1}
    if shared:
        median = float(np.median(singles)) if singles else 0.0
        out["same_model_spread"] = {m: round(max(v) / min(v), 4) if min(v) else None for m, v in sorted(shared.items())}
        out["same_model_vs_singles_median"] = {
            m: round(float(np.mean(v)) / median, 4) if median else None for m, v in sorted(shared.items())
        }
    return out


def draw_stats(
    people: Sequence[RecordedPersona],
    size: int,
    ticks: int,
    secret: bytes,
    entities: dict[str, str | None] | None = None,
    prefix: str = "draw",
) -> dict[str, Any]:
    """The committees alone over ``ticks`` ticks (the daemon's draw, no evaluation: it decides who can hold a
    majority): committees in which the sybil group or any farm was more than half the members, and the share
    of a farm identity's committees it shared with another identity of its farm (the chance a farm can pool).
    ``entities``: the map the draw deals apart (default: the declared entities; the daemon's merged map of the
    final ledger's links for the steady state, ``prefix`` ``draw_linked``)."""
    from validator.daemon.committee_draw import plan_tick

    names = [p.hotkey for p in people]
    if entities is None:
        entities = {p.hotkey: p.entity for p in people}
    operator = {p.hotkey: p.operator for p in people}
    sybil = farm = committees = shared = farm_seats = 0
    for tick in range(1, ticks + 1):
        for members in plan_tick(secret, tick, 1, names, entities, size).committees:
            committees += 1
            ops = [operator[m] for m in members]
            sybil += ops.count("sybil") * 2 > len(members)
            farm += any(ops.count(o) * 2 > len(members) for o in set(ops) - {None, "sybil"})
            n = ops.count("farm0")
            farm_seats += n
            shared += n if n > 1 else 0
    return {
        f"{prefix}_ticks": ticks,
        f"{prefix}_committees": committees,
        f"{prefix}_sybil_majority_committees": sybil,
        f"{prefix}_sybil_majority_interval": network_memory.count_interval(sybil, committees),
        f"{prefix}_farm_majority_committees": farm,
        f"{prefix}_farm_shared_share": round(shared / max(farm_seats, 1), 4),
    }


def link_stats(daemon: Daemon, people: Sequence[RecordedPersona]) -> dict[str, Any]:
    """The ledger's identity links among the identities, by the kinds of their two ends (``honest/honest``: two
    honest identities of different models, the links the draw must not need), and the components the draw deals
    apart (``DaemonState.draw_entities``): how many, the largest, and whether the sybil group and each farm are
    one component."""
    from validator.daemon.committee_draw import LINKED
    from validator.records.ledger_entries import identity_links

    kind = {p.hotkey: p for p in people}
    found = identity_links(daemon.ledger, daemon.settings.consensus, list(kind))
    by_kind: dict[str, int] = {}
    honest_pairs = []
    for link in found:
        a, b = kind[link.first], kind[link.second]
        label = "/".join(sorted((a.operator or a.kind, b.operator or b.kind)))
        if a.operator and a.operator == b.operator:
            label = "same operator" if a.operator != "sybil" else "sybil/sybil"
        elif a.kind == "honest" and b.kind == "honest":
            label = "honest/honest"
            honest_pairs.append([link.first, link.second])
        elif "honest" in (a.kind, b.kind) and a.model == b.model:
            label = "honest/same model"
        by_kind[label] = by_kind.get(label, 0) + 1
    merged = daemon.draw_entities([(p.hotkey, p.entity) for p in people])
    groups: dict[str, list[str]] = {}
    for m, e in merged.items():
        if e is not None:
            groups.setdefault(e, []).append(m)
    of = {m: e for m, e in merged.items()}

    def one(operator: str) -> bool | None:
        members = [p.hotkey for p in people if p.operator == operator]
        return len({of[m] for m in members}) == 1 and of[members[0]] is not None if members else None

    return {
        "links": len(found),
        "links_by_kind": dict(sorted(by_kind.items())),
        "links_honest_pairs": honest_pairs,
        "draw_components": sum(1 for e in groups if e.startswith(LINKED)),
        "draw_largest_entity": max((len(g) for g in groups.values()), default=0),
        "sybils_one_entity": one("sybil"),
        "farm0_one_entity": one("farm0"),
    }


def daemon_settings(size: int, *, links: bool = True) -> Settings:
    """The product's settings for a daemon over a recorded network: committees of about ``size``, ticks back to
    back, no canaries, no heatmap, no LM; ``links``: daemon.committee_links (``benchmarks.yuma`` too)."""
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_DAEMON__COMMITTEE_SIZE": str(size),
        "VALIDATOR_DAEMON__CANARY_RATE": "0",
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_LM__ENABLED": "false",
        "VALIDATOR_DAEMON__COMMITTEE_LINKS": "true" if links else "false",
    }
    return load_settings(None, env=env, dotenv_path=None)


def run_mode(args: argparse.Namespace, size: int, embedder: CachedEmbedder, answers, people, truth) -> dict[str, Any]:
    settings = daemon_settings(size, links=not args.no_links)
    ladder = getattr(args, "ladder", None)
    net = (
        RecordedNetwork(answers, people, arrival=args.arrival)
        if ladder is None
        else TaskNetwork(answers, people, ladder, arrival=args.arrival)
    )
    majority = {"farm": 0, "sybil": 0, "committees": 0}
    lock = threading.Lock()  # the daemon asks a tick's committees concurrently

    def query(prompt, on_done=None, members=None):
        t = time.perf_counter()
        responses, details = net.answer(prompt, members)
        if on_done is not None:
            on_done(len(responses), len(responses))
        usable = [r.miner for r in responses if r.error is None]
        with lock:
            count(usable)
        return QueryResult(responses, details, time.perf_counter() - t)

    def count(usable: list[str]) -> None:
        majority["committees"] += 1
        operators = [net.personas[m].operator for m in usable]
        for op in set(operators) - {None}:
            if operators.count(op) * 2 > len(usable):
                majority["sybil" if op == "sybil" else "farm"] += 1

    query.specs = net.specs  # type: ignore[attr-defined]
    secret = hashlib.sha256(f"network-benchmark:{args.seed}".encode()).digest()
    prompts = [PromptItem(p) for p in answers]
    keep = getattr(args, "keep_store", None)
    if keep is not None:
        keep = keep / f"committees-{size}"
        keep.mkdir(parents=True, exist_ok=False)
    with contextlib.nullcontext(str(keep)) if keep else tempfile.TemporaryDirectory(prefix="network-store-") as where:
        # a store on disk, as a daemon has: a store in memory would hold every round and grow
        store = LocalStore(Path(where)) if args.store == "disk" else MemoryStore()
        tasks = None if ladder is None else LabTaskSource(settings.tasks, secret, ladder.tasks, args.tasks)
        extra: dict[str, Any] = {} if not args.trust_voice else {"power": args.trust_voice}
        kind = Daemon if not args.trust_voice else TrustDaemon
        daemon = kind(
            store=store,
            embedder=embedder,
            settings=settings,
            prompts=prompts,
            query=query,
            secret=secret,
            tasks=tasks,
            **extra,
        )
        net.tally = Tally(RoundReader(store))  # type: ignore[attr-defined]
        net.why = WhyHonest(RoundReader(store), people, popular_models(models_best_first(truth), args.same_model or 5))  # type: ignore[attr-defined]
        return _ticks(args, size, daemon, embedder, net, majority, people, truth)


def _ticks(args, size, daemon, embedder, net, majority, people, truth) -> dict[str, Any]:
    began = time.perf_counter()
    embed_s = 0.0  # the embed stage of every round: what "overhead" leaves out (with the LM off)
    rss: list[int] = []
    per_tick: list[float] = []  # seconds of each tick less its embed stage: the daemon's own overhead
    names = [p.hotkey for p in people]
    emas = np.zeros((args.ticks, len(names)))  # every identity's EMA after each tick (network_memory)
    paid = np.zeros((args.ticks, len(names)))  # and its units so far
    produced = np.zeros(args.ticks)  # the measured farm's answers produced so far
    produced_declared = np.zeros(args.ticks)  # the declared farm's
    cpu: list[float] = []  # CPU seconds of each tick, every thread (a loaded machine's wall time counts waiting)
    majority_ticks: dict[str, list[int]] = {"sybil": [], "farm": []}  # the ticks of each majority (one per committee)
    links_every_10: list[int] = []  # the ledger's identity links every 10 ticks
    for t in range(args.ticks):
        before = dict(majority)
        tick_began, cpu_began = time.perf_counter(), time.process_time()
        reports = daemon.run(ticks=1)
        embed = sum(r.stages.get("embed", 0.0) for r in reports)
        net.tally.add(reports)
        net.why.add(reports, late=t >= args.ticks // 2)
        embed_s += embed
        per_tick.append(time.perf_counter() - tick_began - embed)
        cpu.append(time.process_time() - cpu_began)
        miners = daemon.ledger.miners
        emas[t] = [miners[n].ema if n in miners else 0.0 for n in names]
        paid[t] = [miners[n].emissions if n in miners else 0 for n in names]
        produced[t] = net.produced.get("farm0", 0)
        produced_declared[t] = net.produced.get("farmD", 0)
        for k in majority_ticks:
            majority_ticks[k] += [t + 1] * (majority[k] - before[k])
        if (t + 1) % 10 == 0:
            embedder.cache.save()
            rss.append(rss_kib())
            links_every_10.append(link_stats(daemon, people)["links"])
            print(f"  committee_size {size}: tick {t + 1}/{args.ticks}", file=sys.stderr, flush=True)
        if args.progress_every and (t + 1) % args.progress_every == 0 and t + 1 < args.ticks:
            # a long run's figures so far, kept: a run stopped before its last tick still reports
            done = time.perf_counter() - began
            so_far = _summary(args, t + 1, size, daemon, net, majority, people, truth, emas, paid, produced)
            so_far.update(_declared(t + 1, net, daemon, people, paid, produced_declared, args.blocks, truth))
            so_far.update(majority_ticks=majority_ticks, links_every_10_ticks=links_every_10)
            so_far.update(_timing(done, embed_s, per_tick, rss, t + 1, len(people), cpu))
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"progress-{size}-{args.seed}.json").write_text(json.dumps(so_far), encoding="utf-8")
    seconds = time.perf_counter() - began
    embedder.cache.save()
    out = _summary(args, args.ticks, size, daemon, net, majority, people, truth, emas, paid, produced)
    out.update(_declared(args.ticks, net, daemon, people, paid, produced_declared, args.blocks, truth))
    out.update(_timing(seconds, embed_s, per_tick, rss, args.ticks, len(people), cpu))
    out.update(majority_ticks=majority_ticks, links_every_10_ticks=links_every_10, **link_stats(daemon, people))
    out.update(why_honest=net.why.summary())
    if size:
        # the draw alone once more, with the final ledger's links united in: the steady state the end-to-end
        # run reaches once its farms and sybils are linked
        roster = [(p.hotkey, p.entity) for p in people]
        spent = []
        for _ in range(20):  # what the link-aware draw adds to a tick: the links read and united, once per tick
            began = time.perf_counter()
            merged = daemon.draw_entities(roster)
            spent.append(time.perf_counter() - began)
        out.update(draw_entities_ms=round(float(np.median(spent)) * 1000, 3), ledger_pairs=len(daemon.ledger.pairs))
        secret = hashlib.sha256(f"network-benchmark:{args.seed}".encode()).digest()
        out.update(draw_stats(people, size, args.draw_ticks, secret, merged, prefix="draw_linked"))
    return out


def _declared(ticks, net, daemon, people, paid, produced, blocks, truth) -> dict[str, Any]:
    """The declared farm's (``farmD``) units per answer it produced over its twin's (the honest identity of its
    model), with the 95% interval over blocks of ticks (``network_memory.per_tick_ratio``)."""
    farm = [p.hotkey for p in people if p.operator == "farmD"]
    if not farm:
        return {}
    ranks = {m: -v for m, v in truth["lc_winrate"].items()}
    col = {p.hotkey: i for i, p in enumerate(people)}
    twins = [p.hotkey for p in people if p.kind == "honest" and p.model == people[col[farm[0]]].model]
    units = {m: t.emissions for m, t in daemon.ledger.miners.items()}
    asked = {m: t.answered for m, t in daemon.ledger.miners.items()}
    twin = float(np.mean([units.get(h, 0) / max(asked.get(h, 0), 1) for h in twins]))
    made = net.produced.get("farmD", 0)
    per_tick = np.diff(np.vstack([np.zeros((1, paid.shape[1])), paid[:ticks]]), axis=0)
    series = [
        per_tick[:, [col[f] for f in farm]].sum(axis=1),
        np.diff(np.concatenate([[0.0], produced[:ticks]])),
        per_tick[:, [col[h] for h in twins]].sum(axis=1),
        np.full(ticks, float(len(twins))),
    ]
    # a steadier reference than one twin, as for the measured farm: the honest identities of the five models nearest
    ranked = sorted({p.model for p in people if p.kind == "honest"}, key=lambda m: ranks[m])
    at = ranked.index(people[col[farm[0]]].model)
    peers = [p.hotkey for p in people if p.kind == "honest" and p.model in set(ranked[max(0, at - 2) : at + 3])]
    peer_series = [*series[:2], per_tick[:, [col[h] for h in peers]].sum(axis=1), np.full(ticks, float(len(peers)))]
    return {
        "declared_farm_per_answer": round(sum(units.get(f, 0) for f in farm) / max(made, 1) / twin, 4)
        if twin
        else None,
        "declared_farm_per_answer_ci": network_memory.per_tick_ratio(series, blocks=blocks),
        "declared_farm_per_answer_vs_peers_ci": network_memory.per_tick_ratio(peer_series, blocks=blocks),
        "declared_farm_produced": made,
    }


def _timing(seconds, embed_s, per_tick, rss, ticks, people, cpu) -> dict[str, Any]:
    return {
        # CPU of the whole process per identity per tick (embedding a text the cache lacks included), the median
        # of the ticks after the first: what the daemon costs whatever else the machine runs
        "cpu_ms_per_miner_tick_median": round(float(np.median(cpu[1:] or cpu)) * 1000 / people, 3),
        "seconds": round(seconds, 1),
        "overhead_ms_per_miner_tick": round((seconds - embed_s) * 1000 / max(ticks * people, 1), 3),
        # the first tick imports the clustering libraries (scikit-learn, scipy: about 5 s): the median of the others
        "overhead_ms_per_miner_tick_median": round(float(np.median(per_tick[1:] or per_tick)) * 1000 / people, 3),
        "rss_mib_every_10_ticks": [round(k / 1024) for k in rss],
        "seconds_per_tick": round(seconds / max(ticks, 1), 3),
    }


def _summary(args, ticks, size, daemon, net, majority, people, truth, emas, paid, produced) -> dict[str, Any]:
    """The run's figures after ``ticks`` ticks (the arrays' first rows)."""
    emas, paid, produced = emas[:ticks], paid[:ticks], produced[:ticks]
    names = [p.hotkey for p in people]
    ledger = daemon.ledger
    weights = ledger.weights()
    units = {m: t.emissions for m, t in ledger.miners.items()}
    asked = {m: t.answered for m, t in ledger.miners.items()}
    kind = {p.hotkey: p for p in people}
    honest = [p.hotkey for p in people if p.kind == "honest"]
    by_model: dict[str, list[float]] = {}
    for h in honest:
        by_model.setdefault(kind[h].model or "", []).append(weights.get(h, 0.0))
    models = sorted(by_model)
    rho = spearman([float(np.mean(by_model[m])) for m in models], [truth["lc_winrate"][m] for m in models])
    honest_mean = float(np.mean([units.get(h, 0) for h in honest])) or 1.0
    farm = [p.hotkey for p in people if p.operator == "farm0"]
    twins = [h for h in honest if kind[h].model == (kind[farm[0]].model if farm else None)]
    twin_per_answer = float(np.mean([units.get(h, 0) / max(asked.get(h, 0), 1) for h in twins])) if twins else 0.0
    farm_units = sum(units.get(f, 0) for f in farm)
    # a steadier reference than one twin: the honest identities of the five models nearest the farm's in rank
    ranked = sorted(truth["lc_winrate"], key=lambda m: -truth["lc_winrate"][m])
    at = ranked.index(kind[farm[0]].model) if farm else 0
    near = set(ranked[max(0, at - 2) : at + 3])
    peers = [h for h in honest if kind[h].model in near]
    peer_per_answer = float(np.mean([units.get(h, 0) / max(asked.get(h, 0), 1) for h in peers])) if peers else 0.0
    farm_per_answer = farm_units / max(net.produced.get("farm0", 0), 1) / twin_per_answer if twin_per_answer else None
    sybils = [p.hotkey for p in people if p.kind == "sybil"]
    copies = [p.hotkey for p in people if p.kind == "copycat"]
    memory = _memory(args, ticks, size, ledger.alpha, emas, paid, produced, names, people, truth, farm, twins, peers)
    ladder = getattr(args, "ladder", None)
    memory.update(task_figures(ladder, net.tally, people, weights, twins, peers, truth["lc_winrate"]))
    return {
        "committee_size": size,
        "ticks": ledger.ticks,
        "rounds": ledger.rounds,
        "committees_per_tick": ledger.last_tick_committees,
        "spearman_weights": round(rho, 4),
        "farm_per_answer": None if farm_per_answer is None else round(farm_per_answer, 4),
        "farm_per_answer_vs_peers": round(farm_units / max(net.produced.get("farm0", 0), 1) / peer_per_answer, 4)
        if peer_per_answer
        else None,
        "farm_total_vs_twin": round(farm_units / max(np.mean([units.get(h, 0) for h in twins]), 1), 4)
        if twins
        else None,
        "farm_majority_committees": majority["farm"],
        "sybil_majority_committees": majority["sybil"],
        "sybil_per_member": round(float(np.mean([units.get(s, 0) for s in sybils])) / honest_mean, 4)
        if sybils
        else None,
        "copycat_share": round(float(np.mean([units.get(c, 0) for c in copies])) / honest_mean, 4) if copies else None,
        **same_model_stats(people, units, asked),
        "committees_asked": majority["committees"],
        "sybil_majority_interval": network_memory.count_interval(majority["sybil"], majority["committees"]),
        **memory,
    }


def _memory(args, ticks, size, alpha, emas, paid, produced, names, people, truth, farm, twins, peers) -> dict[str, Any]:
    """The final weights' Spearman tick by tick under other memories of the ledger, what each memory costs in
    responsiveness, and the farm's per-answer ratios with 95% intervals over blocks of ticks (network_memory)."""
    col = {n: i for i, n in enumerate(names)}
    groups: dict[str, list[int]] = {}
    for p in people:
        if p.kind == "honest":
            groups.setdefault(p.model or "", []).append(col[p.hotkey])
    x = network_memory.tick_shares(emas, alpha)
    marks = sorted({t for t in (10, 20, 30, 50, 100, 150, 200, 300, 500, 700, 1000) if t <= ticks} | {ticks})
    memories = [f"ema:{a}" for a in args.alphas] + [f"window:{w}" for w in args.windows] + ["mean"]
    honest = [c for cols in groups.values() for c in cols]
    out: dict[str, Any] = {"spearman_by_memory": {}, "settle_ticks": {}}
    for m in memories:
        w = network_memory.fold(x, m)
        out["spearman_by_memory"][m] = network_memory.spearman_by_tick(w, groups, truth["lc_winrate"], marks, spearman)
        if m != "mean":
            out["settle_ticks"][m] = network_memory.settle_ticks(x, honest, m, start=ticks // 2)
    units = np.diff(np.vstack([np.zeros((1, paid.shape[1])), paid]), axis=0)
    made = np.diff(np.concatenate([[0.0], produced]))
    farm_units = units[:, [col[f] for f in farm]].sum(axis=1) if farm else np.zeros(len(made))
    for key, ref in (("farm_per_answer_ci", twins), ("farm_per_answer_vs_peers_ci", peers)):
        if farm and ref:
            ref_units = units[:, [col[h] for h in ref]].sum(axis=1)
            asked = np.full(len(made), float(len(ref)))  # every honest identity answers once a tick
            out[key] = network_memory.per_tick_ratio([farm_units, made, ref_units, asked], blocks=args.blocks)
    if args.save_ticks:
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out / f"ticks-{size}-{args.seed}.npz", names=np.array(names), ema=emas, units=paid)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.network", description=__doc__.split("\n\n")[0])
    p.add_argument("rounds", type=Path, help="rounds file in the validity sets' format (.jsonl or .jsonl.gz)")
    p.add_argument("truth", type=Path, help="its truth.json (lc_winrate per model)")
    p.add_argument("--miners", type=int, default=80)
    p.add_argument("--ticks", type=int, default=50)
    p.add_argument("--committee-size", type=int, default=16)
    p.add_argument("--seed", type=int, default=0, help="seeds the daemon's secret (the committees and prompt order)")
    p.add_argument("--farm", type=int, default=5, help="identities of the farm")
    p.add_argument("--sybils", type=float, default=0.1, help="share of identities in the sybil group")
    p.add_argument("--copycats", type=int, default=2)
    p.add_argument(
        "--same-model",
        type=int,
        default=0,
        metavar="K",
        help="K models, spread over the ranks, each served by --per-model honest identities (issue 46)",
    )
    p.add_argument("--per-model", type=int, default=4, help="honest identities of each --same-model model")
    p.add_argument(
        "--arrival",
        choices=("random", "order"),
        default="order",
        help="when answers arrive: in the listing order (default, as before issue 46), or fixed per prompt and identity",
    )
    p.add_argument(
        "--sybil-answer",
        choices=("off-topic", "worst"),
        default="off-topic",
        help="what the sybil group votes for: one off-topic text, or the worst model's answer",
    )
    p.add_argument("--declared", action="store_true", help="the farm declared as one entity")
    p.add_argument(
        "--declared-farm", type=int, default=0, help="identities of a second farm, declared as one entity (farmD-*)"
    )
    p.add_argument(
        "--no-links",
        action="store_true",
        help="the draw deals apart declared entities only (daemon.committee_links off)",
    )
    p.add_argument("--no-one-round", action="store_true", help="skip the run with everyone in one round")
    p.add_argument("--out", type=Path, default=Path("out/network"), help="the embeddings cache")
    p.add_argument(
        "--keep-store",
        type=Path,
        default=None,
        help="keep the daemon's store (a new directory; default: a temporary one)",
    )
    p.add_argument(
        "--store", choices=("disk", "memory"), default="disk", help="the daemon's store (a temporary directory)"
    )
    p.add_argument("--prompts", type=int, default=0, help="only the set's first P prompts (0: all; fewer to embed)")
    p.add_argument("--draw-ticks", type=int, default=1000, help="ticks of the committees' draw alone (majorities)")
    p.add_argument(
        "--alphas", type=float, nargs="*", default=[0.1, 0.05, 0.02, 0.01], help="EMA memories to fold again"
    )
    p.add_argument("--windows", type=int, nargs="*", default=[50, 100], help="window means (ticks) to fold again")
    p.add_argument("--blocks", type=int, default=10, help="blocks of ticks of the farm's confidence intervals")
    p.add_argument("--progress-every", type=int, default=0, help="write the figures so far every N ticks under --out")
    p.add_argument("--save-ticks", action="store_true", help="keep every tick's EMAs and units under --out")
    p.add_argument("--tasks", type=float, default=0.0, help="share of rounds asking a recorded task (0: no tasks)")
    p.add_argument("--task-dir", type=Path, default=DEFAULT_DIR, help="the recorded task ladder (task_record)")
    p.add_argument("--min-network-tasks", type=int, default=30, help="fewer recorded: split the accuracy draw")
    p.add_argument(
        "--task-families", default="", help="comma-separated: ask (and measure accuracy on) these families only"
    )
    current = "only the recorded answers to today's default task set (tasks/source.py DEFAULT_CONFIGS)"
    p.add_argument("--task-current", action="store_true", help=current)
    p.add_argument("--cache-miners", type=int, default=0, help="cache miners (another task's paid answer)")
    p.add_argument("--guess-miners", type=int, default=0, help="guess miners (the family's most common answer)")
    p.add_argument("--wrong-majority", type=float, default=0.0, help="share of identities serving one wrong answer")
    p.add_argument("--weak-majority", type=float, default=0.0, help="share of identities serving the weakest model")
    p.add_argument(
        "--trust-voice",
        type=float,
        default=0.0,
        help="the lab's trust weighting of the free-form consensus (benchmarks.lab.trust_voice), to this power",
    )
    args = p.parse_args(argv)
    for path in (args.rounds, args.truth):
        if not path.is_file():
            p.error(f"{path}: no such file")
    truth = json.loads(args.truth.read_text(encoding="utf-8"))
    answers = read_answers(args.rounds)
    if args.prompts > 0:
        answers = dict(list(answers.items())[: args.prompts])
    people = network(
        truth,
        args.miners,
        args.farm,
        round(args.sybils * args.miners),
        args.copycats,
        args.declared,
        args.sybil_answer,
        args.declared_farm,
        args.same_model,
        args.per_model,
        args.cache_miners,
        round(args.wrong_majority * args.miners),
        round(args.weak_majority * args.miners),
        args.guess_miners,
    )
    args.ladder = None
    if args.tasks > 0:
        only = tuple(f for f in args.task_families.split(",") if f)
        configs = DEFAULT_CONFIGS if args.task_current else None
        args.ladder = load_ladder(args.task_dir, min_network=args.min_network_tasks, families=only, configs=configs)
        ranked = sorted(truth["lc_winrate"], key=lambda m: -truth["lc_winrate"][m])
        people = with_rungs(people, ranked, args.ladder.rungs)
    settings = load_settings(None, env={}, dotenv_path=None)
    cache = VectorCache(args.out, settings, autosave=False)  # written at the checkpoints below
    cache.adopt(args.out / "vectors.npz")  # this benchmark's own cache file before the lab had one
    embedder = CachedEmbedder(cache)
    texts = sorted({t for by_model in answers.values() for t in by_model.values() if t} | set(answers))
    for start in range(0, len(texts), 256):  # every recorded answer and prompt at once, in batches: the cache
        embedder.embed(texts[start : start + 256])
        print(f"  embedded {min(start + 256, len(texts))}/{len(texts)} recorded texts", file=sys.stderr, flush=True)
    cache.save()
    modes = {"committees": run_mode(args, args.committee_size, embedder, answers, people, truth)}
    secret = hashlib.sha256(f"network-benchmark:{args.seed}".encode()).digest()
    modes["committees"].update(draw_stats(people, args.committee_size, args.draw_ticks, secret))
    print(json.dumps(modes["committees"]), file=sys.stderr)
    if not args.no_one_round:
        modes["one_round"] = run_mode(args, 0, embedder, answers, people, truth)
    out = {**modes["committees"], **modes, "miners": args.miners, "set": str(args.rounds)}
    if args.ladder is not None:
        out.update(args.ladder.summary(), task_share=args.tasks)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
