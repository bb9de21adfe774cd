"""Judged answers per minute on the embedded local LM: sequential against concurrent requests.

    python -m benchmarks.judge [--items 4] [--repeats 3] [--slots 1,2] [--workers 4]

For each server configuration (llama.cpp slots, ``--slots``) the same kind of
work is judged in ``--repeats`` cells per mode, alternating which mode goes
first: one request at a time (``workers=1``) and ``--workers`` concurrent
requests, through ``judge.llmaaj.judge_responses``
(the code path of ``validator judge``) with the seed's judge prompt. Every
cell judges distinct answers (no reply is served from llama.cpp's prompt cache
that another cell computed; the shared instruction prefix is cached alike in
both modes). SelectIT scoring (k = 1, four generated tokens per call) is timed
the same way. Prints the median seconds per item (every cell listed), answers per minute,
the ratio to sequential, and the server process's CPU seconds per item (user + system,
from /proc): on a shared machine wall time swings with other load, CPU time much less.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

FACTS = [
    (
        "What is the capital of {c}?",
        "{a}.",
        [
            ("Australia", "Canberra"),
            ("Canada", "Ottawa"),
            ("Kenya", "Nairobi"),
            ("Peru", "Lima"),
            ("Norway", "Oslo"),
            ("Japan", "Tokyo"),
            ("Egypt", "Cairo"),
            ("Chile", "Santiago"),
            ("Spain", "Madrid"),
            ("Ghana", "Accra"),
            ("Poland", "Warsaw"),
            ("Cuba", "Havana"),
        ],
    ),
]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc): the server's work, whatever else shares the machine."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def items(n: int, offset: int):
    """n distinct (question, reference, answer) triples; every third answer is wrong."""
    from judge.datasets import ModelAnswer, QnA

    template, ref, pairs = FACTS[0]
    out = []
    for i in range(n):
        country, capital = pairs[(offset + i) % len(pairs)]
        tag = offset + i  # distinct text per item: no cross-cell prompt-cache hits
        answer = f"The capital of {country} is {capital if i % 3 else 'Sydney'} (item {tag})."
        out.append(
            ModelAnswer(
                QnA(template.format(c=country) + f" (item {tag})", ref.format(a=capital), f"b:{tag}"), "bench", answer
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    from judge.llmaaj import Participant, judge_responses
    from judge.selectit import SelectitConfig, SelectitScorer
    from judge.templates import SEED_JUDGE_TEMPLATE
    from judge.tokens import discover_rating_tokens, open_tokenizer
    from lm.client import OpenAIChatClient
    from lm.embedded import LocalServer
    from validator.settings import load_settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=4, help="answers judged per cell")
    parser.add_argument("--repeats", type=int, default=3, help="cells per mode, alternating which mode goes first")
    parser.add_argument("--slots", default="1,2", help="llama.cpp slots to compare, comma-separated")
    parser.add_argument("--workers", type=int, default=4, help="concurrent requests in the concurrent mode")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on kill, too

    per_item: dict[tuple[str, int, int], list[float]] = {}
    cpu_per_item: dict[tuple[str, int, int], list[float]] = {}
    tokens_out: dict[tuple[str, int, int], int] = {}
    valid: dict[tuple[str, int, int], list[int]] = {}
    offset = 0
    for slots in [int(s) for s in args.slots.split(",")]:
        with LocalServer.for_config(load_settings().lm_config(), parallel=slots) as server:
            client = OpenAIChatClient(server.endpoint, timeout_s=900)
            judge = Participant("local", client, SEED_JUDGE_TEMPLATE)
            judge_responses([judge], items(1, 10_000 + slots))  # warm-up (model pages, prefix cache)
            tokenizer = open_tokenizer(server.endpoint)
            rating_tokens = discover_rating_tokens(tokenizer)
            for r in range(args.repeats):
                for workers in (1, args.workers) if r % 2 == 0 else (args.workers, 1):
                    batch = items(args.items, offset)
                    offset += args.items
                    before = client.meter.snapshot()
                    cpu, start = cpu_seconds(server.proc.pid), time.perf_counter()
                    result = judge_responses([judge], batch, workers=workers, max_tokens=512)
                    key = ("judge", slots, workers)
                    per_item.setdefault(key, []).append((time.perf_counter() - start) / len(batch))
                    cpu_per_item.setdefault(key, []).append((cpu_seconds(server.proc.pid) - cpu) / len(batch))
                    tokens_out[key] = (
                        tokens_out.get(key, 0)
                        + client.meter.snapshot()["completion_tokens"]
                        - before["completion_tokens"]
                    )
                    valid.setdefault(key, []).append(sum(1 for x in result if x.answer_score is not None))
                    print(
                        f"{key}: {per_item[key][-1]:.2f} s, {cpu_per_item[key][-1]:.2f} server CPU s per item",
                        file=sys.stderr,
                        flush=True,
                    )

                    samples = [
                        {"id": i, "instruction": x.qna.question, "output": x.answer} for i, x in enumerate(batch)
                    ]
                    scorer = SelectitScorer(
                        client,
                        SelectitConfig(k=1, batch_size=len(samples)),
                        tokens=rating_tokens,
                        tokenizer=tokenizer,
                        workers=workers,
                    )
                    cpu, start = cpu_seconds(server.proc.pid), time.perf_counter()
                    scores = scorer.score(samples)
                    key = ("selectit k=1", slots, workers)
                    per_item.setdefault(key, []).append((time.perf_counter() - start) / len(samples))
                    cpu_per_item.setdefault(key, []).append((cpu_seconds(server.proc.pid) - cpu) / len(samples))
                    valid.setdefault(key, []).append(sum(s.valid for s in scores))
                    print(
                        f"{key}: {per_item[key][-1]:.2f} s, {cpu_per_item[key][-1]:.2f} server CPU s per item",
                        file=sys.stderr,
                        flush=True,
                    )
    print(
        f"model {server.model.name}, {os.cpu_count()} cores, {args.items} distinct items per cell, "
        f"{args.repeats} cells per mode (order alternating)\n"
    )
    print(
        "| work | slots | concurrent requests | items | valid | median s per item (cells) | per minute | "
        "vs sequential | server CPU s per item |\n|---|---:|---:|---:|---:|---|---:|---:|---:|"
    )
    for key, values in per_item.items():
        work, slots, workers = key
        med = statistics.median(values)
        base = statistics.median(per_item[(work, slots, 1)])
        cells = ", ".join(f"{v:.2f}" for v in values)
        print(
            f"| {work} | {slots} | {workers} | {len(values) * args.items} | {sum(valid[key])} | "
            f"{med:.2f} ({cells}) | {60 / med:.1f} | {med / base:.2f}x | {statistics.median(cpu_per_item[key]):.2f} |"
        )
    print("\njudge completion tokens: " + ", ".join(f"{s} slot(s) x {w}: {t}" for (_, s, w), t in tokens_out.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
