"""The real all-MiniLM-L6-v2: ONNX Runtime against the fp32 torch model, windows, dedup."""

import numpy as np
import pytest

from consensus.embed import LongTextPolicy, OnnxEmbedder, TorchEmbedder, plan_windows, sample_windows
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


def test_sample_windows_span_the_text_and_are_stable():
    policy = LongTextPolicy(token_budget=256, sample_window=62)
    spans = sample_windows(4000, policy, b"text-hash")
    assert len(spans) == 4 and all(b - a == 62 for a, b in spans)
    strata = [(round(i * 4000 / 4), round((i + 1) * 4000 / 4)) for i in range(4)]
    assert all(lo <= a and b <= hi for (a, b), (lo, hi) in zip(spans, strata))
    assert sample_windows(4000, policy, b"text-hash") == spans  # same text, same windows
    assert sample_windows(4000, LongTextPolicy(seed=7), b"text-hash") != spans
    short = sample_windows(200, policy, b"k")  # strata shorter than a window are taken whole
    assert short[0] == (0, 50) and short[-1][1] == 200


def test_policy_is_checked():
    with pytest.raises(Exception, match="mode"):
        LongTextPolicy(mode="truncate")


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
