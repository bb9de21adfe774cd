"""The embedded LM's thread count with a core taken by another process: how much slower, how much CPU.

    python -m benchmarks.lm_threads [--threads 1,2] [--busy off,on] [--requests 5] [--model qwen2.5-coder-1.5b...]

For each thread count and each state of the machine (``off``: as it is; ``on``: one extra process
spinning on a core for the whole measurement, as ``yes > /dev/null`` does), the embedded llama.cpp
server (lm.embedded.LocalServer, one slot) is started, answers one untimed request, then ``--requests``
timed ones: a 300-token prompt read afresh each time (``cache_prompt`` off) and 64 tokens generated at
temperature 0, as the tests' judging and narrative calls do. Per configuration: the median wall seconds
of a request, the server's CPU seconds per request (from /proc: its threads spin while they wait for a
preempted peer, so CPU beyond wall time is waste) and the ratio of the median to the first
configuration's (the baseline, run in the same invocation). Prints one JSON object per configuration,
then a table (benchmarks/journal/performance.md, "Test-suite time").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

os.environ.setdefault("HF_HUB_OFFLINE", "1")

PROMPT = (
    "A validator compares the answers of several miners to one question and pays those that agree. "
    "Read the answer below and say in one short paragraph whether it is correct, complete and on topic.\n\n"
    "Question: Why is the sky blue?\n\nAnswer: "
    + "Sunlight is scattered by the molecules of the air, and shorter wavelengths scatter more strongly "
    "than longer ones (Rayleigh scattering), so blue light reaches the eye from every part of the sky. " * 6
)


def _post(url: str, body: dict, timeout: float = 600.0) -> dict:
    request = urllib.request.Request(
        f"{url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        return json.loads(resp.read())


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def busy_core(on: bool) -> Iterator[None]:
    """One process spinning on a core while the block runs (``yes > /dev/null``), when ``on``."""
    if not on:
        yield
        return
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(["yes"], stdout=sink)
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def measure(model_name: str, threads: int, busy: bool, requests: int) -> dict:
    from lm.embedded import MODELS, LocalServer
    from validator.settings import load_settings

    body = {
        "model": model_name,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 64,
        "temperature": 0.0,
        "cache_prompt": False,
    }
    cache = load_settings().paths.cache
    with busy_core(busy), LocalServer(MODELS[model_name], cache_dir=cache, threads=threads, parallel=1) as server:
        assert server.proc is not None
        url = server.endpoint.url
        _post(url, body)  # untimed: the first request warms the server's buffers
        walls, cpus = [], []
        for _ in range(requests):
            cpu0, t0 = _cpu_seconds(server.proc.pid), time.perf_counter()
            reply = _post(url, body)
            walls.append(time.perf_counter() - t0)
            cpus.append(_cpu_seconds(server.proc.pid) - cpu0)
        usage = reply.get("usage", {})
    return {
        "model": model_name,
        "threads": threads,
        "busy_core": busy,
        "requests": requests,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "median_wall_s": round(statistics.median(walls), 2),
        "wall_s": [round(w, 2) for w in walls],
        "median_server_cpu_s": round(statistics.median(cpus), 2),
        "load": "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> None:
    from lm.embedded import DEFAULT

    p = argparse.ArgumentParser(prog="python -m benchmarks.lm_threads", description=__doc__.split("\n")[0])
    p.add_argument("--threads", default="2,1", help="thread counts, comma-separated; the first is the baseline")
    p.add_argument("--busy", default="off,on", help="off, on or off,on: without and with a spinning process")
    p.add_argument("--requests", type=int, default=5, help="timed requests per configuration (the median is kept)")
    p.add_argument("--model", default=DEFAULT.name, help=f"the embedded model (default {DEFAULT.name})")
    args = p.parse_args(argv)
    states = {"off": False, "on": True}
    try:
        busy = [states[s] for s in args.busy.split(",")]
        threads = [int(t) for t in args.threads.split(",")]
    except (KeyError, ValueError):
        p.error("--busy takes off/on and --threads whole numbers, comma-separated")
    rows = []
    for b in busy:
        for t in threads:
            row = measure(args.model, t, b, args.requests)
            print(json.dumps(row), flush=True)
            rows.append(row)
    base = rows[0]["median_wall_s"]
    print("\n| threads | busy core | median wall s | ratio | server CPU s per request |", file=sys.stdout)
    print("|---:|---|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['threads']} | {'yes' if row['busy_core'] else 'no'} | {row['median_wall_s']:.2f} "
            f"| {row['median_wall_s'] / base:.2f} | {row['median_server_cpu_s']:.2f} |"
        )


if __name__ == "__main__":
    main()
