"""Does the committee protocol cost the operator vtrust? Several validators running the product, one Yuma epoch.

    python -m benchmarks.yuma ROUNDS TRUTH [--miners N] [--ticks T] [--committees K] [--one-round M] [--lazy L]
                              [--sizes S ...] [--alphas A ...] [--epoch-every E] [--seed S] [--prompts P] [--out DIR]

The network is ``benchmarks.network``'s (``network``: one honest identity per model of the set, a farm of 5, a
10% sybil group, 2 copycats, more farms of 5 up to N identities) over the set's recorded answers
(``benchmarks.recorded_network``). Each validator is the product's ``Daemon`` run T ticks against it with a secret of
its own (so its own committees and prompt order), real MiniLM vectors cached under ``--out``, no LM, and
every shipped setting but ``daemon.committee_size``: K validators per committee size S, M validators with
everyone in one round (``committee_size = 0``), and L honest-but-lazy validators that run nothing and set the
elementwise median of the others' weights of the previous epoch (what they can read on chain; ``--lazy-lag``
epochs before, as commit-reveal would delay them). Every
identity's EMA after each tick is kept (``DIR/emas-*.npz``; a later run with as many ticks or fewer reads them
instead of running the daemon again).

The weights a validator sets after tick t are its ledger's weights then (``Ledger.weights``: the EMA,
canaries off), or, for another ``daemon.moving_average_alpha`` A, the per-tick shares recovered from the EMAs
and folded again with A (``network_memory.tick_shares``, ``fold``: the ledger's own fold, exact up to float
rounding), conformed as the SDK sends them (``chain.weights.sdk_conform``: u16, largest 65,535). Every E ticks
the epoch (``benchmarks.yuma_epoch``, subtensor's, chain defaults) runs over validators of equal stake in
five scenarios: ``committees-S`` (the K validators of size S and the lazy ones), ``one_round`` (the M
validators and the lazy ones), ``mixed-S`` (all of them), ``lone-S`` (one validator of size S among the M) and
``lone-one-round-S`` (one of the M among the K), bonds carried from epoch to epoch.

Reported per scenario, memory and validator: ``vtrust`` (mean over the second half of the epochs; the first
half is the ledgers filling: an EMA of 0.02 needs some 110 ticks), its minimum there, ``dividends`` (same
window; equal stakes, so 1/V is an even share) and the vtrust of every epoch; per scenario what the chain pays
the miners (the incentive, same window): ``farm0_vs_twin`` (a measured farm identity's incentive over the
honest identity of its model), ``farm_share`` (all farm identities' share of the incentive), ``sybil_share``,
``copycat_share``, and ``spearman_incentive`` (the honest identities' incentive, mean per model, against the
set's lc_winrate); ``weights_apart``: how far apart the working validators' weights are (half the L1 distance of
two normalised rows, mean over pairs: the share of weight two validators put in different places). The last printed line is one JSON object; a table goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import network_memory
from benchmarks.data import CachedEmbedder, VectorCache
from benchmarks.network import daemon_settings, network, read_answers
from benchmarks.recorded_network import RecordedNetwork, RecordedPersona
from benchmarks.validity_report import spearman
from benchmarks.yuma_epoch import YumaParams, epoch
from chain.types import U16_MAX
from chain.weights import sdk_conform
from storage.local import LocalStore
from validator.daemon.daemon import Daemon
from validator.miners.query import QueryResult
from validator.round.prompt_source import PromptItem
from validator.settings import load_settings


@dataclass(frozen=True)
class ValidatorRun:
    """One validator of the simulation: ``size`` its committee size (0: one round, -1: lazy), ``index`` its secret."""

    size: int
    index: int

    @property
    def label(self) -> str:
        if self.size < 0:
            return f"lazy{self.index}"
        return f"one_round{self.index}" if self.size == 0 else f"c{self.size}-{self.index}"


def secret_of(seed: int, run: ValidatorRun) -> bytes:
    """Each validator's own committee secret (distinct per size and index: the one-round validators' prompt
    orders differ too)."""
    return hashlib.sha256(f"yuma-benchmark:{seed}:{run.size}:{run.index}".encode()).digest()


def run_daemon(
    answers: Mapping[str, Mapping[str, str]],
    people: Sequence[RecordedPersona],
    size: int,
    secret: bytes,
    ticks: int,
    embedder: CachedEmbedder,
    label: str = "",
) -> tuple[np.ndarray, float]:
    """The product's daemon over the recorded network for ``ticks`` ticks: every identity's EMA after each tick
    (ticks, identities) and the ledger's alpha."""
    settings = daemon_settings(size)
    net = RecordedNetwork(answers, people)

    def query(prompt: str, on_done: Any = None, members: Any = None) -> QueryResult:
        began = time.perf_counter()
        responses, details = net.answer(prompt, members)
        if on_done is not None:
            on_done(len(responses), len(responses))
        return QueryResult(responses, details, time.perf_counter() - began)

    query.specs = net.specs  # type: ignore[attr-defined]
    names = [p.hotkey for p in people]
    emas = np.zeros((ticks, len(names)))
    with tempfile.TemporaryDirectory(prefix="yuma-store-") as where:
        daemon = Daemon(
            store=LocalStore(Path(where)),
            embedder=embedder,
            settings=settings,
            prompts=[PromptItem(p) for p in answers],
            query=query,
            secret=secret,
        )
        for t in range(ticks):
            daemon.run(ticks=1)
            miners = daemon.ledger.miners
            emas[t] = [miners[n].ema if n in miners else 0.0 for n in names]
            if (t + 1) % 25 == 0:
                print(f"  {label}: tick {t + 1}/{ticks}", file=sys.stderr, flush=True)
                embedder.cache.save()
        return emas, daemon.ledger.alpha


def weights_series(emas: np.ndarray, ledger_alpha: float, alpha: float) -> np.ndarray:
    """The ledger's weights after each tick (rows sum to 1, or 0 while nothing was paid) with memory ``alpha``:
    the recorded EMAs themselves at the ledger's own alpha, else its per-tick shares folded again."""
    if abs(alpha - ledger_alpha) < 1e-12:
        raw = emas
    else:
        raw = network_memory.fold(network_memory.tick_shares(emas, ledger_alpha), f"ema:{alpha}")
    sums = raw.sum(axis=1, keepdims=True)
    return np.divide(raw, sums, out=np.zeros_like(raw), where=sums > 0)


def conform(row: np.ndarray) -> np.ndarray:
    """What the SDK sends for these weights (u16, the largest 65,535; zeros dropped), as a dense row."""
    out = np.zeros(len(row))
    if row.sum() <= 0:
        return out
    uids, values = sdk_conform(list(range(len(row))), row.tolist(), max_weight_limit=U16_MAX, self_uid=None)
    out[uids] = values
    return out


def lazy_row(previous: np.ndarray) -> np.ndarray:
    """The median of the others' submitted weights (rows, each normalised), as u16 again; zeros before any."""
    if previous.size == 0 or not previous.any():
        return np.zeros(previous.shape[1] if previous.ndim == 2 else 0)
    sums = previous.sum(axis=1, keepdims=True)
    rows = np.divide(previous, sums, out=np.zeros_like(previous), where=sums > 0)
    return conform(np.median(rows[sums[:, 0] > 0], axis=0))


def simulate(
    series: Mapping[str, np.ndarray],
    lazy: Sequence[str],
    epoch_every: int,
    params: YumaParams,
    lag: int = 1,
) -> dict[str, Any]:
    """Epochs every ``epoch_every`` ticks over the validators ``series`` (label -> weights after each tick,
    (ticks, miners)) and ``lazy`` (copiers of the weights set ``lag`` epochs before: 1 the previous epoch's, more
    as commit-reveal would hide them), equal stake, bonds carried. Returns per validator the vtrust and
    dividends of each epoch and the miners' incentive of each epoch (epochs, miners)."""
    workers = list(series)
    labels = workers + list(lazy)
    v = len(labels)
    ticks, miners = next(iter(series.values())).shape
    n = v + miners
    stake = np.zeros(n)
    stake[:v] = 1.0
    bonds = np.zeros((n, n))
    history: list[np.ndarray] = []  # the workers' weights of each epoch so far
    vtrust: list[list[float]] = []
    dividends: list[list[float]] = []
    spread: list[float] = []
    incentive: list[np.ndarray] = []
    marks = list(range(epoch_every, ticks + 1, epoch_every))
    for t in marks:
        rows = np.zeros((v, miners))
        for i, label in enumerate(workers):
            rows[i] = conform(series[label][t - 1])
        for i in range(len(workers), v):
            rows[i] = lazy_row(history[-lag] if len(history) >= lag else np.zeros((len(workers), miners)))
        history.append(rows[: len(workers)].copy())
        spread.append(total_variation(rows[: len(workers)]))
        w = np.zeros((n, n))
        w[:v, v:] = rows
        out = epoch(w, stake, bonds, params)
        bonds = out.bonds
        vtrust.append(out.validator_trust[:v].tolist())
        dividends.append(out.dividends[:v].tolist())
        incentive.append(out.incentive[v:])
    return {
        "labels": labels,
        "ticks": marks,
        "vtrust": np.array(vtrust),
        "dividends": np.array(dividends),
        "incentive": np.array(incentive),
        "spread": np.array(spread),
    }


def total_variation(rows: np.ndarray) -> float:
    """The mean over pairs of rows (each normalised) of half their L1 distance: the share of weight two
    validators put in different places (0: the same weights; 1: disjoint)."""
    sums = rows.sum(axis=1, keepdims=True)
    keep = sums[:, 0] > 0
    norm = rows[keep] / sums[keep]
    pairs = [0.5 * float(np.abs(a - b).sum()) for i, a in enumerate(norm) for b in norm[i + 1 :]]
    return float(np.mean(pairs)) if pairs else 0.0


def miner_figures(incentive: np.ndarray, people: Sequence[RecordedPersona], truth: Mapping[str, Any]) -> dict[str, Any]:
    """What the chain pays the miners (incentive, a row per epoch averaged): the measured farm per identity over
    its model's honest identity, the shares of farms, sybils and copycats, the honest ranking against the truth."""
    pay = incentive.mean(axis=0)
    col = {p.hotkey: j for j, p in enumerate(people)}
    honest = [p for p in people if p.kind == "honest"]
    farm0 = [col[p.hotkey] for p in people if p.operator == "farm0"]
    twin = [col[p.hotkey] for p in honest if farm0 and p.model == people[farm0[0]].model]
    by_model: dict[str, list[float]] = {}
    for p in honest:
        by_model.setdefault(p.model or "", []).append(float(pay[col[p.hotkey]]))
    models = sorted(by_model)
    share = float(pay.sum()) or 1.0

    def part(kind: str) -> float:
        return round(float(sum(pay[col[p.hotkey]] for p in people if p.kind == kind)) / share, 4)

    twin_pay = float(np.mean(pay[twin])) if twin else 0.0
    return {
        "farm0_vs_twin": round(float(np.mean(pay[farm0])) / twin_pay, 4) if twin_pay else None,
        "farm_share": part("farm"),
        "sybil_share": part("sybil"),
        "copycat_share": part("copycat"),
        "honest_share": part("honest"),
        "spearman_incentive": round(
            spearman([float(np.mean(by_model[m])) for m in models], [truth["lc_winrate"][m] for m in models]), 4
        ),
    }


def summarize(sim: Mapping[str, Any], people: Sequence[RecordedPersona], truth: Mapping[str, Any]) -> dict[str, Any]:
    """The second half of the epochs: each validator's mean and minimum vtrust and mean dividends."""
    epochs = len(sim["ticks"])
    half = slice(epochs // 2, epochs)
    per: dict[str, Any] = {}
    for i, label in enumerate(sim["labels"]):
        vt = sim["vtrust"][half, i]
        per[label] = {
            "vtrust": round(float(vt.mean()), 4),
            "vtrust_min": round(float(vt.min()), 4),
            "dividends": round(float(sim["dividends"][half, i].mean()), 4),
            "vtrust_by_epoch": [round(float(x), 4) for x in sim["vtrust"][:, i]],
            "dividends_by_epoch": [round(float(x), 4) for x in sim["dividends"][:, i]],
        }
    return {
        "epochs": epochs,
        "epoch_ticks": sim["ticks"],
        "validators": per,
        "weights_apart": round(float(sim["spread"][half].mean()), 4),
        "miners": miner_figures(sim["incentive"][half], people, truth),
    }


def group_mean(validators: Mapping[str, Any], prefix: str, key: str = "vtrust") -> float | None:
    values = [v[key] for k, v in validators.items() if k.startswith(prefix)]
    return round(float(np.mean(values)), 4) if values else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.yuma", description=__doc__.split("\n\n")[0])
    p.add_argument("rounds", type=Path, help="rounds file in the validity sets' format (.jsonl or .jsonl.gz)")
    p.add_argument("truth", type=Path, help="its truth.json (lc_winrate per model)")
    p.add_argument("--miners", type=int, default=80, help="identities of the recorded network")
    p.add_argument("--ticks", type=int, default=200)
    p.add_argument("--committees", type=int, default=4, help="validators with committees, per size")
    p.add_argument("--one-round", type=int, default=4, help="validators with everyone in one round")
    p.add_argument("--lazy", type=int, default=1, help="validators copying the median of the others' weights")
    p.add_argument("--lazy-lag", type=int, default=1, help="epochs the copied weights are old (commit-reveal: more)")
    p.add_argument("--sizes", type=int, nargs="+", default=[16], help="committee sizes (daemon.committee_size)")
    p.add_argument(
        "--alphas",
        type=float,
        nargs="*",
        default=[0.1, 0.05, 0.02, 0.01],
        help="weights' memories (daemon.moving_average_alpha) folded again from the ledgers",
    )
    p.add_argument("--epoch-every", type=int, default=10, help="ticks between epochs")
    p.add_argument("--yuma3", action="store_true", help="Yuma 3 bonds (Yuma3On), else the chain's default")
    p.add_argument("--liquid-alpha", action="store_true", help="liquid alpha (with --yuma3)")
    p.add_argument("--kappa", type=float, default=32767 / U16_MAX)
    p.add_argument("--seed", type=int, default=0, help="seeds the validators' secrets")
    p.add_argument("--prompts", type=int, default=0, help="only the set's first P prompts (0: all)")
    p.add_argument("--out", type=Path, default=Path("out/yuma"), help="the embeddings and the ledgers' EMAs")
    args = p.parse_args(argv)
    for path in (args.rounds, args.truth):
        if not path.is_file():
            p.error(f"{path}: no such file")
    if args.ticks < 2 * args.epoch_every:
        p.error(f"--ticks {args.ticks}: at least two epochs of --epoch-every {args.epoch_every}")
    if args.lazy_lag < 1:
        p.error("--lazy-lag: at least 1 (the weights of the previous epoch)")
    if args.committees < 1 and args.one_round < 1:
        p.error("no validator: --committees or --one-round must be at least 1")
    truth = json.loads(args.truth.read_text(encoding="utf-8"))
    answers = read_answers(args.rounds)
    if args.prompts > 0:
        answers = dict(list(answers.items())[: args.prompts])
    people = network(truth, args.miners, 5, round(0.1 * args.miners), 2, False)
    cache = VectorCache(args.out, load_settings(None, env={}, dotenv_path=None), autosave=False)
    cache.adopt(args.out / "vectors.npz")  # this command's own cache file before the lab had one
    embedder = CachedEmbedder(cache)
    texts = sorted({t for by_model in answers.values() for t in by_model.values() if t} | set(answers))
    for start in range(0, len(texts), 256):
        embedder.embed(texts[start : start + 256])
    embedder.cache.save()

    runs = [ValidatorRun(s, i) for s in args.sizes if s > 0 for i in range(args.committees)]
    runs += [ValidatorRun(0, i) for i in range(args.one_round)]
    set_key = hashlib.sha256(f"{args.rounds.name}:{args.prompts}:{args.miners}".encode()).hexdigest()[:10]
    emas: dict[str, np.ndarray] = {}
    ledger_alpha = 0.0
    seconds: dict[str, float] = {}
    for run in runs:
        path = args.out / f"emas-{set_key}-{args.seed}-{run.label}.npz"
        if path.exists():
            with np.load(path) as data:
                if data["emas"].shape[0] >= args.ticks:
                    emas[run.label], ledger_alpha = data["emas"][: args.ticks], float(data["alpha"])
                    continue
        began = time.perf_counter()
        emas[run.label], ledger_alpha = run_daemon(
            answers, people, run.size, secret_of(args.seed, run), args.ticks, embedder, run.label
        )
        seconds[run.label] = round(time.perf_counter() - began, 1)
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, emas=emas[run.label], alpha=ledger_alpha)
        embedder.cache.save()
        print(f"  {run.label}: {args.ticks} ticks in {seconds[run.label]} s", file=sys.stderr, flush=True)

    params = YumaParams(kappa=args.kappa, yuma3=args.yuma3, liquid_alpha=args.liquid_alpha)
    lazy = [ValidatorRun(-1, i).label for i in range(args.lazy)]
    scenarios: dict[str, list[str]] = {}
    one_round = [r.label for r in runs if r.size == 0]
    for size in (s for s in args.sizes if s > 0):
        mine = [r.label for r in runs if r.size == size]
        if not mine:
            continue
        scenarios[f"committees-{size}"] = mine
        if one_round:
            scenarios[f"mixed-{size}"] = mine + one_round
            # one validator of a kind among the others: the operator who alone runs another protocol
            scenarios[f"lone-{size}"] = mine[:1] + one_round
            scenarios[f"lone-one-round-{size}"] = mine + one_round[:1]
    if one_round:
        scenarios["one_round"] = one_round
    out: dict[str, Any] = {
        "set": str(args.rounds),
        "miners": args.miners,
        "ticks": args.ticks,
        "epoch_every": args.epoch_every,
        "lazy_lag": args.lazy_lag,
        "ledger_alpha": ledger_alpha,
        "params": {"kappa": params.kappa, "yuma3": params.yuma3, "liquid_alpha": params.liquid_alpha},
        "daemon_seconds": seconds,
        "results": {},
    }
    for alpha in args.alphas or [ledger_alpha]:
        series = {label: weights_series(e, ledger_alpha, alpha) for label, e in emas.items()}
        by_scenario = {}
        for name, members in scenarios.items():
            sim = simulate({m: series[m] for m in members}, lazy, args.epoch_every, params, args.lazy_lag)
            by_scenario[name] = summarize(sim, people, truth)
        out["results"][f"alpha={alpha}"] = by_scenario
    print(table(out), file=sys.stderr)
    print(json.dumps(out))
    return 0


def table(out: Mapping[str, Any]) -> str:
    """Per memory and scenario: the mean vtrust and dividends of each kind of validator, and the miners' pay."""
    lines = [
        "| memory | scenario | vtrust committees | vtrust one round | vtrust lazy | min vtrust | "
        "weights apart | dividends committees / one round / lazy | farm0 vs twin | farm share | sybil share | Spearman |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for memory, scenarios in out["results"].items():
        for name, s in scenarios.items():
            vals = s["validators"]
            m = s["miners"]
            lowest = min(v["vtrust_min"] for k, v in vals.items() if not k.startswith("lazy"))
            divs = " / ".join(str(group_mean(vals, g, "dividends")) for g in ("c", "one_round", "lazy"))
            lines.append(
                f"| {memory} | {name} | {group_mean(vals, 'c')} | {group_mean(vals, 'one_round')} | "
                f"{group_mean(vals, 'lazy')} | {lowest} | {s['weights_apart']} | {divs} | {m['farm0_vs_twin']} | {m['farm_share']} | "
                f"{m['sybil_share']} | {m['spearman_incentive']} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
