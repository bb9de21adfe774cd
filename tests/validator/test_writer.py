"""A round's stored artefacts: records through the typed record, embeddings reused only when they fit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from consensus.fake import FakeEmbedder
from storage import MemoryStore, keys
from storage.codec import dumps
from storage.keys import Target
from tests.validator.records import make_record
from validator.records.evaluation_record import RecordError
from validator.records.reader import RoundReader
from validator.records.writer import encoded_embeddings

TEXTS = ["Yes, lists are mutable.", "Lists can change in place.", ""]


@pytest.fixture
def rounds_file(tmp_path):
    """A rounds file of one round, "r-1", of the three ``TEXTS``."""
    responses = [{"miner": f"m{i}", "text": t, "latency_s": 1.0} for i, t in enumerate(TEXTS)]
    path = tmp_path / "rounds.jsonl"
    path.write_text(json.dumps({"round_id": "r-1", "prompt": "Are lists mutable?", "responses": responses}) + "\n")
    return path


def test_a_record_goes_in_and_comes_back():
    store = MemoryStore()
    record = make_record("r-1", [("a", True, 7)], status="ok", sequence=1)
    store.put(keys.evaluation("r-1"), dumps(record.to_json()))
    assert RoundReader(store).record("r-1") == record
    store.put(keys.evaluation("r-2"), b'{"schema": "consensus-validator/evaluation/1"}')
    with pytest.raises(RecordError, match="rounds/r-2/evaluation.json: field 'round_id': missing"):
        RoundReader(store).record("r-2")


def test_stored_embeddings_are_reused_only_for_the_same_model_and_size():
    store, fake = MemoryStore(), FakeEmbedder()
    assert RoundReader(store).embeddings("r", fake, 3) is None  # nothing stored
    emb = fake.embed(TEXTS)
    store.put(keys.embeddings("r"), encoded_embeddings(emb, fake))
    again = RoundReader(store).embeddings("r", fake, 3)
    assert again is not None and np.array_equal(again.vectors, emb.vectors)
    assert np.array_equal(again.tokens, emb.tokens) and np.array_equal(again.windows, emb.windows)
    assert RoundReader(store).embeddings("r", FakeEmbedder(seed=1), 3) is None  # another model
    assert RoundReader(store).embeddings("r", fake, 4) is None  # another round size
    store.put(keys.embeddings("r"), b"garbage")
    assert RoundReader(store).embeddings("r", fake, 3) is None  # unreadable: embed again


def test_a_file_replay_stores_embeddings_beside_each_record(tmp_path, embedder, rounds_file):
    from storage import LocalStore
    from storage.embeddings import decode_embeddings
    from validator.replaying.replay_run import replay_file
    from validator.settings import load_settings

    store = LocalStore(tmp_path / "out")
    summary = replay_file(rounds_file, store, load_settings(None, env={}, dotenv_path=None), embedder)
    assert summary.evaluated == ["r-1"]
    stored = decode_embeddings(store.get(keys.embeddings("r-1")))
    assert stored.model_checksum == embedder.checksum and stored.vectors.shape[0] == 3
    assert RoundReader(store).record("r-1").embedding.checksum_sha256 == embedder.checksum


def test_a_store_replay_keeps_its_own_embeddings_only_when_it_could_not_reuse_the_rounds(embedder, rounds_file):
    from consensus.fake import FakeEmbedder
    from storage.embeddings import decode_embeddings
    from validator.replaying.replay_run import replay_file, replay_store
    from validator.settings import load_settings

    settings = load_settings(None, env={}, dotenv_path=None)
    store = MemoryStore()
    replay_file(rounds_file, store, settings, embedder)
    same = replay_store(store, settings, embedder, replay_id="same")
    assert same.diffs[0].embeddings_reused and not store.exists(keys.replay_embeddings("r-1", "same"))
    other = FakeEmbedder(seed=7)
    moved = replay_store(store, settings, other, replay_id="other")
    assert not moved.diffs[0].embeddings_reused
    kept = decode_embeddings(store.get(keys.replay_embeddings("r-1", "other")))
    assert kept.model_checksum == other.checksum != embedder.checksum
    assert RoundReader(store, Target.replay("other")).record("r-1").replay.embeddings_reused is False


class Recording(MemoryStore):
    """A memory store that keeps the order of its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def put(self, key, data, content_type="application/octet-stream"):
        self.order.append(key)
        super().put(key, data, content_type)


def test_the_writer_writes_input_heatmap_embeddings_then_the_record_and_stamps_the_markers(embedder):
    from consensus.types import InputMarker, Response, Round
    from storage.keys import ORIGINAL
    from validator.records.writer import RoundWriter, WriteConflict
    from validator.round.evaluate import evaluate_stored
    from validator.settings import load_settings

    settings = load_settings(None, env={"VALIDATOR_OUTPUT__HEATMAP": "false"}, dotenv_path=None)
    answers = tuple(Response(f"m{i}", t or "yes", 1.0) for i, t in enumerate(TEXTS))
    stored = Round("r-1", "Are lists mutable?", answers, daemon=InputMarker(sequence=7, started_at="t7"))
    evaluated, outcome = evaluate_stored(stored, settings, embedder)
    store = Recording()
    writer = RoundWriter(store, embedder, ORIGINAL)
    writer.write_input(stored)
    record = writer.write(stored, evaluated, outcome)
    assert store.order == [keys.round_input("r-1"), keys.embeddings("r-1"), keys.evaluation("r-1")]
    assert record.daemon is not None and record.daemon.sequence == 7 and record.replay is None
    replayed = RoundWriter(store, embedder, Target.replay("x")).write(stored, evaluated, outcome)
    assert replayed.replay is not None and replayed.daemon is None and replayed.replay.of == keys.evaluation("r-1")
    assert store.order[3:] == [keys.replay_embeddings("r-1", "x"), keys.replay_evaluation("r-1", "x")]
    RoundWriter(store, embedder, Target.replay("x")).write(
        stored, evaluated, outcome
    )  # the same bytes again: nothing written
    assert len(store.order) == 5
    with pytest.raises(WriteConflict):  # other bytes under a replay's key: never overwritten
        RoundWriter(store, embedder, Target.replay("x")).write_record(record)
    with pytest.raises(ValueError, match="never writes a round's input"):
        RoundWriter(store, embedder, Target.replay("x")).write_input(stored)
