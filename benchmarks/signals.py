"""Each quality signal's own ranking of the models: which signal tracks quality on which set.

    python -m benchmarks.signals [--validity ../shared/validity] [--out out/validity]

For the development and the wide set, every signal is computed per answer with the pipeline's own
functions (consensus.score, consensus.text; the embedding vectors come from the benchmark's cache), averaged
per miner over the rounds, and ranked against the miners' quality (AlpacaEval 2 LC win rate): the Spearman
of each signal alone, then of the shipped composite and of the paid amounts (``benchmarks.validity``).
Signals, over every honest answer of the round as peers:

- ``alignment``: mean cosine to the other answers (the seed's agreement);
- ``words``: word count;
- ``coverage``: pooled idf coverage of the other answers' words (words two answers say, prompt's left out);
- ``coverage, length-controlled``: the same with a quarter of its length effect removed (the shipped 0.25);
- ``specificity``: share of content words that are not generic English and another answer says;
- ``quality part``: length-controlled coverage times specificity ** 0.5 (the shipped quality part).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.data import VectorCache, embedded_text, read_rounds
from benchmarks.evaluate import replay
from benchmarks.validity_report import spearman
from consensus.grading import specificity, with_specificity
from consensus.quality import coverage_matrix, length_controlled
from consensus.text import words
from validator.settings import load_settings

SIGNALS = ("alignment", "words", "coverage", "coverage, length-controlled", "specificity", "quality part")


def signal_means(rounds, truth, cache) -> dict[str, dict[str, float]]:
    quality = truth["lc_winrate"]
    sums: dict[str, dict[str, list[float]]] = {s: {} for s in SIGNALS}
    for r in rounds:
        xs = [x for x in r.responses if x.miner in quality and x.error is None and x.text.strip()]
        if len(xs) < 3:
            continue
        vectors = cache.get([embedded_text(x.text) for x in xs])
        sim = vectors @ vectors.T
        n = len(xs)
        seqs = [words(x.text) for x in xs]
        sets = [frozenset(s) for s in seqs]
        prompt = frozenset(words(r.prompt))
        share, mass = coverage_matrix(sets, np.arange(n), prompt_words=prompt, with_mass=True, min_df=2)
        cov = {}
        for i in range(n):
            others = [j for j in range(n) if j != i and mass[j] > 0]
            cov[i] = float(np.average(share[i, others], weights=mass[others])) if others else 0.0
        counts = np.array([len(s) for s in seqs])
        controlled = length_controlled(cov, counts, np.arange(n), 0.25)
        spec = specificity(dict(enumerate(sets)), prompt)
        part = with_specificity(controlled, spec, np.arange(n), 0.5)
        values = {
            "alignment": {i: float((sim[i].sum() - sim[i, i]) / (n - 1)) for i in range(n)},
            "words": {i: float(counts[i]) for i in range(n)},
            "coverage": cov,
            "coverage, length-controlled": controlled,
            "specificity": spec,
            "quality part": part,
        }
        for name, per in values.items():
            for i, v in per.items():
                sums[name].setdefault(xs[i].miner, []).append(v)
    return {name: {m: float(np.mean(v)) for m, v in per.items()} for name, per in sums.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.signals", description=__doc__.split("\n\n")[0])
    parser.add_argument("--validity", type=Path, default=Path("../shared/validity"))
    parser.add_argument("--out", type=Path, default=Path("out/validity"), help="the benchmark's vector cache")
    args = parser.parse_args(argv)
    settings = load_settings(None, env={}, dotenv_path=None)
    rows = {}
    for name, folder in (("dev", args.validity), ("wide", args.validity / "wide")):
        truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
        rounds = read_rounds(folder / "rounds.jsonl.gz")
        cache = VectorCache(args.out, settings)
        means = signal_means(rounds, truth, cache)
        honest = sorted(truth["lc_winrate"])
        q = [truth["lc_winrate"][m] for m in honest]
        rows[name] = {s: spearman([means[s].get(m, 0.0) for m in honest], q) for s in SIGNALS}
        reps = replay(rounds, cache, settings)
        composite = {m: [] for m in honest}
        paid = {m: 0.0 for m in honest}
        for rep in reps:
            for res, amount in zip(rep.evaluation.results, rep.allocation.amounts):
                if res.miner in composite:
                    composite[res.miner].append(res.score.composite)
                    paid[res.miner] += amount
        rows[name]["composite (shipped)"] = spearman([np.mean(composite[m]) for m in honest], q)
        rows[name]["paid (shipped)"] = spearman([paid[m] for m in honest], q)
    print("| signal | development | wide |\n|---|---|---|")
    for s in rows["dev"]:
        print(f"| {s} | {rows['dev'][s]:.3f} | {rows['wide'][s]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
