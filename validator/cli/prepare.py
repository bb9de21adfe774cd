"""``validator prepare``: build and cache what the first run would otherwise build (the ONNX export)."""

from __future__ import annotations

import argparse
import sys
import time


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("prepare", help="export the embedding model to ONNX once (cached) and check it loads",
                       description="Exports all-MiniLM-L6-v2 to a fused fp32 ONNX model under the user's cache "
                                   "directory (VALIDATOR_CACHE_DIR or ~/.cache/consensus-validator), keyed by the "
                                   "weights' sha256 and the ONNX Runtime version, and embeds one sentence.")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from consensus.embed import EmbeddingError, OnnxEmbedder, onnx_cache_path

    start = time.perf_counter()
    try:
        emb = OnnxEmbedder()
        emb.embed(["ready"])
    except EmbeddingError as exc:
        print(f"validator prepare: {exc}", file=sys.stderr)
        return 2
    print(f"embedding model ready: {onnx_cache_path(emb.checksum)} "
          f"(sha256 {emb.checksum[:12]}..., {time.perf_counter() - start:.1f} s)")
    return 0
