"""``python -m benchmarks.pool_tasks``: the embedded pool's honest miners on the default tasks, variant by variant.

    python -m benchmarks.pool_tasks record --variant NAME [--n 30] [--dir DIR]
    python -m benchmarks.pool_tasks report [--variant NAME ...] [--dir DIR]
    python -m benchmarks.pool_tasks store STORE [--log FILE]

What README's first command asks the pool's four honest miners (``minerpool.default_miners``, the daemon's
``MAX_TOKENS`` cap) on their own two Qwen2.5-Coder-0.5B servers, as ``minerpool.embedded`` starts them (two slots and
one thread each, the miners split over them), through the product's miner client (``validator.miners``, the daemon's
query limits, the honest miners' 120 s timeout). Task i of the draw is family ``DEFAULT_FAMILIES[i % 3]`` at its
default config with seed sha256("pool_tasks:<i>")[:8], built by ``tasks.source.generate``; the product's
``tasks.verify`` judges each reply. Every variant answers the same draw.

A variant changes the honest miners before the pool starts (``VARIANTS``; names joined by ``+`` combine):

- ``shipped``: the miners as they ship (task persona and task temperature on task prompts, ``minerpool.personas``);
- ``open``: no task persona: the open-prompt persona and temperature on tasks too (the miners before 2026-11-29);
- ``noexamples``: the task persona and temperature without the worked examples;
- ``greedy``: task temperature 0;
- ``tokens96``: a cap of 96 answer tokens instead of 64.

One JSON line per answer goes to ``DIR/<variant>.jsonl`` (default ``benchmarks/results/pool_tasks``); tasks already
there are skipped (resumable). ``report`` prints per variant: honest answers right (95% Wilson interval), tasks
with at least one honest answer right (the rounds the pool would pay), unreadable answers, per family and per miner,
the median and slowest round wait (the slowest honest answer of a task), the copy filter's view of the working
(``own words``: words not in the prompt, the copy rule's ``copy_min_words`` = 12 is where a verbatim copy becomes a
``copy`` and not agreement) and identical honest texts of 12 own words or more (the copy rule would pay one of them).

``store`` reads what a ``validator daemon`` run left in a local store (README's first command, any number of rounds):
rounds, task rounds by family, rounds with a right answer, rounds reached (the record's consensus) and paid, why each
round that paid 0 did, the honest miners' verified accuracy, every honest ``copy`` removal, the units each miner was
paid and, with ``--log`` (the daemon's output), the round times.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.task_record import wilson
from consensus.filters import words
from minerpool import MinerPool, SimMiner, default_miners
from minerpool.embedded import HONEST_TIMEOUT_S, MAX_TOKENS, POOL_CTX_PER_SLOT, POOL_MODEL, POOL_THREADS
from tasks.source import DEFAULT_CONFIGS, DEFAULT_FAMILIES, Task, TaskSpec, generate
from tasks.verify import verify

DIR = Path(__file__).resolve().parent / "results" / "pool_tasks"
COPY_MIN_WORDS = 12  # consensus.config copies.copy_min_words, the shipped value

VARIANTS: dict[str, Callable[[SimMiner], SimMiner]] = {
    "shipped": lambda m: m,
    "open": lambda m: dataclasses.replace(m, task_persona="", task_examples=()),
    "noexamples": lambda m: dataclasses.replace(m, task_examples=()),
    "greedy": lambda m: dataclasses.replace(m, task_temperature=0.0),
    "tokens96": lambda m: dataclasses.replace(m, max_tokens=96),
}


def variant_miners(name: str) -> list[SimMiner]:
    """The default pool's honest miners changed by the variant ``name`` (``a+b`` applies a, then b)."""
    parts = name.split("+")
    unknown = [p for p in parts if p not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant {'+'.join(unknown)!r} (known: {', '.join(VARIANTS)})")
    miners = [m for m in default_miners(max_tokens=MAX_TOKENS, keys=False) if m.behaviour == "honest"]
    for part in parts:
        miners = [VARIANTS[part](m) for m in miners]
    return miners


def task_of(index: int) -> Task:
    family = DEFAULT_FAMILIES[index % len(DEFAULT_FAMILIES)]
    seed = int.from_bytes(hashlib.sha256(f"pool_tasks:{index}".encode()).digest()[:8])
    return generate(TaskSpec(family, seed, dict(DEFAULT_CONFIGS[family])))


def own_words(text: str, prompt: str) -> int:
    """Words of ``text`` not in ``prompt`` (as the copy rule counts a text's own words)."""
    return len(set(words(text)) - set(words(prompt)))


def record(variant: str, n: int, directory: Path) -> Path:
    """Ask the variant's miners tasks 0..n-1 (those not yet in its file), one line per answer."""
    from embedding.cache import default_cache_dir
    from lm.embedded import LocalServer
    from validator.miners import MinerSpec
    from validator.miners.client import query_miners
    from validator.miners.limits import QueryLimits
    from validator.settings import load_settings

    path = directory / f"{variant}.jsonl"
    done = {r["index"] for r in load(path)}
    todo = [i for i in range(n) if i not in done]
    if not todo:
        return path
    directory.mkdir(parents=True, exist_ok=True)
    settings = load_settings(None, env={}, dotenv_path=None)
    limits = QueryLimits.from_settings(settings.daemon)
    miners = variant_miners(variant)
    cache = default_cache_dir()
    servers = [
        LocalServer(POOL_MODEL, cache_dir=cache, threads=POOL_THREADS, parallel=2, ctx_per_slot=POOL_CTX_PER_SLOT)
        for _ in range(2)
    ]
    try:
        for server in servers:
            server.start()
        urls = [s.endpoint.url for s in servers]
        with MinerPool(miners, upstream_url=urls, upstream_model=servers[0].endpoint.model) as pool:
            specs = [dataclasses.replace(MinerSpec.of(a), timeout_s=HONEST_TIMEOUT_S) for a in pool.specs()]
            for i in todo:
                task = task_of(i)
                answers = query_miners(task.prompt, specs, limits)
                lines = []
                for a in answers:
                    verdict = verify(task, a.text)
                    lines.append(
                        {
                            "variant": variant,
                            "index": i,
                            "family": task.spec.family,
                            "question": task.question,
                            "expected": task.answer,
                            "miner": a.hotkey,
                            "text": a.text,
                            "failure": a.failure.value if a.failure else None,
                            "latency_s": round(a.latency_s, 3),
                            "completion_tokens": a.completion_tokens,
                            "right": verdict.right,
                            "read": verdict.answer,
                            "reason": verdict.reason,
                            "own_words": own_words(a.text, task.prompt),
                        }
                    )
                with open(path, "a", encoding="utf-8") as fh:
                    fh.write("".join(json.dumps(line) + "\n" for line in lines))
                right = sum(line["right"] for line in lines)
                print(f"{variant} task {i} {task.spec.family}: {right} of {len(lines)} right", flush=True)
    finally:
        for server in servers:
            server.stop()
    return path


def load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def report(variants: Sequence[str], directory: Path) -> str:
    out = []
    for variant in variants:
        rows = load(directory / f"{variant}.jsonl")
        if not rows:
            out.append(f"{variant}: no answers in {directory}")
            continue
        tasks: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            tasks[r["index"]].append(r)
        acc = wilson(sum(r["right"] for r in rows), len(rows))
        paid = sum(any(r["right"] for r in rs) for rs in tasks.values())
        unreadable = sum(r["reason"].startswith("unreadable") for r in rows)
        waits = [max(r["latency_s"] for r in rs) for rs in tasks.values()]
        out.append(
            f"{variant}: honest answers right {acc.correct}/{acc.n} = {acc.rate:.2f} [{acc.low:.2f}, {acc.high:.2f}]; "
            f"tasks with one right {paid}/{len(tasks)}; unreadable {unreadable}; round wait median "
            f"{statistics.median(waits):.1f} s, slowest {max(waits):.1f} s"
        )
        for key in ("family", "miner"):
            groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for r in rows:
                groups[r[key]].append(r)
            cells = []
            for name, rs in sorted(groups.items()):
                a = wilson(sum(r["right"] for r in rs), len(rs))
                long = sum(r["own_words"] >= COPY_MIN_WORDS for r in rs)
                extra = f", {long}/{len(rs)} with >= {COPY_MIN_WORDS} own words" if key == "miner" else ""
                cells.append(f"{name} {a.correct}/{a.n}{extra}")
            out.append(f"  by {key}: " + "; ".join(cells))
        identical = sum(
            1
            for rs in tasks.values()
            for j, a in enumerate(rs)
            for b in rs[j + 1 :]
            if a["text"] == b["text"] and a["own_words"] >= COPY_MIN_WORDS
        )
        out.append(f"  identical honest texts of >= {COPY_MIN_WORDS} own words: {identical} pairs")
    return "\n".join(out)


HONEST_PREFIX = "honest-"


def store_summary(store: Path, log: Path | None = None) -> str:
    """The figures of a daemon's local store (module docstring, ``store``)."""
    records = [json.loads(p.read_text()) for p in sorted((store / "rounds").glob("*/evaluation.json"))]
    if not records:
        raise SystemExit(f"{store}: no rounds/*/evaluation.json")
    families: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # family -> [rounds, rounds with one right]
    reached = paid = right_rounds = 0
    zero: dict[str, int] = defaultdict(int)
    accuracy: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    units: dict[str, int] = defaultdict(int)
    copies: list[str] = []
    reasons: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for rec in records:
        task = rec.get("task")
        total = int(rec["emissions"]["total"])
        reached += bool(rec["consensus"]["reached"])
        paid += total > 0
        for r in rec["responses"]:
            units[r["miner"]] += int(r["emissions"]["amount"])
            reasons[r["miner"]][r["reason"]] += 1
            if r["miner"].startswith(HONEST_PREFIX) and r["reason"] == "copy":
                copies.append(f"{rec['round_id']} {r['miner']}: {r['detail'][:160]}")
        if task is None:
            if total == 0:
                zero["prompt round, " + ("not reached" if not rec["consensus"]["reached"] else "nobody eligible")] += 1
            continue
        answers = task["answers"]
        any_right = any(a["right"] for a in answers)
        families[task["family"]][0] += 1
        families[task["family"]][1] += any_right
        right_rounds += any_right
        for a in answers:
            if a["miner"].startswith(HONEST_PREFIX):
                accuracy[a["miner"]][0] += bool(a["right"])
                accuracy[a["miner"]][1] += 1
        if total == 0:
            honest = [a for a in answers if a["miner"].startswith(HONEST_PREFIX)]
            wrong = sum(a["reason"] == "wrong" for a in honest)
            unread = sum(a["reason"].startswith("unreadable") for a in honest)
            zero[
                f"task, nobody right (honest: {wrong} wrong, {unread} unreadable)"
                if not any_right
                else "task, right but unpaid"
            ] += 1
    n = len(records)
    tasks = sum(v[0] for v in families.values())
    lines = [
        f"{store}: {n} rounds, {tasks} task rounds; a right answer in {right_rounds}; consensus reached in {reached}; "
        f"paid in {paid} ({paid / n:.1%})",
        "  task rounds with a right answer by family: "
        + "; ".join(f"{f} {v[1]}/{v[0]}" for f, v in sorted(families.items())),
        "  rounds that paid 0: " + ("; ".join(f"{k}: {v}" for k, v in sorted(zero.items())) or "none"),
    ]
    for miner, (ok, asked) in sorted(accuracy.items()):
        a = wilson(ok, asked)
        lines.append(f"  {miner}: right {ok}/{asked} = {a.rate:.2f} [{a.low:.2f}, {a.high:.2f}]")
    lines.append(f"  honest miners removed as copy: {len(copies)}" + "".join(f"\n    {c}" for c in copies[:10]))
    lines.append("  units paid: " + ", ".join(f"{m} {u:,}" for m, u in sorted(units.items(), key=lambda kv: -kv[1])))
    lines.append("  copycat's reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.get("copycat", {}).items())))
    if log is not None:
        seconds = [
            float(line.rsplit(None, 1)[-1][:-1])
            for line in log.read_text(encoding="utf-8").splitlines()
            if line.startswith("round-") and "  paid " in line and line.rstrip().endswith("s")
        ]
        if seconds:
            lines.append(
                f"  round seconds ({len(seconds)} lines): median {statistics.median(seconds):.1f}, "
                f"mean {statistics.fmean(seconds):.1f}, max {max(seconds):.1f}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pool_tasks", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="ask the variant's honest miners the first N tasks of the draw")
    rec.add_argument("--variant", default="shipped", help=f"one of {', '.join(VARIANTS)}, or several joined by +")
    rec.add_argument("--n", type=int, default=30, help="tasks (default 30)")
    rec.add_argument("--dir", type=Path, default=DIR)
    rep = sub.add_parser("report", help="print the figures of recorded variants")
    rep.add_argument("--variant", action="append", help="repeatable; default every file in --dir")
    rep.add_argument("--dir", type=Path, default=DIR)
    st = sub.add_parser("store", help="the figures of a daemon's local store")
    st.add_argument("store", type=Path)
    st.add_argument("--log", type=Path, help="the daemon's output (its round lines give the round times)")
    args = parser.parse_args(argv)
    if args.command == "store":
        print(store_summary(args.store, args.log))
        return 0
    if args.command == "record":
        variant_miners(args.variant)  # an unknown variant stops before any server starts
        record(args.variant, args.n, args.dir)
        print(report([args.variant], args.dir))
        return 0
    names = args.variant or sorted(p.stem for p in args.dir.glob("*.jsonl"))
    print(report(names, args.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
