"""The real all-MiniLM-L6-v2: ONNX Runtime against the fp32 torch model and sentence-transformers, windows, dedup."""

import numpy as np
import pytest

from consensus.embedder import LongTextPolicy
from consensus.similarity import cosine_matrix
from embedding.onnx_runtime import OnnxEmbedder
from embedding.torch_runtime import TorchEmbedder

pytestmark = pytest.mark.slow

TEXTS = [
    "Water boils at 100 degrees Celsius at sea level.",
    "At standard atmospheric pressure the boiling point of water is 100 °C.",
    "The capital of Australia is Canberra, not Sydney.",
    "",
    "ok",
    " ".join(["The mitochondria is the powerhouse of the cell, and long answers must be embedded whole."] * 60),
    "Completely unrelated: a recipe for banana bread with walnuts.",
]


@pytest.mark.parametrize("mode", ["sample", "full"])
def test_onnx_matches_fp32_torch_within_1e_4(mode):
    policy = LongTextPolicy(mode=mode)
    ours, torch_emb = OnnxEmbedder(long_texts=policy), TorchEmbedder(long_texts=policy)
    a = ours.embed(TEXTS)
    b = torch_emb.embed(TEXTS)
    assert np.array_equal(a.windows, b.windows) and np.array_equal(a.embedded, b.embedded)
    assert np.abs(cosine_matrix(a.vectors) - cosine_matrix(b.vectors)).max() < 1e-4
    # window by window too, on the same token ids
    windows = [w for ws in ours.windows_for(TEXTS) for w in ws]
    wa, wb = ours.embed_windows(windows), torch_emb.embed_windows(windows)
    assert np.abs(wa @ wa.T - wb @ wb.T).max() < 1e-4


def test_matches_sentence_transformers_on_short_texts(real_embedder):
    from sentence_transformers import SentenceTransformer

    from embedding.cache import default_model_dir

    st = SentenceTransformer(str(default_model_dir()), device="cpu")
    short = [t for t in TEXTS if t and len(t) < 500]
    ref = st.encode(short, normalize_embeddings=True)
    ours = real_embedder.embed(short).vectors
    assert np.abs(cosine_matrix(ours) - cosine_matrix(ref)).max() < 1e-4


@pytest.mark.parametrize("mode", ["sample", "full"])
def test_long_text_is_windowed_not_truncated(mode):
    emb = OnnxEmbedder(long_texts=LongTextPolicy(mode=mode))
    long_i = 5
    out = emb.embed(TEXTS)
    assert out.windows[long_i] > 1 and out.tokens[long_i] > 254
    if mode == "full":
        assert out.embedded[long_i] == out.tokens[long_i]
    else:
        assert out.embedded[long_i] == 4 * 62
    # a junk second half (after the first 254 word pieces) moves the vector; truncation would not see it
    tail_changed = TEXTS[long_i] + " " + " ".join(["Unrelated football scores and stock tips follow here."] * 120)
    v = emb.embed([TEXTS[long_i], tail_changed]).vectors
    assert float(v[0] @ v[1]) < 0.9


def test_identical_texts_embedded_once_and_empty_is_zero(monkeypatch):
    emb = OnnxEmbedder()
    seen = []
    real = emb._run

    def counting(ids, mask):
        seen.append(ids.shape[0])
        return real(ids, mask)

    monkeypatch.setattr(emb, "_run", counting)
    out = emb.embed(["same answer", "same answer", "other", "   ", "same answer"])
    assert sum(seen) == 2
    assert np.array_equal(out.vectors[0], out.vectors[1]) and np.array_equal(out.vectors[0], out.vectors[4])
    assert not out.vectors[3].any() and out.windows[3] == 0
    assert abs(np.linalg.norm(out.vectors[0]) - 1) < 1e-5


def test_order_of_texts_does_not_change_vectors():
    a = OnnxEmbedder().embed(TEXTS).vectors
    b = OnnxEmbedder().embed(TEXTS[::-1]).vectors[::-1]
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_batches_side_by_side_give_the_vectors_of_one_thread():
    """Two threads run whole batches side by side (one core each): the same numbers, bit for bit, as one
    thread running them in turn, and each batch's vectors land in their own rows."""
    import threading

    texts = [
        f"Answer {i}: lists are mutable, tuples are not; item {i} changes in place." * (1 + i % 5) for i in range(60)
    ] + TEXTS
    side_by_side, in_turn = OnnxEmbedder(threads=2, max_batch_tokens=256), OnnxEmbedder(threads=1, max_batch_tokens=256)
    seen = set()
    run = side_by_side._run
    side_by_side._run = lambda ids, mask: (seen.add(threading.get_ident()), run(ids, mask))[1]
    a = side_by_side.embed(texts)
    b = in_turn.embed(texts)
    assert len(seen) == 2  # both threads ran batches
    np.testing.assert_array_equal(a.vectors, b.vectors)
    np.testing.assert_array_equal(a.windows, b.windows)


def test_cache_dir_is_a_parameter(tmp_path):
    from embedding.export import onnx_cache_path
    from embedding.loader import load_embedder

    emb = load_embedder("onnx", cache_dir=tmp_path)  # exports into the given directory, not the default one
    assert not emb.loaded
    emb.open()  # the session (and the export) come on first use or on open()
    assert onnx_cache_path(emb.checksum, tmp_path).is_file() and (tmp_path / "checksums.json").is_file()
    assert not list(onnx_cache_path(emb.checksum, tmp_path).parent.glob("*.tmp"))
    assert load_embedder("onnx", cache_dir=tmp_path) is emb
    np.testing.assert_array_equal(emb.embed(TEXTS[:3]).vectors, OnnxEmbedder().embed(TEXTS[:3]).vectors)


def test_a_window_met_again_is_reused_within_1e_4_of_a_fresh_run():
    # "full" windows of a long text recur in a longer text that starts with it; the text itself is new
    policy = LongTextPolicy(mode="full")
    long_text = " ".join(f"Sentence number {i} says something about topic {i % 7}." for i in range(80))
    warm, fresh = OnnxEmbedder(long_texts=policy), OnnxEmbedder(long_texts=policy)
    first = warm.embed([long_text])
    run_before, hits_before = warm.windows_run, warm.window_memo.hits
    again = warm.embed([long_text + " ", long_text.upper(), TEXTS[0]])  # same word pieces: lowercased, stripped
    assert warm.windows_run - run_before == 1  # only TEXTS[0]'s window went through the model
    assert warm.window_memo.hits - hits_before == 2 * int(first.windows[0])
    cold = fresh.embed([long_text + " ", long_text.upper(), TEXTS[0]])
    assert np.abs(cosine_matrix(again.vectors) - cosine_matrix(cold.vectors)).max() < 1e-4
    np.testing.assert_allclose(again.vectors, cold.vectors, atol=1e-5)


def test_a_whatif_over_stored_embeddings_never_opens_the_model(tmp_path):
    """The session opens on the first window; stored answer, prompt and reference vectors need none."""
    import json

    from storage.local import LocalStore
    from validator.replaying.replay_run import replay_file
    from validator.replaying.whatif_run import run_whatif
    from validator.settings import load_settings

    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text(
        "".join(
            json.dumps(
                {
                    "round_id": f"r{i}",
                    "prompt": "At what temperature does water boil at sea level?",
                    "reference": "100 °C" if i else None,
                    "responses": [{"miner": f"m{j}", "text": t, "latency_s": 1.0 + j} for j, t in enumerate(TEXTS[:3])],
                }
            )
            + "\n"
            for i in range(2)
        )
    )
    settings = load_settings(None, env={}, dotenv_path=None)
    store = LocalStore(tmp_path / "store")
    assert not replay_file(rounds, store, settings, OnnxEmbedder()).failures
    fresh = OnnxEmbedder()
    report = run_whatif(store, settings, fresh, whatif_id="w", source="test").to_json()
    assert [r["embeddings_reused"] for r in report["rounds"]] == [True, True]
    assert not fresh.loaded


def test_texts_tokenised_ahead_give_the_same_vectors(monkeypatch):
    """Replay tokenises the next round on another thread; embedding those texts later takes the windows
    made then (no second tokenisation) and gives the vectors of tokenising them in ``embed``."""
    import threading

    from embedding.windowed import PLANNED_MAX

    texts = TEXTS + ["", "   ", TEXTS[0]]
    ahead, now = OnnxEmbedder(), OnnxEmbedder()
    thread = threading.Thread(target=ahead.tokenise_ahead, args=(texts,))
    thread.start()
    thread.join()
    assert len(ahead._planned) == len({t for t in TEXTS if t.strip()})  # empty texts are not tokenised
    tokenised = []
    real = ahead._tokenise
    monkeypatch.setattr(ahead, "_tokenise", lambda ts: (tokenised.append(list(ts)), real(ts))[1])
    a, b = ahead.embed(texts), now.embed(texts)
    assert tokenised == [] and ahead._planned == {}  # taken, not tokenised again, not kept
    np.testing.assert_array_equal(a.vectors, b.vectors)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_array_equal(a.windows, b.windows)
    ahead.tokenise_ahead(TEXTS[:2])  # in the text memo now: nothing to tokenise
    assert ahead._planned == {}
    ahead.tokenise_ahead([f"text {i}" for i in range(PLANNED_MAX + 5)])  # never embedded: the oldest go
    assert len(ahead._planned) == PLANNED_MAX and "text 0" not in ahead._planned
