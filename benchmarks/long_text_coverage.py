"""How well does each long-text representation approximate embedding every word piece?

For the benchmark's long texts (over 300 word pieces), embed them with the
``full`` policy (every piece) and with bounded alternatives, and report the
mean and minimum cosine between each alternative's vector and the full one.

    python -m benchmarks.long_text_coverage [--texts 60] [--seed 1]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    from benchmarks.round_eval import make_texts
    from consensus.embedder import LongTextPolicy
    from embedding.onnx_runtime import OnnxEmbedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    full = OnnxEmbedder(long_texts=LongTextPolicy(mode="full"))
    texts, _ = make_texts(256, seed=args.seed, copies=0.0)
    pieces = [len(e.ids) for e in full.tokenizer.encode_batch(texts, add_special_tokens=False)]
    long = [t for t, p in zip(texts, pieces) if p > 300][: args.texts]
    reference = full.embed(long).vectors
    median = int(np.median([p for p in pieces if p > 300][: args.texts]))
    print(f"{len(long)} texts over 300 word pieces (median {median})\n")
    print("| representation (word pieces per text) | mean cosine to full | min |\n|---|---|---|")

    def row(label: str, vectors: np.ndarray) -> None:
        cos = (vectors * reference).sum(axis=1)
        print(f"| {label} | {cos.mean():.3f} | {cos.min():.3f} |")

    windows = [
        [full.cls_id, *e.ids[:254], full.sep_id] for e in full.tokenizer.encode_batch(long, add_special_tokens=False)
    ]
    row("truncation at 254 (the reference)", full.embed_windows(windows))
    for window, budget in [(126, 256), (62, 256), (62, 192), (30, 256), (62, 384)]:
        emb = OnnxEmbedder(long_texts=LongTextPolicy(mode="sample", token_budget=budget, sample_window=window))
        m = budget // window
        row(f"sample, {m} windows of {window} ({m * window})", emb.embed(long).vectors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
