"""The real all-MiniLM-L6-v2: ONNX Runtime against the fp32 torch model, windows, dedup."""

import numpy as np
import pytest

from consensus.embed import OnnxEmbedder, TorchEmbedder, plan_windows
from consensus.similarity import cosine_matrix


def test_plan_windows_balanced_and_complete():
    assert plan_windows(0, 254) == []
    assert plan_windows(1, 254) == [(0, 1)]
    assert plan_windows(254, 254) == [(0, 254)]
    assert plan_windows(255, 254) == [(0, 128), (128, 255)]
    for n in (1, 253, 254, 255, 508, 509, 4000):
        w = plan_windows(n, 254)
        assert w[0][0] == 0 and w[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(w, w[1:]))
        sizes = [b - a for a, b in w]
        assert max(sizes) <= 254 and max(sizes) - min(sizes) <= 1


TEXTS = [
    "Water boils at 100 degrees Celsius at sea level.",
    "At standard atmospheric pressure the boiling point of water is 100 °C.",
    "The capital of Australia is Canberra, not Sydney.",
    "",
    "ok",
    " ".join(["The mitochondria is the powerhouse of the cell, and long answers must be embedded whole."] * 60),
    "Completely unrelated: a recipe for banana bread with walnuts.",
]


@pytest.mark.slow
def test_onnx_matches_fp32_torch_within_1e_4(embedder):
    torch_emb = TorchEmbedder()
    a = embedder.embed(TEXTS)
    b = torch_emb.embed(TEXTS)
    assert np.array_equal(a.windows, b.windows) and np.array_equal(a.tokens, b.tokens)
    assert np.abs(cosine_matrix(a.vectors) - cosine_matrix(b.vectors)).max() < 1e-4
    # window by window too, on the same token ids
    windows = [w for ws in embedder.windows_for(TEXTS) for w in ws]
    wa, wb = embedder.embed_windows(windows), torch_emb.embed_windows(windows)
    assert np.abs(wa @ wa.T - wb @ wb.T).max() < 1e-4


@pytest.mark.slow
def test_matches_sentence_transformers_on_short_texts(embedder):
    from sentence_transformers import SentenceTransformer

    from consensus.embed import default_model_dir

    st = SentenceTransformer(str(default_model_dir()), device="cpu")
    short = [t for t in TEXTS if t and len(t) < 500]
    ref = st.encode(short, normalize_embeddings=True)
    ours = embedder.embed(short).vectors
    assert np.abs(cosine_matrix(ours) - cosine_matrix(ref)).max() < 1e-4


@pytest.mark.slow
def test_long_text_is_windowed_not_truncated(embedder):
    out = embedder.embed(TEXTS)
    long_i = 5
    assert out.windows[long_i] > 1 and out.tokens[long_i] > 254
    head = TEXTS[long_i][:1200]
    tail_changed = TEXTS[long_i] + " " + " ".join(["Unrelated football scores and stock tips follow here."] * 60)
    v = embedder.embed([TEXTS[long_i], tail_changed, head]).vectors
    # what comes after the first window still moves the vector
    assert float(v[0] @ v[1]) < 0.95


@pytest.mark.slow
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


@pytest.mark.slow
def test_order_of_texts_does_not_change_vectors():
    a = OnnxEmbedder().embed(TEXTS).vectors
    b = OnnxEmbedder().embed(TEXTS[::-1]).vectors[::-1]
    np.testing.assert_allclose(a, b, atol=1e-6)
