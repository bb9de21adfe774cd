"""Measure the LM's own yes or no (lm.arbitrate's yes/no arbitration; issue 25) on questions with known answers.

    nice -n 10 python -m benchmarks.arbitration_yesno examples/arbitration/yesno.jsonl \\
        --out benchmarks/results/arbitration_yesno.json [--server-url URL]

Each line is a yes/no question and its right answer. The LM (SERVER_URL / ``--server-url``, else the embedded one
started here; no cache) gives its own short answer as the round does (``lm.arbitrate.own_answer``: greedy, the
probability of its first token as the confidence); the side is what ``consensus.fact_match.yes_no_labels`` reads in it.
Prints, per confidence bar, how often the side is right, wrong, or the LM abstains (below the bar, or neither yes
nor no), and saves every reply to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

BARS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95)


def measure(client: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from consensus.fact_match import yes_no_labels
    from lm.arbitrate import own_answer

    rows = []
    for item in items:
        t = time.perf_counter()
        own = own_answer(client, item["question"])
        side = None if own is None else yes_no_labels({0: own.text})[0]
        rows.append(
            {
                **item,
                "reply": None if own is None else own.text,
                "confidence": None if own is None else own.confidence,
                "side": None if side is None else ("yes" if side else "no"),
                "seconds": round(time.perf_counter() - t, 2),
            }
        )
        print(f"{item['id']}: {rows[-1]['side']} ({rows[-1]['confidence']}) right {item['answer']}", file=sys.stderr)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| confidence bar | right | wrong | abstains |", "|---|---|---|---|"]
    for bar in BARS:
        decided = [r for r in rows if r["side"] is not None and (r["confidence"] or 0.0) >= bar]
        right = sum(r["side"] == r["answer"] for r in decided)
        lines.append(f"| {bar:g} | {right} | {len(decided) - right} | {len(rows) - len(decided)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.arbitration_yesno", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("questions", type=Path)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/arbitration_yesno.json"))
    parser.add_argument("--server-url", default=None, help="a running OpenAI-compatible server (default: embedded LM)")
    args = parser.parse_args(argv)
    items = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    from benchmarks.hostile_make import _open

    with _open(args.server_url) as lm:
        rows = measure(lm.client, items)
        model = lm.model
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"model": model, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
