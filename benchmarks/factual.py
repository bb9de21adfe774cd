"""Measure the LM factual-agreement check on a rounds file with planted wrong answers.

    HF_HUB_OFFLINE=1 python -m benchmarks.factual examples/rounds.jsonl examples/rounds_planted.json \
        --out runs/factual.json [--only-planted] [--analyse-only]

Measuring: for every round, the real embedder and an embeddings-only
evaluation (whom the LM checks: its dominant cluster), then the real LM
(SERVER_URL, else the embedded one) through ``lm.factual.check_factual``
(each member against its two most central fellow members). The agreements are
saved to ``--out`` after every round; a second run measures only the rounds
missing there (rounds with a planted wrong answer first).

Analysing: each measured round is evaluated again by the pure core with the
factual signal (``Signals.factual_agreement``; no polarity or judge) at a few
values of ``consensus.factual_min_agreement``, allocated, and the planted
wrong answer's amount compared with every answer that is not planted: the
target counts rounds where it earns strictly less than each of them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path


def _rounds(path: Path):
    from validator.rounds import read_rounds

    return [line.round for line in read_rounds(path) if getattr(line, "round", None) is not None]


def _edge(rnd, embedder):
    from consensus.similarity import cosine_matrix
    from validator.signals import edge_similarities, edge_vectors

    texts = [r.text if r.error is None else "" for r in rnd.responses]
    vectors = embedder.embed(texts).vectors
    ref_cos, prompt_cos = edge_similarities(vectors, edge_vectors(embedder, rnd.prompt, rnd.reference))
    return texts, vectors, cosine_matrix(vectors), ref_cos, prompt_cos


def _measure(rounds, out: Path, first: set[str], only_first: bool) -> dict:
    from consensus.pipeline import evaluate
    from consensus.signals import Signals
    from embedding.loader import load_embedder
    from lm.factual import check_factual
    from lm.gating import Budget
    from validator.lm_session import open_client
    from validator.settings import load_settings

    settings = load_settings(None, dotenv_path=None)
    config = settings.lm_config()
    embedder = load_embedder(settings.embedding.runtime)
    rounds = sorted(rounds, key=lambda r: r.round_id not in first)  # planted first: a cut-short run still counts
    data: dict = json.loads(out.read_text()) if out.is_file() else {}
    todo = [r for r in rounds if r.round_id not in data and (r.round_id in first or not only_first)]
    with open_client(config) as client:
        for rnd in todo:
            texts, vectors, sim, ref_cos, prompt_cos = _edge(rnd, embedder)
            plan = evaluate(rnd, vectors, settings.consensus,
                            Signals(reference_similarity=ref_cos, prompt_similarity=prompt_cos), sim=sim)
            t = time.perf_counter()
            checks = check_factual(client, rnd.prompt, texts, plan.members, sim, config, workers=1, budget=Budget(0))
            seconds = time.perf_counter() - t
            data[rnd.round_id] = {"members": list(plan.members), "seconds": seconds,
                                  "checks": {str(c.index): {"anchors": list(c.anchors), "agreement": c.agreement}
                                             for c in checks}}
            print(f"{rnd.round_id}: {len(checks)} members checked in {seconds:.1f} s", flush=True)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(data, indent=1))  # after every round: a long run can be resumed
    return data


def _analyse(rounds, data: dict, planted: list) -> None:
    from consensus.pipeline import evaluate
    from consensus.signals import Signals
    from embedding.loader import load_embedder
    from emissions.allocate import allocate
    from validator.settings import load_settings

    settings = load_settings(None, dotenv_path=None)
    embedder = load_embedder(settings.embedding.runtime)
    wrong = {p["round_id"]: p["miner"] for p in planted if p["kind"] == "wrong"}
    marked = {(p["round_id"], p["miner"]) for p in planted}
    for floor in (None, 0.3, 0.35, 0.4, 0.45, 0.5):
        hits, lines = 0, []
        for rnd in rounds:
            if rnd.round_id not in wrong or rnd.round_id not in data:
                continue
            texts, vectors, sim, ref_cos, prompt_cos = _edge(rnd, embedder)
            factual = {int(k): v["agreement"] for k, v in data[rnd.round_id]["checks"].items()
                       if v["agreement"] is not None}
            consensus = settings.consensus if floor is None else \
                dataclasses.replace(settings.consensus, factual_min_agreement=floor)
            signals = Signals(reference_similarity=ref_cos, prompt_similarity=prompt_cos,
                              factual_agreement=None if floor is None else factual)
            ev = evaluate(rnd, vectors, consensus, signals, sim=sim)
            amounts = allocate(rnd, ev, settings.emissions).amounts
            w = [i for i, r in enumerate(rnd.responses) if r.miner == wrong[rnd.round_id]][0]
            others = [amounts[i] for i, r in enumerate(rnd.responses) if (rnd.round_id, r.miner) not in marked]
            ok = amounts[w] < min(others)
            hits += ok
            lines.append(f"  {rnd.round_id}: wrong #{w} agreement {factual.get(w, float('nan')):.3f} "
                         f"({ev.results[w].reason.value}) paid {amounts[w]:,}; least-paid correct {min(others):,}; "
                         f"other agreements {sorted(round(v, 3) for k, v in factual.items() if k != w)}"
                         f"{'  <- less' if ok else ''}")
        label = "no factual signal" if floor is None else f"factual_min_agreement {floor}"
        print(f"{label}: the planted wrong answer earns less than every correct answer in {hits} of "
              f"{len(lines)} measured rounds")
        for line in lines:
            print(line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rounds", type=Path)
    ap.add_argument("planted", type=Path)
    ap.add_argument("--out", type=Path, default=Path("runs/factual.json"))
    ap.add_argument("--only-planted", action="store_true", help="measure only rounds with a planted wrong answer")
    ap.add_argument("--analyse-only", action="store_true", help="only analyse what --out holds")
    args = ap.parse_args(argv)
    planted = json.loads(args.planted.read_text())
    rounds = _rounds(args.rounds)
    if args.analyse_only:
        data = json.loads(args.out.read_text())
    else:
        data = _measure(rounds, args.out, {p["round_id"] for p in planted if p["kind"] == "wrong"},
                        args.only_planted)
    _analyse(rounds, data, planted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
