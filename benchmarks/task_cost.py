"""``python -m benchmarks.task_cost``: the cost of a tick's tasks beside the embedding of its answers.

For each of ``--rounds`` rounds (default 300) of the default daemon (no prompts: every round a task), times:

- **generate**: the task source's draw (``validator.daemon.task_source.TaskSource.task_for``: the HMAC draws, the
  generator, the digest check against the questions already asked);
- **verify**: reading and verifying ``--miners`` answers (default 10: the README's embedded pool), written as
  honest models write them (the question restated, then an "Answer:" line, bold, "the answer is", a wrong
  number, a rambling reply);
- **embed** (the baseline): the configured embedder (MiniLM on OpenVINO by default) embedding those answers,
  as every round does.

Prints the median and 90th percentile of each in milliseconds and the ratio of generate + verify to embed. The
first draw of a family (its module's import, a word list) is counted in the first pass; ``--warmup`` rounds
(default 30) run untimed before.
"""

from __future__ import annotations

import argparse
import statistics
import time

from tasks.verify import verify
from validator.daemon.task_source import TaskSource
from validator.settings import load_settings

STYLES = (
    "Let me work it out.\n\nAnswer: {a}",
    "The answer is **{a}**.",
    "Step by step: first we read the question, then compute.\n\n**Answer:** {a}",
    "Answer: 123456",
    "I think this is a question about numbers and the steps one takes to solve it carefully.",
)


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.task_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--miners", type=int, default=10)
    args = parser.parse_args(argv)
    from benchmarks.data import load_embedder

    settings = load_settings(None, env={}, dotenv_path=None)
    source = TaskSource(settings.tasks, b"benchmarks.task_cost secret, 32+ chars", every_round=True)
    embedder = load_embedder(settings)
    gen, ver, emb = [], [], []
    for n in range(1, args.warmup + args.rounds + 1):
        t = time.perf_counter()
        task = source.task_for(n)
        g = time.perf_counter() - t
        # each reply restates its question first (as chat models often do): no two texts of the run are equal, so
        # the embedder's memo of texts already embedded never skips the baseline's work (the small default
        # families' bare replies, "Answer: 6", repeat from round to round)
        texts = [
            f"Question {i}: {task.question}\n\n{STYLES[i % len(STYLES)].format(a=task.answer)}"
            for i in range(args.miners)
        ]
        t = time.perf_counter()
        for text in texts:
            verify(task, text)
        v = time.perf_counter() - t
        t = time.perf_counter()
        embedder.embed(texts)
        e = time.perf_counter() - t
        if n > args.warmup:
            gen.append(g * 1000)
            ver.append(v * 1000)
            emb.append(e * 1000)
    print(f"{args.rounds} rounds of the default families, {args.miners} answers each (ms: median, p90)")
    for name, values in (("generate", gen), ("verify", ver), ("embed (baseline)", emb)):
        print(f"  {name:<18} {statistics.median(values):8.2f} {_p90(values):8.2f}")
    both = [g + v for g, v in zip(gen, ver, strict=True)]
    print(
        f"  generate + verify / embed: {statistics.median(both) / statistics.median(emb):.3f} (medians); "
        f"per family the slowest generate: {max(gen):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
