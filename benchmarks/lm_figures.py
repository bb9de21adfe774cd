"""Long answers' figures against the agreed ones (issue 38, item 2) on the development sets.

    python -m benchmarks.lm_figures [--validity ../shared/validity]          # the rule's suspects, no LM
    python -m benchmarks.lm_figures --lm [--validity ../shared/validity]     # the embedded LM reads each suspect

Without ``--lm``: each set's suspects (``consensus.figures.suspects`` over every answered response of each round:
the most the round's check can ask, since it reads the dominant cluster's members only), with the sentences. With
``--lm``: the embedded LM reads each suspect (``benchmarks.lm_grades.check_figures``), and both sets are replayed
(``benchmarks.evaluate.replay``, no other LM stage) with and without the confirmed contradictions as the rounds' LM
evidence: Spearman, its 95% interval and the split halves, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = {"dev": Path("rounds.jsonl.gz"), "wide": Path("wide") / "rounds.jsonl.gz"}


def census(validity: Path) -> dict[str, Any]:
    from benchmarks.data import read_rounds
    from consensus.figures import suspects
    from consensus.text import visible

    out: dict[str, Any] = {}
    for name, rel in SETS.items():
        rounds = read_rounds(validity / rel)
        found = []
        for r in rounds:
            texts = {i: visible(x.text) for i, x in enumerate(r.responses) if x.error is None and x.text}
            found += [(r, s) for s in suspects(texts, r.prompt)]
        out[name] = {"rounds": len(rounds), "answers": sum(len(r.responses) for r in rounds), "suspects": found}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lm_figures", description=__doc__.splitlines()[0])
    parser.add_argument("--validity", type=Path, default=Path("../shared/validity"))
    parser.add_argument("--out", type=Path, default=Path("out/validity"), help="the embedding vector cache")
    parser.add_argument("--lm", action="store_true", help="ask the embedded LM about each suspect")
    args = parser.parse_args(argv)
    if not (args.validity / SETS["dev"]).is_file():
        parser.error(f"{args.validity / SETS['dev']}: no development set there (--validity DIR)")
    found = census(args.validity)
    for name, row in found.items():
        print(f"{name}: {row['rounds']} rounds, {row['answers']} answers, {len(row['suspects'])} suspects")
        for r, s in row["suspects"]:
            print(f"  {r.round_id} {r.responses[s.index].miner}: {s.detail}\n    {s.sentence[:160]!r}")
    if not args.lm:
        return 0
    from benchmarks.data import VectorCache, read_rounds
    from benchmarks.evaluate import replay
    from benchmarks.lm_grades import _server, check_figures
    from benchmarks.validity_report import report
    from consensus.evidence import figure_contradictions as contradictions
    from lm.client import OpenAIChatClient
    from lm.round_budget import Budget
    from validator.settings import load_settings

    settings = load_settings(None, env={}, dotenv_path=None)
    verdicts: dict[str, dict[str, dict[int, str]]] = {name: {} for name in found}
    with _server(1) as server:
        client = OpenAIChatClient(server.endpoint, timeout_s=300)
        for name, row in found.items():
            for r in {id(r): r for r, _ in row["suspects"]}.values():
                texts = [x.text if x.error is None else "" for x in r.responses]
                t = time.perf_counter()
                checks = check_figures(
                    client, r.prompt, texts, [i for i, x in enumerate(texts) if x], workers=1, budget=Budget(0)
                )
                for c in checks:
                    print(
                        f"  {r.round_id} {r.responses[c.index].miner}: the LM filled the blank with {c.reply!r}: "
                        f"{ {True: 'confirmed', False: 'cleared', None: 'nothing decided'}[c.contradicts] } "
                        f"({time.perf_counter() - t:.1f} s)",
                        flush=True,
                    )
                if confirmed := contradictions(checks):
                    verdicts[name][r.round_id] = confirmed
    for name, rel in SETS.items():
        rounds = read_rounds(args.validity / rel)
        truth = json.loads((args.validity / rel).with_name("truth.json").read_text(encoding="utf-8"))
        cache = VectorCache(args.out, settings)
        for label, figures in (("without", None), ("with the LM's figure verdicts", verdicts[name])):
            rep = report(replay(rounds, cache, settings, figures=figures), truth)
            halves = " / ".join(f"{v:.4f}" for v in rep["split_half"].values())
            ci = ", ".join(f"{v:.4f}" for v in rep["ci95"])
            print(f"{name} {label}: {rep['spearman']:.4f} [{ci}] (split halves {halves})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
