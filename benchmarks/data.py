"""What every benchmark reads: rounds files, embedding vectors cached by content, settings overrides.

``read_rounds`` parses a rounds file (``.jsonl`` or ``.jsonl.gz``, the project's round format);
``VectorCache``, the lab's one embedding cache, keeps MiniLM vectors by the SHA-256 of their text under an
output directory (answers, prompts, the sentences of the lab's sentence coverage, the network's texts), so a
variant re-evaluates without the model, and ``CachedEmbedder`` is the product's ``Embedder`` over it;
``overrides`` applies ``section.field=value`` pairs to settings. Of the lab it imports only ``benchmarks.lab``.
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
from benchmarks.lab.sentences import split_sentences
from consensus.embedder import Embeddings
from consensus.text import visible as embedded_text
from consensus.types import Round
from validator.records.round_input import parse_round
from validator.settings import Settings, load_settings, with_changes

__all__ = [
    "CachedEmbedder",
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
    """The lab's one embedding cache: MiniLM vectors by the SHA-256 of their text, answers, prompts and sentences
    alike, in one ``.npz`` per embedding settings under ``directory`` (``vectors-<tag>.npz``).

    ``get`` embeds the texts it lacks in one pass and, with ``autosave`` (the default), writes the file at once;
    a long run (``benchmarks.network``, a tick at a time) passes ``autosave=False`` and calls ``save`` at its own
    checkpoints. ``adopt`` takes in the vectors of another cache file (another directory's, or one of the older
    layout: the network's ``vectors.npz``, the sentence cache's ``sentences-<tag>.npz``), so the lab need not
    embed them again.
    """

    def __init__(self, directory: Path, settings: Settings, *, autosave: bool = True) -> None:
        self.settings = settings
        self.embedder: Any = None
        self.autosave = autosave
        policy = json.dumps(dataclasses.asdict(settings.embedding), sort_keys=True, default=str)
        self.tag = hashlib.sha256(policy.encode()).hexdigest()[:12]
        self.path = directory / f"vectors-{self.tag}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        self.added = 0
        if self.path.exists():
            with np.load(self.path) as data:
                self.vectors = {k: data[k] for k in data.files}
        self.adopt(directory / f"sentences-{self.tag}.npz")  # the sentence cache's file, before it was this one

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def adopt(self, path: Path) -> int:
        """Take in the vectors of another cache file not held yet (this layout, or an older one's ``keys`` and
        ``vectors`` arrays); how many."""
        if not path.is_file() or path == self.path:
            return 0
        with np.load(path) as data:
            if {"keys", "vectors"} <= set(data.files):
                pairs = zip((str(k) for k in data["keys"]), data["vectors"])
            else:
                pairs = ((k, data[k]) for k in data.files)
            fresh = {k: v for k, v in pairs if k not in self.vectors}
        self.vectors.update({k: np.asarray(v, dtype=np.float32) for k, v in fresh.items()})
        self.added += len(fresh)
        return len(fresh)

    def get(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of ``texts`` (n, 384), the missing ones embedded first in one pass."""
        missing = sorted({t for t in texts if self.key(t) not in self.vectors})
        if missing:
            if self.embedder is None:
                self.embedder = load_embedder(self.settings)
            for start in range(0, len(missing), 256):
                chunk = missing[start : start + 256]
                emb = self.embedder.embed(chunk)
                for t, v in zip(chunk, emb.vectors):
                    self.vectors[self.key(t)] = np.asarray(v, dtype=np.float32)
                if len(missing) > 256:
                    print(f"  embedded {min(start + 256, len(missing))}/{len(missing)}", file=sys.stderr, flush=True)
            self.added += len(missing)
            if self.autosave:
                self.save()
        if not texts:
            return np.zeros((0, 384), np.float32)
        return np.stack([self.vectors[self.key(t)] for t in texts])

    def save(self) -> None:
        """Write the file (atomically) if anything was added since the last write."""
        if not self.added:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, **self.vectors)
        tmp.replace(self.path)
        self.added = 0

    def sentences(self, texts: Sequence[str]) -> tuple[np.ndarray, ...]:
        """Each text's sentence vectors (``benchmarks.lab.sentences.split_sentences``), from the same cache."""
        split = [split_sentences(t) for t in texts]
        vectors = self.get([s for parts in split for s in parts])
        out, at = [], 0
        for parts in split:
            out.append(vectors[at : at + len(parts)].reshape(-1, vectors.shape[1]))
            at += len(parts)
        return tuple(out)


class CachedEmbedder:
    """The product's ``Embedder`` over ``VectorCache``: each distinct text goes through MiniLM once, ever.

    ``windows``/``tokens``/``embedded`` are zeros: a round's record only stores them, and no number reads them.
    """

    name = "minilm (benchmarks.data.VectorCache)"
    checksum = "cached"

    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache

    def embed(self, texts: Sequence[str]) -> Embeddings:
        texts = list(texts)
        vectors = self.cache.get(texts)
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
