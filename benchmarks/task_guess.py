"""How guessable a task family is: the share of its tasks a miner answers right without reading the question.

    python -m benchmarks.task_guess [--n 4000] [--all]

A miner that sends a family's most common answer to every task of it (``benchmarks.network``'s guess miner) is
right on that answer's share of the tasks. ``tasks.source.usual_answer`` counts the answers over ``--n`` of the
public generator's seeds (10^9 on, far from any draw): pure and fast. Printed for the product's default set
(tasks/source.py ``DEFAULT_CONFIGS``) and, with ``--all``, for the earlier default set and the candidates measured
when the set was widened (benchmarks/journal/validity.md "An unguessable default task set (2026-11-29)").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tasks.source import DEFAULT_CONFIGS, GUESS_BAR, usual_answer

_SUMS: dict[str, Any] = {"operators": ["+", "-"], "allow_parentheses": False, "allow_negation": False}
_EQS: dict[str, Any] = {"min_terms": 2, "max_terms": 2, "operators": ["+"], "operators_weights": [1.0]}

# the default set before 2026-11-29's widening (nine families at small settings)
EARLIER: tuple[tuple[str, Mapping[str, Any]], ...] = (
    ("basic_arithmetic", {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 2, **_SUMS}),
    ("chain_sum", {"min_terms": 2, "max_terms": 4, "min_digits": 1, "max_digits": 1}),
    ("gcd", {"max_value": 30}),
    ("lcm", {"max_value": 15}),
    ("simple_equations", {**_EQS, "max_value": 20}),
    ("leg_counting", {"min_animals": 1, "max_animals": 2, "max_instances": 3}),
    ("letter_counting", {"min_words": 1, "max_words": 2}),
    ("fraction_simplification", {"max_value": 20, "max_factor": 5, "styles": ["plain"]}),
    ("prime_factorization", {"max_value": 100}),
)

# wider settings tried
CANDIDATES: tuple[tuple[str, Mapping[str, Any]], ...] = (
    ("basic_arithmetic", {"min_terms": 2, "max_terms": 2, "min_digits": 2, "max_digits": 2, **_SUMS}),
    (
        "basic_arithmetic",
        {"min_terms": 2, "max_terms": 2, "min_digits": 2, "max_digits": 2, **_SUMS, "operators": ["+"]},
    ),
    ("chain_sum", {"min_terms": 2, "max_terms": 3, "min_digits": 2, "max_digits": 2}),
    ("chain_sum", {"min_terms": 3, "max_terms": 3, "min_digits": 2, "max_digits": 2}),
    ("products", {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 2}),
    ("products", {"min_terms": 2, "max_terms": 2, "min_digits": 2, "max_digits": 2}),
    ("gcd", {"max_value": 1000}),
    ("lcm", {"max_value": 50}),
    ("lcm", {"max_value": 60}),
    ("lcm", {"max_value": 100}),
    ("simple_equations", {**_EQS, "max_value": 100}),
    ("simple_equations", {**_EQS, "max_value": 200}),
    ("leg_counting", {"min_animals": 2, "max_animals": 3, "max_instances": 10}),
    ("leg_counting", {"min_animals": 2, "max_animals": 3, "max_instances": 15}),
    ("fraction_simplification", {"max_value": 50, "max_factor": 5, "styles": ["plain"]}),
    ("fraction_simplification", {"max_value": 100, "max_factor": 5, "styles": ["plain"]}),
    ("fraction_simplification", {"max_value": 100, "max_factor": 10, "styles": ["plain"]}),
    ("prime_factorization", {"max_value": 200}),
    ("prime_factorization", {"max_value": 1000}),
)


def rows(configs: Sequence[tuple[str, Mapping[str, Any]]], n: int) -> list[dict[str, Any]]:
    out = []
    for family, config in configs:
        usual = usual_answer(family, config, n=n)
        out.append({"family": family, "config": dict(config), "usual": usual.answer, "share": usual.share})
        out[-1] |= {"distinct": usual.distinct, "within_bar": usual.share <= GUESS_BAR}
    return out


def render(title: str, table: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"## {title}", "", "| family | config | most common answer | right by it alone | distinct answers |"]
    lines.append("|---|---|---|---|---|")
    for r in table:
        config = json.dumps(r["config"], separators=(",", ":"))
        lines.append(f"| {r['family']} | `{config}` | `{r['usual']}` | {r['share']:.4f} | {r['distinct']} |")
    mean = sum(r["share"] for r in table) / max(len(table), 1)
    lines.append(f"| mean | | | {mean:.4f} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.task_guess", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=4000, help="generator seeds per family and config")
    p.add_argument("--all", action="store_true", help="also the earlier default set and the candidates tried")
    args = p.parse_args(argv)
    print(render(f"the default set (bar {GUESS_BAR})", rows(tuple(DEFAULT_CONFIGS.items()), args.n)))
    if args.all:
        print()
        print(render("the earlier default set", rows(EARLIER, args.n)))
        print()
        print(render("candidates", rows(CANDIDATES, args.n)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
