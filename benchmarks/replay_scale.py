"""Replay and what-if at scale: whole ``validator`` commands on a synthetic store, in-process vs Ray.

Run ``python -m benchmarks.replay_scale`` (defaults: the issue's 2,000 stored
rounds x 64 miners, 200 rounds for the re-embedding runs, medians of 3). It

1. writes a synthetic daemon-like store: per round a prompt, ``--miners``
   answers drawn from a few paraphrase families of real words, the input,
   the embeddings of the real model (so they are reused) and the original
   record (evaluated from those embeddings);
2. times ``validator replay ROUNDS.jsonl`` on ``--first`` rounds of the same
   kind: the first evaluation, with embedding and the heatmap (per round);
3. times ``validator whatif STORE --config changed.toml`` (a stricter
   ``consensus_threshold``, heatmaps off: a what-if needs the numbers, not
   the pictures) with ``--engine inprocess`` and ``--engine ray --num-cpus 1``
   and ``2``: medians of ``--repeats`` whole commands, each with a fresh id;
4. the same on ``--reembed`` rounds with ``[embedding] long_texts = "full"``
   (another long-text policy: every answer is embedded again on the workers), plus in-process with
   ``embedding.threads = 1``: the in-process run already embeds on both cores, so Ray's two workers
   are compared both with it and with what one worker has (one thread).

Prints one JSON document (also written to ``--out``/results.json). Heavy:
``--rounds 200 --repeats 1`` for a quick look.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORDS = (
    "lists tuples mutable immutable python objects change append remove items elements sequence "
    "values memory reference copy modify place assignment index slice order type created after "
    "before unlike dictionary set string integer float key hash method function call return"
).split()


def _answer(rng: random.Random, family: int, length: int) -> str:
    base = WORDS[family * 5 : (family * 5) + 12] or WORDS[:12]
    return " ".join(rng.choice(base if rng.random() < 0.7 else WORDS) for _ in range(length)).capitalize() + "."


def rounds_jsonl(path: Path, rounds: int, miners: int, seed: int, distinct: int | None = None) -> None:
    """``rounds`` synthetic rounds of ``miners`` answers each, as ``validator replay`` reads them.

    ``distinct``: every answer is drawn from that many texts per paraphrase family (never twice in a
    round), so building a large store embeds each text once (the embedder's text memo); the what-if
    over stored embeddings embeds nothing, so its cost does not depend on it. None: every answer new.
    """
    rng = random.Random(seed)
    pools = (
        None
        if distinct is None
        else {f: [_answer(rng, f, rng.randint(20, 80)) for _ in range(distinct)] for f in (0, 1, 2, 5)}
    )
    with open(path, "w", encoding="utf-8") as fh:
        for r in range(rounds):
            drawn = {f: iter(rng.sample(pool, len(pool))) for f, pool in pools.items()} if pools else {}
            families = [m % 3 if m % 11 else 5 for m in range(miners)]
            responses = [
                {
                    "miner": f"miner-{m:03d}",
                    "text": next(drawn[f]) if drawn else _answer(rng, f, rng.randint(20, 80)),
                    "latency_s": round(rng.uniform(0.5, 8.0), 3),
                }
                for m, f in enumerate(families)
            ]
            fh.write(
                json.dumps(
                    {"round_id": f"round-{r:06d}", "prompt": "Is Python's list type mutable?", "responses": responses}
                )
                + "\n"
            )


def _run(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _median(cmds: list[list[str]], env: dict[str, str]) -> dict:
    times = [_run(cmd, env) for cmd in cmds]
    return {"runs_s": [round(t, 2) for t in times], "median_s": round(statistics.median(times), 2)}


def build_store(
    out: Path, rounds: int, miners: int, seed: int, env: dict[str, str], distinct: int | None = None
) -> Path:
    """A store of ``rounds`` evaluated rounds (input, embeddings, record), written by ``validator replay``."""
    name = f"{rounds}x{miners}" + ("" if distinct is None else f"-pool{distinct}")
    store = out / f"store-{name}"
    if (store / "summary.json").is_file():
        return store
    source = out / f"rounds-{name}.jsonl"
    rounds_jsonl(source, rounds, miners, seed, distinct)
    cfg = out / "no-heatmap.toml"
    cfg.write_text("[consensus]\nheatmap = false\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "validator",
            "replay",
            str(source),
            "--out",
            str(store),
            "--config",
            str(cfg),
            "--no-progress",
        ],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    return store


def whatif_runs(
    store: Path, cfg: Path, rounds: int, repeats: int, env: dict[str, str], tag: str, one_thread: Path | None = None
) -> dict:
    """Medians of whole ``validator whatif`` commands per engine; ``one_thread``: the same config with
    ``embedding.threads = 1``, run in-process too (what one Ray worker has: the scaling reference)."""
    engines = [
        ("inprocess", cfg, ["--engine", "inprocess"]),
        ("ray_1", cfg, ["--engine", "ray", "--num-cpus", "1"]),
        ("ray_2", cfg, ["--engine", "ray", "--num-cpus", "2"]),
    ]
    if one_thread is not None:
        engines.insert(1, ("inprocess_1_thread", one_thread, ["--engine", "inprocess"]))
    out = {}
    for name, config, extra in engines:
        base = [sys.executable, "-m", "validator", "whatif", str(store), "--config", str(config), "--no-progress"]
        cmds = [
            base + extra + ["--whatif-id", f"{tag}-{name}-{i}", "--out", str(store.parent / f"w-{tag}")]
            for i in range(repeats)
        ]
        out[name] = _median(cmds, env)
        out[name]["per_round_ms"] = round(1000 * out[name]["median_s"] / rounds, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--miners", type=int, default=64)
    p.add_argument("--reembed", type=int, default=200, help="rounds of the re-embedding runs")
    p.add_argument("--first", type=int, default=50, help="rounds of the first evaluation (with embedding)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--distinct",
        type=int,
        default=2000,
        help="texts per paraphrase family in the large store (see rounds_jsonl); 0: all new",
    )
    p.add_argument("--out", type=Path, default=Path("runs/bench-replay-scale"))
    args = p.parse_args(argv)
    args.distinct = args.distinct or None
    args.out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    results: dict = {
        "rounds": args.rounds,
        "miners": args.miners,
        "reembed_rounds": args.reembed,
        "repeats": args.repeats,
        "cpus": os.cpu_count(),
    }
    first_src = args.out / f"first-{args.first}.jsonl"
    rounds_jsonl(first_src, args.first, args.miners, args.seed + 1)
    first = _median(
        [
            [
                sys.executable,
                "-m",
                "validator",
                "replay",
                str(first_src),
                "--out",
                str(args.out / f"first-{i}"),
                "--no-progress",
            ]
            for i in range(args.repeats)
        ],
        env,
    )
    first["per_round_ms"] = round(1000 * first["median_s"] / args.first, 2)
    results["first_evaluation_with_embedding"] = first
    changed = args.out / "changed.toml"
    changed.write_text("[consensus]\nconsensus_threshold = 0.8\nheatmap = false\n")
    store = build_store(args.out, args.rounds, args.miners, args.seed, env, distinct=args.distinct)
    results["whatif_stored_embeddings"] = whatif_runs(store, changed, args.rounds, args.repeats, env, "stored")
    reembed_cfg = args.out / "reembed.toml"
    reembed_cfg.write_text(
        '[consensus]\nconsensus_threshold = 0.8\nheatmap = false\n\n[embedding]\nlong_texts = "full"\n'
    )
    one_thread = args.out / "reembed-1-thread.toml"
    one_thread.write_text(reembed_cfg.read_text() + "threads = 1\n")
    small = build_store(args.out, args.reembed, args.miners, args.seed + 2, env)
    results["whatif_reembedding"] = whatif_runs(
        small, reembed_cfg, args.reembed, args.repeats, env, "reembed", one_thread=one_thread
    )
    stored, reembed = results["whatif_stored_embeddings"], results["whatif_reembedding"]
    results["goals"] = {
        "stored_vs_first_speedup": round(first["per_round_ms"] / stored["inprocess"]["per_round_ms"], 1),
        "reembed_ray2_vs_inprocess": round(reembed["inprocess"]["median_s"] / reembed["ray_2"]["median_s"], 2),
        "reembed_ray2_vs_inprocess_1_thread": round(
            reembed["inprocess_1_thread"]["median_s"] / reembed["ray_2"]["median_s"], 2
        ),
        "reembed_inprocess_2_threads_vs_1": round(
            reembed["inprocess_1_thread"]["median_s"] / reembed["inprocess"]["median_s"], 2
        ),
    }
    text = json.dumps(results, indent=2)
    (args.out / "results.json").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
