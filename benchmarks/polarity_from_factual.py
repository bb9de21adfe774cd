"""Polarity read off the factual check's short answers, on the yes/no rounds of a rounds file (session 5).

    python -m benchmarks.polarity_from_factual

Per yes/no round of examples/rounds.jsonl with the short answers recorded in
benchmarks/results/factual_short.json: honest miners' total and least pay, and who leaves by polarity or
the factual stage, with the factual check alone and with polarity labels taken from the same short answers.
"""

from __future__ import annotations

import dataclasses
import json

from benchmarks.factual import _edge, _rounds
from consensus.factual_stage import support, yes_no_labels
from consensus.pipeline import evaluate
from consensus.signals import Signals
from consensus.types import Polarity
from embedding.loader import load_embedder
from emissions.allocate import allocate
from lm.gating import is_yes_no_question
from validator.settings import load_settings


def main() -> None:
    s = load_settings(None, dotenv_path=None)
    emb = load_embedder(s.embedding.runtime)
    data = json.load(open("benchmarks/results/factual_short.json"))
    planted = json.load(open("examples/rounds_planted.json"))
    marked = {(p["round_id"], p["miner"]) for p in planted}
    for rnd in _rounds("examples/rounds.jsonl"):
        if not is_yes_no_question(rnd.prompt) or rnd.round_id not in data:
            continue
        answers = {int(k): v for k, v in data[rnd.round_id]["answers"].items() if v}
        agree = {i: a for i, (a, _) in support(answers, rnd.prompt, yes_no=True).items()}
        said = yes_no_labels(answers)
        labels = {
            i: Polarity.UNCLEAR if y is None else Polarity.AFFIRMATIVE if y else Polarity.NEGATIVE
            for i, y in said.items()
        }
        leaning = {i: 10.0 if y else 0.0 for i, y in said.items() if y is not None}
        _, vectors, sim, ref_cos, prompt_cos = _edge(rnd, emb)
        base = Signals(reference_similarity=ref_cos, prompt_similarity=prompt_cos, factual_agreement=agree)
        honest = [i for i, r in enumerate(rnd.responses) if (rnd.round_id, r.miner) not in marked]
        out = {}
        for name, sig in (
            ("factual only", base),
            ("factual + polarity from it", dataclasses.replace(base, polarity=labels, polarity_leaning=leaning)),
        ):
            ev = evaluate(rnd, vectors, s.consensus, sig, sim=sim)
            amounts = allocate(rnd, ev, s.emissions).amounts
            left = {i: r.reason.value for i, r in enumerate(ev.results) if r.reason.value in ("polarity", "factual")}
            out[name] = (f"{sum(amounts[i] for i in honest):,}", f"{min(amounts[i] for i in honest):,}", left)
        print(rnd.round_id, out)


if __name__ == "__main__":
    main()
