"""Does the embedded pool's honest generation starve behind the validator's own LM calls? Which LM setup to use?

    python -m benchmarks.pool_lm [--configs shared1,shared2,pool05,pool05x2] [--prompts 3] [--load on|off|both]

For each configuration the embedded default pool (four honest miners backed by
the local LM, six misbehaving ones) answers the daemon's first built-in prompts
with the daemon's embedded limits (``max_tokens`` 96, honest timeout 120 s),
once with the LM otherwise idle (``off``) and once while a validator-like load
runs on the validator's LM (``on``: back-to-back yes/no judging calls with 20
top log-probabilities and narrative-length generations, as polarity, judging
and the narrative of the previous round would). Configurations:

- ``shared1``: one 1.5B server, one slot, shared by the pool and the validator (the old default);
- ``shared2``: one 1.5B server with two slots, shared;
- ``pool05``: the validator on a 1.5B server (one slot), the pool on its own 0.5B server (one slot);
- ``pool05x2``: the same with two slots on the pool's 0.5B server.

Per configuration and load: the honest miners' latencies (median and slowest
over rounds), how many answered within the timeout, the validator calls done
per round and their median seconds, and near-copy pairs among the honest
answers (word match ratio >= 0.85, the copy filter's bar). Needs the 1.5B and,
for ``pool05``, the 0.5B model parts installed (docs/lm.md).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import statistics
import threading
import time
import urllib.request

os.environ.setdefault("HF_HUB_OFFLINE", "1")

HONEST_TIMEOUT_S = 120.0
JUDGE_CONTENT = (
    "Answer under review: Python lists are mutable: you can change, add and remove elements after "
    "creating the list, for example with append, insert or item assignment. Tuples, by contrast, are "
    "immutable and cannot be changed once created. "
) * 2


def _post(url: str, body: dict, timeout: float = 300.0) -> dict:
    request = urllib.request.Request(
        f"{url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        return json.loads(resp.read())


class ValidatorLoad:
    """Back-to-back validator-like calls on ``url`` until stopped: 3 yes/no judging calls, then one narrative."""

    def __init__(self, url: str, model: str) -> None:
        self.url, self.model = url, model
        self.seconds: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            if i % 4 == 3:
                body = {
                    "model": self.model,
                    "max_tokens": 160,
                    "temperature": 0.0,
                    "messages": [
                        {"role": "system", "content": "You write short evaluation reports for a validator."},
                        {
                            "role": "user",
                            "content": f"Write a four-sentence report of round {i}: 7 miners answered, "
                            "4 agreed, 1 copied, 1 was off-topic, 1 tried an injection.",
                        },
                    ],
                }
            else:
                body = {
                    "model": self.model,
                    "max_tokens": 1,
                    "temperature": 0.0,
                    "logprobs": True,
                    "top_logprobs": 20,
                    "messages": [
                        {
                            "role": "user",
                            "content": (
                                f"{JUDGE_CONTENT}\n\nQuestion: does the answer say yes ({i})?\nAnswer with yes or no."
                            ),
                        }
                    ],
                }
            started = time.perf_counter()
            try:
                _post(self.url, body)
                self.seconds.append(time.perf_counter() - started)
            except OSError:
                pass
            i += 1

    def __enter__(self) -> ValidatorLoad:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # not joined: a call in flight goes on on the server, as a validator's abandoned or late
        # call would, and counts against the next round (only calls finished in the round are counted)
        self._stop.set()
        self.seconds = list(self.seconds)


def _near_copies(texts: list[str]) -> int:
    words = [t.lower().split() for t in texts]
    return sum(
        difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.85
        for i, a in enumerate(words)
        for b in words[i + 1 :]
    )


@contextlib.contextmanager
def _servers(config: str, threads: int):
    """(validator endpoint, pool endpoint) for a configuration."""
    from embedding.cache import default_cache_dir
    from lm.embedded import QWEN05, QWEN15, LocalServer

    cache = default_cache_dir()
    with contextlib.ExitStack() as stack:
        if config.startswith("pool05"):
            validator = stack.enter_context(LocalServer(QWEN15, cache_dir=cache, threads=threads)).endpoint
            pool = stack.enter_context(
                LocalServer(QWEN05, cache_dir=cache, threads=threads, parallel=2 if config == "pool05x2" else 1)
            ).endpoint
        else:
            parallel = 2 if config == "shared2" else 1
            validator = pool = stack.enter_context(
                LocalServer(QWEN15, cache_dir=cache, parallel=parallel, threads=threads)
            ).endpoint
        for endpoint in {validator.url: validator, pool.url: pool}.values():  # warm up
            _post(
                endpoint.url,
                {"model": endpoint.model, "max_tokens": 4, "messages": [{"role": "user", "content": "Say hi."}]},
            )
        yield validator, pool


def _round(prompt: str, specs, pool) -> dict:
    from validator.miners import MinerSpec, QueryLimits, query_miners

    limits = QueryLimits(
        request_timeout_s=HONEST_TIMEOUT_S, deadline_s=HONEST_TIMEOUT_S + 30, max_answer_chars=20_000, max_tokens=96
    )
    started = time.perf_counter()
    answers = query_miners(prompt, [MinerSpec.of(s) for s in specs], limits)
    honest = [a for a in answers if a.hotkey.startswith("honest-")]
    return {
        "wall": time.perf_counter() - started,
        "latencies": [a.latency_s for a in honest if a.ok],
        "ok": sum(a.ok for a in honest),
        "n": len(honest),
        "copies": _near_copies([a.text for a in honest if a.ok]),
        "texts": {a.hotkey: a.text for a in honest},
    }


def run(config: str, prompts: list[str], loads: list[bool], threads: int) -> list[dict]:
    import dataclasses

    from minerpool import default_pool

    rows = []
    with _servers(config, threads) as (validator, upstream):
        pool, specs = default_pool(upstream.url, upstream_model=upstream.model, max_tokens=96, slow_delay_s=40.0)
        specs = [dataclasses.replace(s, timeout_s=10.0 if s.hotkey == "slow" else None) for s in specs]
        with pool:
            for load in loads:
                rounds, calls = [], []
                for prompt in prompts:
                    with ValidatorLoad(validator.url, validator.model) if load else contextlib.nullcontext() as vl:
                        rounds.append(_round(prompt, specs, pool))
                    if vl is not None:
                        calls.append(vl.seconds)
                latencies = [x for r in rounds for x in r["latencies"]]
                row = {
                    "config": config,
                    "load": "on" if load else "off",
                    "honest_ok": f"{sum(r['ok'] for r in rounds)}/{sum(r['n'] for r in rounds)}",
                    "median_s": statistics.median(latencies) if latencies else None,
                    "slowest_s": max(r["wall"] for r in rounds),
                    "near_copy_pairs": sum(r["copies"] for r in rounds),
                    "validator_calls_per_round": statistics.mean(len(c) for c in calls) if calls else 0,
                    "validator_call_median_s": statistics.median([s for c in calls for s in c])
                    if calls and any(calls)
                    else None,
                    "texts": [r["texts"] for r in rounds],
                }
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "texts"}), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    from validator.round.prompt_source import BUILTIN

    parser = argparse.ArgumentParser(prog="python -m benchmarks.pool_lm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="shared1,shared2,pool05,pool05x2")
    parser.add_argument("--prompts", type=int, default=3)
    parser.add_argument("--load", choices=("on", "off", "both"), default="both")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--out", default=None, help="write every row (answers included) as JSON here")
    args = parser.parse_args(argv)
    prompts = [item.prompt for item in BUILTIN[: args.prompts]]
    loads = {"on": [True], "off": [False], "both": [False, True]}[args.load]
    rows = []
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    for config in args.configs.split(","):
        rows += run(config, prompts, loads, args.threads)
        if args.out:  # after each configuration, so a long run can be read as it goes
            with open(args.out, "w") as fh:
                json.dump(rows, fh, indent=1)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(
        "| config | validator load | honest ok | honest latency median | slowest round | near-copy pairs "
        "| validator calls/round | validator s/call |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")

    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}"

    for r in rows:
        print(
            f"| {r['config']} | {r['load']} | {r['honest_ok']} | {fmt(r['median_s'])} s | {r['slowest_s']:.1f} s "
            f"| {r['near_copy_pairs']} | {r['validator_calls_per_round']:.1f} | {fmt(r['validator_call_median_s'])} s |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
