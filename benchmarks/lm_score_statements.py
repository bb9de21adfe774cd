"""Does LM_SCORE's yes/no mode separate true from false statements? Prompt variants side by side (issue 36).

    python -m benchmarks.lm_score_statements [--data examples/statements/statements.jsonl]

Each labeled item (``{"content": [...], "question": ..., "answer": true|false}``) is asked in every prompt
variant, one call each at temperature 0, and the raw log-odds ``z = log P(yes) - log P(no)`` of the first
answer token is kept (no calibration: it is monotone, so it changes no ranking). Prints, per variant, the
AUROC of z against the labels, the accuracy of z > 0, and the mean z of the true and of the false items.
Starts an embedded LM of its own (one slot, not advertised: nothing else queues on it), or asks SERVER_URL.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

Build = Callable[..., list[dict[str, str]]]


def _plain(content: Sequence[str], question: str) -> list[dict[str, str]]:
    from lm.yesno import yesno_prompt

    return [{"role": "user", "content": yesno_prompt(content, question)}]


def _question_first(content: Sequence[str], question: str) -> list[dict[str, str]]:
    text = "\n".join(content)
    return [{"role": "user", "content": f"{question}\n\n{text}\n\nAnswer with yes or no."}]


def _fact_check(content: Sequence[str], question: str) -> list[dict[str, str]]:
    text = "\n".join(content)
    system = "You are a careful fact checker. Answer yes only if it is correct; answer no if it is wrong."
    user = f"Statement: {text}\n\nQuestion: {question}\nAnswer with yes or no."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _is_it_true(content: Sequence[str], question: str) -> list[dict[str, str]]:
    text = " ".join(content).strip().rstrip(".")
    return [{"role": "user", "content": f"Is it true that {text[:1].lower() + text[1:]}? Answer with yes or no."}]


def _with_reference(content: Sequence[str], question: str, reference: str = "") -> list[dict[str, str]]:
    """What ``validator lm score --reference`` asks: the shipped prompt, the reference as a first part."""
    from validator.cli.lm import with_reference

    parts, asked = with_reference(content, question, reference)
    return _plain(parts, asked)


VARIANTS: dict[str, Build] = {
    "plain (shipped)": _plain,
    "question first": _question_first,
    "fact checker": _fact_check,
    "is it true that": _is_it_true,
}
# with the item's reference (a correct statement on the same subject): `validator lm score --reference`
REFERENCED = {"with reference": _with_reference}


def log_odds(client, messages) -> float | None:
    from lm.lm_score import _answer_position
    from lm.yesno import NotYesNo, yes_no_probabilities

    completion = client.complete(messages, max_tokens=3, temperature=0.0, top_logprobs=20)
    try:
        return yes_no_probabilities(_answer_position(completion)[1]).log_odds
    except NotYesNo:
        return None


def main(argv: list[str] | None = None) -> int:
    import contextlib

    from lm.client import OpenAIChatClient
    from lm.embedded import LocalServer
    from lm.score_eval import auroc
    from validator.settings import load_settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="examples/statements/statements.jsonl")
    parser.add_argument("--variants", default=None, help="comma-separated names (default: all)")
    args = parser.parse_args(argv)
    variants = {**VARIANTS, **REFERENCED}
    if args.variants:
        variants = {k: v for k, v in variants.items() if k in args.variants.split(",")}
    items = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    labels = [bool(item["answer"]) for item in items]
    config = load_settings().lm_config()
    rows = []
    with contextlib.ExitStack() as stack:
        endpoint = config.endpoint
        if endpoint.local:
            endpoint = stack.enter_context(LocalServer.for_config(config)).endpoint
        client = OpenAIChatClient(endpoint, timeout_s=900)
        for name, build in variants.items():
            extra = [(item["reference"],) if name in REFERENCED else () for item in items]
            zs = [log_odds(client, build(item["content"], item["question"], *x)) for item, x in zip(items, extra)]
            z = [0.0 if v is None else v for v in zs]
            true = [v for v, y in zip(z, labels, strict=True) if y]
            false = [v for v, y in zip(z, labels, strict=True) if not y]
            accuracy = sum((v > 0) == y for v, y in zip(z, labels, strict=True)) / len(items)
            row = (name, auroc(z, labels), accuracy, statistics.mean(true), statistics.mean(false), zs.count(None))
            rows.append(row)
            print(
                f"{name:<18} AUROC {row[1]:.3f}  accuracy {row[2]:.3f}  mean z true {row[3]:+.2f} "
                f"false {row[4]:+.2f}  no yes/no {row[5]}",
                flush=True,
            )
            for item, v in zip(items, zs, strict=True):
                print(
                    f"    {'T' if item['answer'] else 'F'} {v if v is None else round(v, 2)!s:>6}  {item['content'][0]}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
