"""How often is the LM's own answer right on facts and myths? The authority its arbitration earns (issue 38).

    nice -n 19 python -m benchmarks.lm_authority ../shared/truthfulqa/questions.jsonl \\
        --out benchmarks/results/lm_authority.jsonl [--limit N] [--server-url URL]

Each TruthfulQA question (409 of them, development half) is asked as a round's prompt the way the arbitration
asks it (``lm.arbitrate.own_answer``: greedy, at most eight words, the confidence of its deciding tokens). Its
reply is then judged against the question's listed answers with the rule the round uses to compare short answers
(``consensus.fact_match.same_answer``): *right* when it states a listed correct answer and no listed falsehood, *wrong*
when it states a falsehood and no correct answer, *unclear* otherwise; on a yes/no question (``is_yes_no_question``)
its yes or no against the best answer's. Replies are appended to ``--out`` one JSON line each, so a stopped run
resumes where it stopped. Prints, per confidence bar and per kind (yes/no, one short answer as the arbitration
asks it, other), how many the LM decided right and wrong: its precision where it would act, which is what
``consensus.factual_stage``'s authority rule (``lm_overrule_accuracy``) compares with its bar.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

BARS = (0.0, 0.8, 0.9, 0.95)


def judge(question: str, reply: str, item: dict[str, Any]) -> str:
    """'right', 'wrong' or 'unclear': the LM's reply against the listed correct and incorrect answers."""
    from consensus.fact_match import facts_of, same_answer, yes_no_labels
    from lm.round_budget import is_yes_no_question

    if is_yes_no_question(question):
        own, best = yes_no_labels({0: reply, 1: item["best_answer"]}).values()
        if own is None or best is None:
            return "unclear"
        return "right" if own == best else "wrong"
    said = facts_of(reply, question)
    if not (said.numbers or said.words):
        return "unclear"
    right = any(same_answer(said, facts_of(a, question)) for a in item["correct_answers"])
    wrong = any(same_answer(said, facts_of(a, question)) for a in item["incorrect_answers"])
    if right == wrong:
        return "unclear"
    return "right" if right else "wrong"


def kind(question: str) -> str:
    from lm.round_budget import asks_for_one_answer, is_yes_no_question

    if is_yes_no_question(question):
        return "yes/no"
    return "one answer" if asks_for_one_answer(question) else "other"


def measure(client: Any, items: list[dict[str, Any]], out: Path) -> None:
    from lm.arbitrate import own_answer

    done = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()} if out.exists() else set()
    with out.open("a", encoding="utf-8") as fh:
        for item in items:
            if item["id"] in done:
                continue
            t = time.perf_counter()
            own = own_answer(client, item["question"])
            row = {
                "id": item["id"],
                "category": item["category"],
                "type": item["type"],
                "kind": kind(item["question"]),
                "reply": None if own is None else own.text,
                "confidence": None if own is None else own.confidence,
                "verdict": "unclear" if own is None else judge(item["question"], own.text, item),
                "seconds": round(time.perf_counter() - t, 2),
            }
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            print(f"{row['id']}: {row['verdict']} ({row['confidence']}) {row['reply']!r}", file=sys.stderr)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| kind | confidence bar | right | wrong | unclear or below the bar | precision |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("all", "yes/no", "one answer", "other"):
        subset = [r for r in rows if name == "all" or r["kind"] == name]
        for bar in BARS:
            decided = [r for r in subset if r["verdict"] != "unclear" and (r["confidence"] or 0.0) >= bar]
            right = sum(r["verdict"] == "right" for r in decided)
            share = f"{right / len(decided):.2f}" if decided else "-"
            lines.append(
                f"| {name} ({len(subset)}) | {bar:g} | {right} | {len(decided) - right} | "
                f"{len(subset) - len(decided)} | {share} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lm_authority", description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/lm_authority.jsonl"))
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--server-url", default=None, help="a running OpenAI-compatible server (default: embedded LM)")
    parser.add_argument("--table", action="store_true", help="print the table of --out without asking the LM")
    args = parser.parse_args(argv)
    if not args.questions.exists():
        print(f"{args.questions}: not found (the data lies beside the checkout: ../shared/truthfulqa)", file=sys.stderr)
        return 2
    items = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = items[: args.limit] if args.limit else items
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not args.table:
        from benchmarks.hostile_make import _open

        with _open(args.server_url) as lm:
            measure(lm.client, items, args.out)
    wanted = {item["id"] for item in items}
    rows = [json.loads(line) for line in args.out.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(table([r for r in rows if r["id"] in wanted]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
