"""``validator prepare``: build and cache what the first run would otherwise build.

That is the ONNX export and, for the OpenVINO runtime, its compiled model. They go under the ``paths.cache_dir`` setting (``VALIDATOR_CACHE_DIR``,
default ``~/.cache/consensus-validator``), where the daemon, round and replay
commands look for it; ``embedding.export`` does the work.
"""

from __future__ import annotations

import argparse
import time

from consensus.errors import ConfigError, EmbeddingError
from embedding.export import onnx_cache_path
from validator.cli.common import add_command, add_config_arg, fail, load
from validator.terminal import Progress

ABOUT = """\
export the embedding model to ONNX once (cached) and check it loads

Exports all-MiniLM-L6-v2 to a fused fp32 ONNX model under the cache directory (the paths.cache_dir setting:
VALIDATOR_CACHE_DIR, default ~/.cache/consensus-validator), keyed by the weights' sha256 and the ONNX Runtime
version, compiles it for the configured runtime (embedding.runtime) and embeds one sentence.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "prepare", ABOUT)
    add_config_arg(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # lazy: looked up at each call, tests replace embedding.loader.load_embedder
    from embedding.loader import load_embedder

    start = time.perf_counter()
    try:
        settings, _env = load(args)
    except (ConfigError, ValueError) as exc:
        return fail("prepare", f"configuration error: {exc}")
    cache = settings.paths.cache

    try:
        with Progress() as progress:  # a first export and compile take minutes: never silent
            progress.later("preparing the embedding model (ONNX export and compile; cached after the first run)")
            emb = load_embedder(settings.embedding.runtime, threads=settings.embedding.threads, cache_dir=cache)
            emb.embed(["ready"])  # exports (and compiles) on first use
    except EmbeddingError as exc:
        return fail("prepare", exc)
    print(
        f"embedding model ready ({emb.runtime}): {onnx_cache_path(emb.checksum, cache)} "
        f"(sha256 {emb.checksum[:12]}..., {time.perf_counter() - start:.1f} s)"
    )
    return 0
