"""Builds examples/canaries/boolq.jsonl: known-answer prompts for ``validator daemon --canaries``.

Source: the BoolQ items already in examples/boolq/ (Clark et al. 2019, dev
split, CC BY-SA 3.0; examples/boolq/README.md says where they come from), so
nothing is downloaded. Usage::

    python scripts/make_canaries.py

Each item becomes one JSONL line in the prompt-file format
(``validator.round.prompt_source``): ``prompt`` is the question asked the way the
built-in yes/no prompts ask ("... Answer yes or no and explain briefly."),
``reference`` opens with the known "Yes." or "No." (the canary judge compares
the answer's own opening yes/no with it) followed by the passage's first
sentences as evidence for the embedding similarity and the LM judge. Items
are shuffled with a fixed seed, so the file is reproducible.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

SEED = 20261122
EVIDENCE_WORDS = 60
ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "examples" / "boolq" / "calibration.jsonl", ROOT / "examples" / "boolq" / "test.jsonl")
OUT = ROOT / "examples" / "canaries" / "boolq.jsonl"
SUFFIX = " Answer yes or no and explain briefly."


def evidence(passage: str, words: int = EVIDENCE_WORDS) -> str:
    """The passage's first sentences, up to about ``words`` words (at least one sentence)."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(passage.split()))
    out: list[str] = []
    for s in sentences:
        if out and len(" ".join(out + [s]).split()) > words:
            break
        out.append(s)
    return " ".join(out)


def canary(item: dict) -> dict:
    answer = "Yes." if item["answer"] else "No."
    return {
        "id": item["id"],
        "prompt": item["question"] + SUFFIX,
        "reference": f"{answer} {evidence(item['content'][0])}",
    }


def main() -> int:
    items = [json.loads(line) for src in SOURCES for line in src.read_text(encoding="utf-8").splitlines() if line]
    random.Random(SEED).shuffle(items)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(canary(i), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    yes = sum(1 for i in items if i["answer"])
    print(f"{OUT}: {len(items)} canaries ({yes} yes, {len(items) - yes} no)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
