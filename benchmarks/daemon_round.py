"""The daemon's own cost per round with many loopback miners.

    python -m benchmarks.daemon_round [--sizes 64,256] [--rounds 5]

For each size, a pool of fast canned miners on loopback (each with its own
answer text, the round_eval benchmark's corpus) answers; the daemon runs a
warm-up round and then ``--rounds`` measured rounds into a local directory
store (no LM). Per round: every stage's seconds, the slowest miner's latency
(time the validator has to wait anyway) and the validator's overhead:

    overhead = round wall time (first request to ledger stored)
               - slowest miner latency - embedding

reported per miner. Baseline, measured in the same run: a bare aiohttp
fetch of the same miners (one session, all requests concurrent, bodies read,
nothing parsed), so the query stage is also given as a ratio to it.
Figures are medians over the measured rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


async def _bare_fetch(urls: list[str], body: bytes) -> None:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=len(urls))) as session:

        async def one(url: str) -> None:
            async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
                await resp.read()

        await asyncio.gather(*(one(u) for u in urls))


def bare_fetch(specs, prompt: str) -> float:
    import json

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}], "max_tokens": 200}).encode()
    t = time.perf_counter()
    asyncio.run(_bare_fetch([s.chat_url for s in specs], body))
    return time.perf_counter() - t


def measure(n: int, rounds: int, seed: int = 0) -> dict:
    from benchmarks.round_eval import ensure_texts, load_texts
    from embedding.loader import load_embedder
    from minerpool import MinerPool, SimMiner
    from storage.local import LocalStore
    from validator.daemon.daemon import Daemon, miners_query
    from validator.miners import MinerSpec
    from validator.round.prompt_source import BUILTIN
    from validator.settings import load_settings

    texts, _ = load_texts(ensure_texts(n, seed, 0.0))
    settings = load_settings(
        None, env={"VALIDATOR_DAEMON__INTERVAL_S": "0", "VALIDATOR_DAEMON__QUORUM": "2"}, dotenv_path=None
    )
    embedder = load_embedder(
        settings.embedding.runtime, threads=settings.embedding.threads, long_texts=settings.embedding.policy()
    )
    # "On {prompt}: ..." makes every round's texts new, so embedding is measured, not memoised
    miners = [
        SimMiner(f"canned-{i:04d}", "canned", text="On {prompt}: " + t.replace("{", "(").replace("}", ")"))
        for i, t in enumerate(texts)
    ]
    rows = []
    with MinerPool(miners) as pool, tempfile.TemporaryDirectory() as tmp:
        specs = [MinerSpec.of(a) for a in pool.specs()]
        daemon = Daemon(
            store=LocalStore(tmp),
            embedder=embedder,
            settings=settings,
            prompts=BUILTIN,
            query=miners_query(specs, settings),
        )
        daemon.run_one()  # warm-up: imports, model, connections
        bare = []
        for _ in range(rounds):
            bare.append(bare_fetch(specs, BUILTIN[0].prompt))
            report = daemon.run_one()
            slowest = max(report.latencies)
            s = report.stages
            overhead = report.seconds - slowest - s.get("embed", 0.0)
            rows.append(
                {
                    "total": report.seconds,
                    "slowest_miner": slowest,
                    "query": s["query"],
                    "query_overhead": s["query"] - slowest,
                    "embed": s["embed"],
                    "consensus": s["consensus"],
                    "emissions": s["emissions"],
                    "heatmap": s["heatmap"],
                    "narrative": s["narrative"],
                    "persist": s["persist"],
                    "ledger": s["ledger"],
                    "overhead": overhead,
                    "overhead_per_miner_ms": 1000 * overhead / n,
                }
            )
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    med["bare_fetch"] = statistics.median(bare)
    med["query_vs_bare"] = med["query"] / med["bare_fetch"]
    med["n"] = n
    return med


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="64,256")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    results = [measure(int(n), args.rounds) for n in args.sizes.split(",")]
    stages = [
        "total",
        "slowest_miner",
        "query",
        "bare_fetch",
        "query_vs_bare",
        "query_overhead",
        "embed",
        "consensus",
        "emissions",
        "heatmap",
        "narrative",
        "persist",
        "ledger",
        "overhead",
        "overhead_per_miner_ms",
    ]
    print(f"medians over {args.rounds} rounds (seconds unless noted)\n")
    print("| stage | " + " | ".join(f"n={r['n']}" for r in results) + " |")
    print("|---|" + "---:|" * len(results))
    for stage in stages:
        unit = "" if stage in ("query_vs_bare", "overhead_per_miner_ms") else ""
        print(f"| {stage} | " + " | ".join(f"{r[stage]:.4f}{unit}" for r in results) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
