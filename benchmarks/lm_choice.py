"""Which embedded model? LM_SCORE on the seed's four examples and twelve labelled cases of our own.

    python -m benchmarks.lm_choice [--models qwen2.5-coder-0.5b-instruct-q4_k_m,qwen2.5-coder-1.5b-instruct-q4_k_m]

For each model (started as the embedded local LM) and each mode (sampled,
logprob): the score of every case, the share of cases on the right side of 5
(yes > 5, no < 5), the separation (AUROC of the score between yes and no
cases; 0.5 = chance), and the median seconds per call.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# (content parts, question, expected answer). The first four are the seed's.
CASES: list[tuple[tuple[str, ...], str, bool]] = [
    (("This is a test",), "Is this a test?", True),
    (("We have a meeting today at 3:00",), "Are we meeting today at 3:00?", True),
    (("We have a meeting today at 3:00",), "Are we meeting today at 4:00?", False),
    (("Weekly invoice 12/12/2022", "$14,000"), "Is my invoice greater than $5,000?", True),
    (("The store opens at 9 am and closes at 5 pm on weekdays.",), "Is the store open at 8 pm on a Tuesday?", False),
    (("Flight BA117 to New York was cancelled due to the storm.",), "Will flight BA117 depart as planned?", False),
    (("Ingredients: flour, sugar, butter, eggs, vanilla.",), "Does the recipe contain eggs?", True),
    (("Ingredients: flour, sugar, butter, eggs, vanilla.",), "Is this recipe vegan?", False),
    (("Invoice total: $3,200", "Payment received: $3,200"), "Has the invoice been paid in full?", True),
    (("Invoice total: $3,200", "Payment received: $1,000"), "Has the invoice been paid in full?", False),
    (("The package was delivered to the front desk on Monday.",), "Was the package delivered?", True),
    (("Python lists are mutable; tuples are immutable.",), "Can you change an element of a tuple in place?", False),
    (("Water boils at 100 degrees Celsius at sea level.",), "Does water boil at 100 C at sea level?", True),
    (("The contract ends on 31 March 2025 and renews automatically.",), "Does the contract renew automatically?", True),
    (("All seats on the 18:05 train are sold out.",), "Can I still buy a seat on the 18:05 train?", False),
    (("The report is due Friday; today is Monday.",), "Is the report overdue?", False),
]


def auroc(yes: list[float], no: list[float]) -> float:
    pairs = [(1.0 if y > n else 0.5 if y == n else 0.0) for y in yes for n in no]
    return sum(pairs) / len(pairs)


def main(argv: list[str] | None = None) -> int:
    from lm.client import OpenAIChatClient
    from lm.config import LMConfig
    from lm.embedded import MODELS, LocalServer
    from lm.lm_score import lm_score_detailed
    from validator.settings import load_settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args(argv)
    print("| model | mode | right side of 5 | AUROC | yes mean | no mean | fallbacks | median s/call |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    details = []
    for name in args.models.split(","):
        with LocalServer.for_config(load_settings().lm_config(), MODELS[name]) as server:
            client = OpenAIChatClient(server.endpoint)
            for mode in ("sampled", "logprob"):
                config = LMConfig(score_mode=mode)
                yes, no, secs, right, fallbacks = [], [], [], 0, 0
                for parts, question, answer in CASES:
                    # each mode's first call on a case pays the prompt; order modes so both see it once
                    start = time.perf_counter()
                    r = lm_score_detailed(client, *parts, question=question, config=config)
                    secs.append(time.perf_counter() - start)
                    value = r.expected if r.expected is not None else float(r.score)
                    (yes if answer else no).append(value)
                    right += int((value > 5) if answer else (value < 5))
                    fallbacks += int(r.fallback)
                    details.append((name, mode, question, answer, round(value, 2)))
                print(
                    f"| {name} | {mode} | {right}/{len(CASES)} | {auroc(yes, no):.2f} | "
                    f"{statistics.mean(yes):.2f} | {statistics.mean(no):.2f} | {fallbacks} | "
                    f"{statistics.median(secs):.2f} |",
                    flush=True,
                )
    print("\nper case:")
    for row in details:
        print("  ", *row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
