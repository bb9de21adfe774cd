"""Choosing the default task set: real local models answering a candidate set through the product's own path.

    python -m benchmarks.task_defaults record --set NAME --model qwen05|qwen15 [--n N] [--max-tokens T]
    python -m benchmarks.task_defaults report [--set NAME ...]
    python -m benchmarks.task_defaults table --set NAME [--families A,B]
    python -m benchmarks.task_defaults rescore [--dir benchmarks/results/tasks/default-set] [--families A,B]
                                               [--current] [--draw accuracy|network]

A *set* (``SETS``) is families, a generator config per family and a request wording. Its draw is ``n`` tasks:
index i asks family ``families[i % len(families)]`` with seed sha256("<set>:<i>")[:8], built by the product's
``tasks.source.generate`` (so the entry is exactly what the daemon would ask). The model answers the request
``<question>\\n\\n<wording>`` greedily (temperature 0) on the product's llama.cpp server (``lm.embedded.LocalServer``,
as ``benchmarks.task_record`` starts it), and ``tasks.verify.verify`` (the product's extraction and the task's
verifier) judges the reply. One JSON line per answer is appended to
``benchmarks/results/tasks/defaults/<set>.<model>.jsonl``; answers already there are skipped (resumable).

``report`` prints per set and model: right/n with its 95% Wilson interval, per family right/n, the mean completion
tokens and seconds per answer (the round time a miner of this model adds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.task_record import append_line, complete, wilson
from lm.embedded import QWEN05, QWEN15, LocalModel

DIR = Path(__file__).resolve().parent / "results" / "tasks" / "defaults"

OLD_FORMAT = 'End your reply with a last line of the form "Answer: <your answer>".'
BRIEF_FORMAT = (
    'Work it out in a few short steps, then end your reply with a last line of the form "Answer: <your answer>".'
)

# reasoning-gym 0.1.25 generators' settings, smaller than their defaults (tasks/source.py keeps the chosen ones)
EASY: dict[str, dict[str, Any]] = {
    "basic_arithmetic": {
        "min_terms": 2,
        "max_terms": 3,
        "min_digits": 1,
        "max_digits": 2,
        "operators": ["+", "-", "*"],
        "allow_parentheses": False,
        "allow_negation": False,
    },
    "chain_sum": {"min_terms": 2, "max_terms": 3, "min_digits": 1, "max_digits": 2},
    "products": {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 2},
    "gcd": {"max_value": 60},
    "lcm": {"max_value": 15},
    "calendar_arithmetic": {"tasks": ["weekday_offset"], "offset_upper_bound": 7},
    "simple_equations": {
        "min_terms": 2,
        "max_terms": 2,
        "max_value": 20,
        "operators": ["+", "-"],
        "operators_weights": [0.5, 0.5],
    },
    "family_relationships": {"min_family_size": 3, "max_family_size": 4},
    "spell_backward": {"min_word_len": 3, "max_word_len": 5},
    "letter_counting": {"min_words": 1, "max_words": 3},
    "leg_counting": {"min_animals": 1, "max_animals": 2, "max_instances": 3},
    "fraction_simplification": {"max_value": 20, "max_factor": 5, "styles": ["plain"]},
    "prime_factorization": {"max_value": 60},
    "gsm_symbolic": {},
    "base_conversion": {"min_base": 2, "max_base": 10, "max_value": 30},
}


@dataclass(frozen=True)
class TaskSet:
    name: str
    families: tuple[str, ...]
    configs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    wording: str = OLD_FORMAT


SETS: dict[str, TaskSet] = {
    # every candidate family at its easy setting, the old wording (a probe: which families can small models do?)
    "probe": TaskSet("probe", tuple(EASY), EASY, OLD_FORMAT),
    "probe-brief": TaskSet("probe-brief", tuple(EASY), EASY, BRIEF_FORMAT),
}
MODELS: dict[str, LocalModel] = {"qwen05": QWEN05, "qwen15": QWEN15}


def product_set() -> TaskSet:
    """The product's defaults as they are now (tasks/source.py)."""
    from tasks.source import DEFAULT_CONFIGS, DEFAULT_FAMILIES, FORMAT

    return TaskSet("default", DEFAULT_FAMILIES, DEFAULT_CONFIGS, FORMAT)


def get_set(name: str) -> TaskSet:
    if name == "default":
        return product_set()
    if name not in SETS:
        raise SystemExit(f"unknown set {name!r} (known: default, {', '.join(SETS)})")
    return SETS[name]


def seed_of(name: str, index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{name}:{index}".encode()).digest()[:8])


def draw(ts: TaskSet, n: int) -> list[tuple[int, Any]]:
    from tasks.source import TaskSpec, generate

    out = []
    for i in range(n):
        family = ts.families[i % len(ts.families)]
        out.append((i, generate(TaskSpec(family, seed_of(ts.name, i), dict(ts.configs.get(family, {}))))))
    return out


def load(path: Path) -> list[dict[str, Any]]:
    """The answers of one file; a half-written last line (a kill mid-write) is dropped, and cut off the file."""
    if not path.is_file():
        return []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    tail = lines.pop()
    if tail:
        print(f"{path}: dropping a half-written last line ({len(tail)} bytes)", file=sys.stderr)
        with open(path, "r+b") as fh:
            fh.truncate(len(raw) - len(tail))
    return [json.loads(line) for line in lines]


def path_of(directory: Path, set_name: str, model: str) -> Path:
    return directory / f"{set_name}.{model}.jsonl"


def record(
    ts: TaskSet, model_name: str, n: int, max_tokens: int, threads: int, directory: Path, until: dt.datetime | None
) -> int:
    import openai

    from embedding.cache import default_cache_dir
    from lm.embedded import LocalServer
    from tasks.verify import verify

    path = path_of(directory, ts.name, model_name)
    done = {int(r["index"]) for r in load(path)}
    todo = [(i, t) for i, t in draw(ts, n) if i not in done]
    if not todo:
        return 0
    model = MODELS[model_name]
    written = 0
    with LocalServer(model, cache_dir=default_cache_dir(), threads=threads, ctx_per_slot=2048) as server:
        client = openai.OpenAI(base_url=server.endpoint.url, api_key="none", timeout=900.0, max_retries=0)
        for i, task in todo:
            if until and dt.datetime.now(dt.UTC) >= until:
                print("deadline reached", file=sys.stderr)
                break
            sent = [{"role": "user", "content": f"{task.question.rstrip()}\n\n{ts.wording}"}]
            sampling = {"temperature": 0.0, "max_tokens": max_tokens, "seed": task.spec.seed % 2**31}
            started = time.monotonic()
            completion = complete(client, model.name, sent, sampling)
            latency = time.monotonic() - started
            verdict = verify(task, completion.text)
            append_line(
                path,
                {
                    "set": ts.name,
                    "model": model_name,
                    "index": i,
                    "family": task.spec.family,
                    "seed": task.spec.seed,
                    "config": dict(task.spec.config),
                    "wording": ts.wording,
                    "max_tokens": max_tokens,
                    "question": task.question,
                    "expected": task.answer,
                    "text": completion.text,
                    "finish_reason": completion.finish_reason,
                    "completion_tokens": completion.usage.completion_tokens,
                    "latency_s": round(latency, 3),
                    "right": verdict.right,
                    "read": verdict.answer,
                    "reason": verdict.reason,
                },
            )
            written += 1
            print(
                f"{ts.name} {model_name} #{i} {task.spec.family}: {'right' if verdict.right else 'WRONG'} "
                f"{completion.usage.completion_tokens} tok {latency:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    return written


def report(directory: Path, names: Sequence[str] | None) -> str:
    out = []
    for path in sorted(directory.glob("*.jsonl")):
        set_name, model = path.stem.rsplit(".", 1)
        if names and set_name not in names:
            continue
        rows = load(path)
        right = sum(bool(r["right"]) for r in rows)
        acc = wilson(right, len(rows))
        tok = sum(int(r["completion_tokens"]) for r in rows) / max(1, len(rows))
        sec = sum(float(r["latency_s"]) for r in rows) / max(1, len(rows))
        out.append(
            f"{set_name} {model}: {right}/{len(rows)} = {acc.rate:.3f} [{acc.low:.3f}, {acc.high:.3f}]; "
            f"{tok:.1f} completion tokens, {sec:.1f} s per answer"
        )
        fams: dict[str, list[bool]] = {}
        for r in rows:
            fams.setdefault(r["family"], []).append(bool(r["right"]))
        out.append("  " + ", ".join(f"{f} {sum(v)}/{len(v)}" for f, v in fams.items()))
    return "\n".join(out)


def table(directory: Path, set_name: str, only: Sequence[str] = ()) -> str:
    """A markdown table of one set: per family, per model, right/n; then the totals with their 95% interval
    (``only``: those families' answers alone)."""
    by_model = {p.stem.rsplit(".", 1)[1]: load(p) for p in sorted(directory.glob(f"{set_name}.*.jsonl"))}
    return render(by_model, only)


def rescore(directory: Path, only: Sequence[str] = (), *, current: bool = False, draw: str = "accuracy") -> str:
    """``benchmarks.task_record``'s recordings (``--tasks default``: ``<dir>/<rung>.jsonl``) judged by the
    product's path instead of the lab's extraction: each task regenerated from (family, seed, config) by
    ``tasks.source.generate`` and the reply judged by ``tasks.verify``; one draw (the accuracy draw by default).
    ``current``: only the tasks of the draw as the default set draws it now (``task_record.draw_tasks`` over
    tasks/source.py's families), leaving out answers recorded while the set had other families (the first
    accuracy draws of qwen05 and qwen15 asked ten, so from index 6 on their families differ)."""
    from benchmarks.task_record import RUNGS, draw_tasks
    from tasks.source import DEFAULT_FAMILIES, TaskSpec, generate
    from tasks.verify import verify

    wanted = {(t.family, t.seed) for t in draw_tasks(draw, families=DEFAULT_FAMILIES)}
    by_rung: dict[str, list[dict[str, Any]]] = {}
    order = {r.name: i for i, r in enumerate(RUNGS)}
    for path in sorted(directory.glob("*.jsonl"), key=lambda p: (order.get(p.stem, len(order)), p.stem)):
        for r in load(path):
            if r["draw"] != draw or (current and (r["family"], int(r["seed"])) not in wanted):
                continue
            task = generate(TaskSpec(r["family"], int(r["seed"]), r.get("config") or {}))
            if task.question != r["question"]:
                raise SystemExit(f"{path}: {r['family']} seed {r['seed']}: the regenerated question differs")
            row = {k: r[k] for k in ("family", "completion_tokens", "latency_s")}
            by_rung.setdefault(path.stem, []).append(row | {"right": verify(task, r["text"]).right})
    return render(by_rung, only)


def render(by_model: Mapping[str, list[dict[str, Any]]], only: Sequence[str] = ()) -> str:
    if only:
        by_model = {m: [r for r in rows if r["family"] in only] for m, rows in by_model.items()}
    models = [m for m in MODELS if m in by_model] + [m for m in by_model if m not in MODELS]
    families = list(dict.fromkeys(r["family"] for rows in by_model.values() for r in rows))
    out = ["| family | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for f in families:
        cells = []
        for m in models:
            got = [bool(r["right"]) for r in by_model[m] if r["family"] == f]
            cells.append(f"{sum(got)}/{len(got)}")
        out.append(f"| {f} | " + " | ".join(cells) + " |")
    totals = []
    for m in models:
        got = [bool(r["right"]) for r in by_model[m]]
        a = wilson(sum(got), len(got))
        totals.append(f"**{a.correct}/{a.n} = {a.rate:.2f} [{a.low:.2f}, {a.high:.2f}]**")
    out.append("| all (95% Wilson interval) | " + " | ".join(totals) + " |")
    speed = []
    for m in models:
        rows = by_model[m]
        tok = sum(int(r["completion_tokens"]) for r in rows) / max(1, len(rows))
        sec = sum(float(r["latency_s"]) for r in rows) / max(1, len(rows))
        speed.append(f"{tok:.1f} tokens, {sec:.1f} s")
    out.append("| mean reply (completion tokens, seconds) | " + " | ".join(speed) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.task_defaults", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--set", required=True, help=f"default (tasks/source.py) or one of {', '.join(SETS)}")
    rec.add_argument("--model", choices=tuple(MODELS), required=True)
    rec.add_argument("--n", type=int, default=60)
    rec.add_argument("--max-tokens", type=int, default=128)
    rec.add_argument("--threads", type=int, default=2)
    rec.add_argument("--until", default=None, help="HH:MM UTC: start no answer after this time")
    rec.add_argument("--dir", type=Path, default=DIR)
    tab = sub.add_parser("table", help="a markdown table of one set (docs/validity.md)")
    tab.add_argument("--set", required=True)
    tab.add_argument("--families", default="", help="comma-separated: count these families only")
    tab.add_argument("--dir", type=Path, default=DIR)
    res = sub.add_parser("rescore", help="benchmarks.task_record's --tasks default recordings, judged by tasks.verify")
    res.add_argument("--dir", type=Path, default=DIR.parent / "default-set")
    res.add_argument("--families", default="", help="comma-separated: count these families only")
    res.add_argument("--current", action="store_true", help="only the draw's tasks as the default set draws it now")
    res.add_argument("--draw", choices=("accuracy", "network"), default="accuracy")
    rep = sub.add_parser("report")
    rep.add_argument("--set", action="append", default=None)
    rep.add_argument("--dir", type=Path, default=DIR)
    args = parser.parse_args(argv)
    if args.command == "table":
        print(table(args.dir, args.set, tuple(f for f in args.families.split(",") if f)))
        return 0
    if args.command == "rescore":
        only = tuple(f for f in args.families.split(",") if f)
        print(rescore(args.dir, only, current=args.current, draw=args.draw))
        return 0
    if args.command == "report":
        print(report(args.dir, args.set))
        return 0
    until = None
    if args.until:
        hour, minute = (int(x) for x in args.until.split(":"))
        until = dt.datetime.now(dt.UTC).replace(hour=hour, minute=minute, second=0, microsecond=0)
    n = record(get_set(args.set), args.model, args.n, args.max_tokens, args.threads, args.dir, until)
    print(f"{n} answers recorded", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
