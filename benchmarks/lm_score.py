"""LM_SCORE latency on the embedded local LM: single call, ENSEMBLE, logprob mode, THINKING on/off, polarity.

    python -m benchmarks.lm_score [--items 6]

ENSEMBLE (the seed's 3 samples at temperature 0.7, AGGREGATION maj or avg) lives here since commit 663e260 (2026-11-26)
(``score_ensemble``): off by default and nothing in the default yesno mode, it left the product (issue 34).

Every measurement uses a prompt the server has not seen (distinct content per
call), so llama.cpp's prompt cache cannot make one mode look cheaper than
another; modes are interleaved item by item. Prints medians and ratios
against the single sampled call.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CASES = [
    ("We have a meeting today at {h}:00", "Are we meeting today at {h}:00?"),
    ("The invoice dated {h}/12/2022 totals ${h},400.", "Is the invoice total above $5,000?"),
    ("Train {h}42 leaves platform {h} at noon.", "Does the train leave in the morning?"),
    ("The recipe needs {h} eggs and two cups of flour.", "Does the recipe need flour?"),
]


ENSEMBLE_SIZE = 3
ENSEMBLE_TEMPERATURE = 0.7
FALLBACK = 5  # lm.lm_score's: nothing usable came back


def aggregate(values: Sequence[int], how: str) -> int:
    """Combine ensemble samples. maj: most common, ties (no value repeated) -> median; avg: mean rounded half up."""
    if not values:
        return FALLBACK
    if how == "avg":
        return int(math.floor(sum(values) / len(values) + 0.5))
    counts = Counter(values).most_common()
    if len(counts) == 1 or counts[0][1] > counts[1][1]:
        return counts[0][0]
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def score_ensemble(client, *content_parts: str, question: str, config=None, how: str = "maj", seed: int = 0):
    """The seed's ENSEMBLE: ``ENSEMBLE_SIZE`` samples of the sampled mode drawn concurrently (latency stays near
    one call on a server with parallel slots), combined by ``aggregate``: an ``lm.lm_score.ScoreResult``."""
    from lm.config import LMConfig
    from lm.lm_score import ScoreResult, lm_score_prompt, sample_score

    config = config or LMConfig()
    prompt = lm_score_prompt(content_parts, question)
    with ThreadPoolExecutor(max_workers=ENSEMBLE_SIZE) as pool:
        results = list(
            pool.map(
                lambda i: sample_score(client, prompt, config, seed=seed + 1000 * i, temperature=ENSEMBLE_TEMPERATURE),
                range(ENSEMBLE_SIZE),
            )
        )
    samples = tuple(r.value if r.ok else None for r in results)
    valid = [v for v in samples if v is not None]
    raw = tuple(a.raw for r in results for a in r.attempts)
    return ScoreResult(aggregate(valid, how), None, samples, not valid, "sampled", raw)


def main(argv: list[str] | None = None) -> int:
    from lm.client import OpenAIChatClient
    from lm.config import LMConfig
    from lm.embedded import LocalServer
    from lm.lm_score import lm_score_detailed
    from validator.settings import load_settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=6, help="distinct prompts per mode")
    args = parser.parse_args(argv)
    modes = {
        "sampled, single": LMConfig(score_mode="sampled"),
        "sampled, ENSEMBLE=t (3 concurrent)": LMConfig(score_mode="sampled"),
        "sampled, THINKING=f": LMConfig(score_mode="sampled", thinking=False),
        "logprob": LMConfig(score_mode="logprob"),
    }
    times: dict[str, list[float]] = {m: [] for m in modes}
    tokens: dict[str, list[int]] = {m: [] for m in modes}
    with LocalServer.for_config(load_settings().lm_config()) as server:
        client = OpenAIChatClient(server.endpoint)
        lm_score_detailed(client, "warm up", question="Is this a warm-up?")
        for i in range(args.items):
            for k, (mode, config) in enumerate(modes.items()):
                content, question = CASES[(i + k) % len(CASES)]
                h = 10 + i * len(modes) + k  # unique per call: no prompt-cache reuse across calls
                before = client.meter.snapshot()
                start = time.perf_counter()
                score = score_ensemble if "ENSEMBLE" in mode else lm_score_detailed
                score(client, content.format(h=h), question=question.format(h=h), config=config)
                times[mode].append(time.perf_counter() - start)
                after = client.meter.snapshot()
                tokens[mode].append(after["completion_tokens"] - before["completion_tokens"])
        # polarity of a round's dominant cluster: 8 and 32 distinct answers, checked concurrently
        from lm.polarity import classify_many

        polarity_rows = []
        for n in (8, 32):
            answers = [
                (
                    i,
                    f"{'No' if i % 3 else 'Yes'}, answer {n}-{i}: the wall is {i + 2} metres wide, so it "
                    f"{'cannot' if i % 3 else 'can'} be seen from the Moon.",
                )
                for i in range(n)
            ]
            start = time.perf_counter()
            classify_many(client, f"Is the Great Wall visible from the Moon? (round {n})", answers, LMConfig())
            polarity_rows.append((n, time.perf_counter() - start))
    base = statistics.median(times["sampled, single"])
    print(f"model {server.model.name}, {args.items} distinct prompts per mode\n")
    print("| mode | median s per LM_SCORE | vs single | completion tokens (median) |\n|---|---:|---:|---:|")
    for mode in modes:
        med = statistics.median(times[mode])
        print(f"| {mode} | {med:.2f} | {med / base:.2f}x | {statistics.median(tokens[mode]):.0f} |")
    print("\n| polarity checks per round | seconds | seconds per response |\n|---:|---:|---:|")
    for n, secs in polarity_rows:
        print(f"| {n} | {secs:.1f} | {secs / n:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
