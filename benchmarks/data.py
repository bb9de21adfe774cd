"""What every benchmark reads: rounds files, embedding vectors cached by content, settings overrides.

``read_rounds`` parses a rounds file (``.jsonl`` or ``.jsonl.gz``, the project's round format);
``VectorCache`` keeps MiniLM vectors by the SHA-256 of their text under an output directory, so a variant
re-evaluates without the model, and ``CachedEmbedder`` is the product's ``Embedder`` over it;
``SentenceCache`` does the same for the sentences of the lab's sentence coverage; ``overrides`` applies
``section.field=value`` pairs to settings. Nothing here imports another benchmark module.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.lab import LabConfig
from consensus.embedder import Embeddings
from consensus.text import visible as embedded_text
from consensus.types import Round
from validator.round_input import parse_round
from validator.settings import Settings, load_settings, with_changes

__all__ = [
    "CachedEmbedder",
    "SentenceCache",
    "VectorCache",
    "embedded_text",
    "load_embedder",
    "overrides",
    "read_rounds",
    "read_settings",
    "settings_arguments",
]


def read_rounds(path: Path) -> list[Round]:
    opener = gzip.open if path.suffix == ".gz" else open
    rounds = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                rounds.append(parse_round(json.loads(line), f"{path}:{number}"))
    return rounds


def load_embedder(settings: Settings):
    from embedding.loader import load_embedder

    return load_embedder(
        settings.embedding.runtime, threads=settings.embedding.threads, long_texts=settings.embedding.policy()
    )


class VectorCache:
    """Embedding vectors by content hash, in one ``.npz`` per (embedder, policy) under ``directory``."""

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.settings = settings
        self.embedder = None
        policy = json.dumps(dataclasses.asdict(settings.embedding), sort_keys=True, default=str)
        self.tag = hashlib.sha256(policy.encode()).hexdigest()[:12]
        self.path = directory / f"vectors-{self.tag}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                self.vectors = {k: data[k] for k in data.files}

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if self.key(t) not in self.vectors})
        if missing:
            if self.embedder is None:
                self.embedder = load_embedder(self.settings)
            for start in range(0, len(missing), 256):
                chunk = missing[start : start + 256]
                emb = self.embedder.embed(chunk)
                for t, v in zip(chunk, emb.vectors):
                    self.vectors[self.key(t)] = np.asarray(v, dtype=np.float32)
                print(f"  embedded {min(start + 256, len(missing))}/{len(missing)}", file=sys.stderr, flush=True)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, **self.vectors)
            tmp.replace(self.path)
        return np.stack([self.vectors[self.key(t)] for t in texts])


class SentenceCache:
    """Sentence vectors by content hash: one ``.npz`` (keys, matrix) per (embedder, policy) under ``directory``."""

    def __init__(self, vectors: VectorCache) -> None:
        self.parent = vectors
        self.path = vectors.path.with_name(f"sentences-{vectors.tag}.npz")
        self.rows: dict[str, int] = {}
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        if self.path.exists():
            with np.load(self.path) as data:
                self.matrix = data["vectors"]
                self.rows = {str(k): i for i, k in enumerate(data["keys"])}

    def fill(self, texts: Sequence[str]) -> None:
        """Embed every sentence of ``texts`` not cached yet (one pass, in chunks), then save."""
        from benchmarks.lab.sentences import split_sentences

        missing = sorted({s for t in texts for s in split_sentences(t) if VectorCache.key(s) not in self.rows})
        if not missing:
            return
        if self.parent.embedder is None:
            self.parent.embedder = load_embedder(self.parent.settings)
        fresh = []
        for start in range(0, len(missing), 1024):
            fresh.append(self.parent.embedder.embed(missing[start : start + 1024]).vectors.astype(np.float32))
            print(f"  sentences {min(start + 1024, len(missing))}/{len(missing)}", file=sys.stderr, flush=True)
        keys = [k for k, _ in sorted(self.rows.items(), key=lambda kv: kv[1])] + [VectorCache.key(s) for s in missing]
        self.matrix = np.concatenate([self.matrix.reshape(-1, fresh[0].shape[1]), *fresh])
        self.rows = {k: i for i, k in enumerate(keys)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=self.matrix)
        tmp.replace(self.path)

    def get(self, texts: Sequence[str]) -> tuple[np.ndarray, ...]:
        from benchmarks.lab.sentences import split_sentences

        dim = self.matrix.shape[1]
        return tuple(
            self.matrix[[self.rows[VectorCache.key(s)] for s in split_sentences(t)]].reshape(-1, dim) for t in texts
        )


class CachedEmbedder:
    """An ``Embedder`` over ``VectorCache``: each distinct text goes through MiniLM once, ever.

    ``windows``/``tokens``/``embedded`` are zeros: ``run_round`` only stores them in records, which
    the bench does not build.
    """

    name = "minilm (benchmarks.data.VectorCache)"
    checksum = "cached"

    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache

    def embed(self, texts: Sequence[str]) -> Embeddings:
        texts = list(texts)
        vectors = self.cache.get(texts) if texts else np.zeros((0, 384), np.float32)
        zeros = np.zeros(len(texts), np.int32)
        return Embeddings(vectors.astype(np.float32), zeros, zeros, zeros)


def overrides(settings: Settings, pairs: list[str]) -> Settings:
    """Apply ``section.field=value`` overrides (values parsed as JSON, else kept as text), per section at once."""
    by_section: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        section, _, name = key.partition(".")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        by_section.setdefault(section, {})[name] = value
    return with_changes(settings, by_section)


def settings_arguments(parser: argparse.ArgumentParser, example: str = "consensus.quality.quality_prose=0") -> None:
    """``--config``, ``--set`` and ``--lab`` on a benchmark's command line (``read_settings`` reads them)."""
    parser.add_argument("--config", type=Path, help="settings TOML ([consensus], [emissions], ...)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.FIELD=VALUE",
        help=f"override one setting (repeatable), e.g. --set {example}",
    )
    parser.add_argument(
        "--lab",
        action="append",
        default=[],
        metavar="RULE=VALUE",
        help="turn on a rule measured and not shipped (repeatable; benchmarks.lab), e.g. --lab quality_glossary=0.3",
    )


def read_settings(args: argparse.Namespace) -> tuple[Settings, LabConfig]:
    """The settings (``--config`` then ``--set``; no environment) and the lab's rules (``--lab``) of a command line."""
    settings = overrides(load_settings(args.config, env={}, dotenv_path=None), args.set)
    return settings, LabConfig.from_pairs(args.lab)
