"""Replay's overlap: the next round is embedded ahead, results come back in order and unchanged."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from consensus.fake import FakeEmbedder
from consensus.types import Response, Round
from validator.round.embed_ahead import embed_ahead, round_texts


class Recording(FakeEmbedder):
    """A fake embedder that records each call's texts and thread, and is slow enough to overlap."""

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__()
        self.calls: list[tuple[list[str], str]] = []
        self.fail_on = fail_on

    def embed(self, texts):
        self.calls.append((list(texts), threading.current_thread().name))
        time.sleep(0.01)
        if self.fail_on is not None and self.fail_on in texts:
            raise RuntimeError("model failed")
        return super().embed(texts)


ITEMS = [["a b", "c"], None, ["d"], ["e f", "g", "h"]]


class TokenisingAhead(Recording):
    """A recording embedder that can tokenise ahead: logs when each item is tokenised and embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, tuple[str, ...], str]] = []
        self.tokenised: dict[tuple[str, ...], threading.Event] = {}
        self.lock = threading.Lock()

    def _event(self, texts) -> threading.Event:
        with self.lock:
            return self.tokenised.setdefault(tuple(texts), threading.Event())

    def tokenise_ahead(self, texts):
        with self.lock:
            self.log.append(("tokenise", tuple(texts), threading.current_thread().name))
        self._event(texts).set()

    def open(self):
        with self.lock:
            self.log.append(("open", (), threading.current_thread().name))

    def embed(self, texts):
        with self.lock:
            self.log.append(("embed", tuple(texts), threading.current_thread().name))
        if tuple(texts) == ("a",):  # the first item's model work lasts until the next item is tokenised
            self._event(["b", "c"]).wait(timeout=10)
        out = super().embed(texts)
        with self.lock:
            self.log.append(("embedded", tuple(texts), threading.current_thread().name))
        return out


def test_the_next_item_is_tokenised_on_its_own_thread_while_this_one_is_embedded():
    emb = TokenisingAhead()
    items = [["a"], ["b", "c"], None, ["d"]]
    got = [(item, embedded()) for item, embedded in embed_ahead(items, lambda x: x, emb)]
    assert [item for item, _ in got] == items
    kinds = [(kind, texts) for kind, texts, _ in emb.log]
    for texts in (("a",), ("b", "c"), ("d",)):
        assert kinds.count(("tokenise", texts)) == 1 and kinds.count(("embed", texts)) == 1
        assert kinds.index(("tokenise", texts)) < kinds.index(("embed", texts))  # tokens first, then the model
    assert {name for kind, _, name in emb.log if kind == "tokenise"} == {"tokenise-ahead_0"}
    assert all(name.startswith("embed-ahead") for kind, _, name in emb.log if kind != "tokenise")
    # the model is opened on the embedding thread before the first item's tokens are awaited
    assert kinds.index(("open", ())) < kinds.index(("embed", ("a",)))
    assert emb.log[kinds.index(("open", ()))][2].startswith("embed-ahead")
    # the second item was tokenised while the first was in the model: its tokens were ready when it ended
    assert kinds.index(("tokenise", ("b", "c"))) < kinds.index(("embedded", ("a",)))


def test_yields_in_order_with_the_embeddings_of_each_item():
    emb = Recording()
    got = [(item, embedded()) for item, embedded in embed_ahead(ITEMS, lambda x: x, emb)]
    assert [item for item, _ in got] == ITEMS
    assert got[1][1] is None
    reference = FakeEmbedder()
    for item, e in got:
        if item is not None:
            np.testing.assert_array_equal(e.vectors, reference.embed(item).vectors)
    assert [texts for texts, _ in emb.calls] == [x for x in ITEMS if x is not None]  # one call per item
    assert all(name.startswith("embed-ahead") for _, name in emb.calls)


def test_the_next_item_is_embedded_while_the_current_one_is_used():
    emb = Recording()
    for k, (_item, embedded) in enumerate(embed_ahead([["x"], ["y"], ["z"]], lambda x: x, emb, depth=1)):
        embedded()
        time.sleep(0.05)  # the caller's work on item k
        assert len(emb.calls) == min(k + 2, 3)  # item k+1 was handed over before item k was yielded


def test_an_error_belongs_to_its_item_only():
    emb = Recording(fail_on="boom")
    results = []
    for _item, embedded in embed_ahead([["ok"], ["boom"], ["fine"]], lambda x: x, emb):
        try:
            results.append(embedded().vectors.shape[0])
        except RuntimeError as exc:
            results.append(str(exc))
    assert results == [1, "model failed", 1]


def test_stopping_early_leaves_no_thread_behind():
    emb = Recording()
    gen = embed_ahead([["a"], ["b"], ["c"], ["d"]], lambda x: x, emb)
    next(gen)
    gen.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("embed-ahead")]
    assert len(emb.calls) <= 2


def test_depth_is_checked_and_round_texts_blank_failed_answers():
    with pytest.raises(ValueError, match="depth"):
        next(embed_ahead([["a"]], lambda x: x, FakeEmbedder(), depth=0))
    round_ = Round(
        round_id="r",
        prompt="p",
        responses=(
            Response(miner="m1", text="an answer", latency_s=1.0),
            Response(miner="m2", text="partial", latency_s=1.0, error="timeout"),
        ),
    )
    assert round_texts(round_) == ["an answer", ""]


def test_replay_file_stores_what_the_rounds_give_one_at_a_time(tmp_path):
    # heatmaps off: the fast suite does not render; the order and every stored byte are what matter here
    from pathlib import Path

    from storage import keys
    from storage.codec import dumps
    from storage.memory import MemoryStore
    from validator.records.round_input import read_rounds
    from validator.replaying.replay_run import replay_file
    from validator.round.evaluate import build_record
    from validator.round.stages import run_stages
    from validator.settings import load_settings

    examples = Path(__file__).resolve().parents[2] / "examples" / "rounds.jsonl"
    rounds_file = tmp_path / "rounds.jsonl"
    lines = examples.read_text().splitlines()[:6]
    rounds_file.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    settings = load_settings(None, env={"VALIDATOR_OUTPUT__HEATMAP": "false"}, dotenv_path=None)
    store, emb = MemoryStore(), Recording()
    seen: list[int] = []
    summary = replay_file(rounds_file, store, settings, emb, on_total=seen.append, on_done=seen.append)
    assert seen == [6] + [1] * 6 and [f.line for f in summary.failures] == [2]
    ids = [item.round.round_id for item in read_rounds(rounds_file) if item.round is not None]
    assert summary.evaluated == ids
    ahead = [texts for texts, thread in emb.calls if thread.startswith("embed-ahead")]  # the rest: prompts
    assert ahead == [round_texts(item.round) for item in read_rounds(rounds_file) if item.round is not None]
    plain, expected = FakeEmbedder(), MemoryStore()
    for item in read_rounds(rounds_file):
        if item.round is None:
            continue
        key = keys.evaluation(item.round.round_id)
        expected.put(key, dumps(build_record(run_stages(item.round, plain, settings), settings, plain).to_json()))
        assert store.get(key) == expected.get(key)
