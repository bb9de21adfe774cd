"""benchmarks.evaluate.replay: the benchmarks' figures are the product's, through its own unit of work.

The vector cache is filled with the fake embedder's vectors (no model), then every round of
examples/rounds.jsonl goes through ``replay`` and through ``validator replay``'s own driver
(``validator.replaying.replay_run.replay_file``) into a memory store: every miner is paid the same.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from benchmarks.data import VectorCache, read_rounds
from benchmarks.evaluate import replay
from benchmarks.lab import LabConfig
from consensus.fake import FakeEmbedder
from storage import keys
from storage.memory import MemoryStore
from validator.records.evaluation_record import load_record
from validator.records.ledger_entries import entries_from_record
from validator.replaying.replay_run import replay_file
from validator.settings import load_settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rounds.jsonl"


class _Filled(FakeEmbedder):
    """The fake embedder, and the same vectors in the benchmark's cache: both drivers read one model."""

    def __init__(self, cache: VectorCache) -> None:
        super().__init__(dim=32)
        self.cache = cache

    def fill(self, texts: list[str]) -> None:
        vectors = super().embed(texts).vectors
        self.cache.vectors.update({VectorCache.key(t): v for t, v in zip(texts, vectors)})


def _setup(tmp_path: Path):
    settings = load_settings(None, env={}, dotenv_path=None)
    settings = dataclasses.replace(settings, output=dataclasses.replace(settings.output, heatmap=False))
    rounds = read_rounds(EXAMPLES)
    cache = VectorCache(tmp_path, settings)
    embedder = _Filled(cache)
    from validator.round.embed_ahead import round_texts

    embedder.fill(
        [t for r in rounds for t in round_texts(r)]
        + [r.prompt for r in rounds]
        + [r.reference for r in rounds if r.reference]
    )
    return settings, rounds, cache, embedder


def test_a_benchmark_pays_what_the_products_replay_pays(tmp_path):
    settings, rounds, cache, embedder = _setup(tmp_path)
    reps = replay(rounds, cache, settings)
    store = MemoryStore()
    replay_file(EXAMPLES, store, settings, embedder)
    assert len(reps) == len(rounds) > 10
    for rep in reps:
        product = load_record(store.get(keys.evaluation(rep.round.round_id)), rep.round.round_id)
        assert [e.emission for e in entries_from_record(product)] == list(rep.allocation.amounts)
        assert [r.score.composite for r in product.responses] == [r.score.composite for r in rep.record.responses]


def test_the_default_lab_changes_nothing(tmp_path):
    settings, rounds, cache, _ = _setup(tmp_path)
    plain = replay(rounds[:4], cache, settings)
    lab = replay(rounds[:4], cache, settings, LabConfig())
    assert [r.allocation.amounts for r in plain] == [r.allocation.amounts for r in lab]
