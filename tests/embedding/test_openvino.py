"""The real all-MiniLM-L6-v2 through OpenVINO: within 1e-4 of the fp32 torch model, batches side by side,
the compiled-model cache, and no deadlock when threads first meet in the bindings."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from consensus.embedder import LongTextPolicy
from consensus.similarity import cosine_matrix
from embedding.loader import load_embedder
from embedding.openvino_runtime import OpenVinoEmbedder
from embedding.torch_runtime import TorchEmbedder
from tests.embedding.test_model import TEXTS

pytestmark = pytest.mark.slow

ANSWERS = Path(__file__).resolve().parents[2] / "examples" / "rounds.jsonl"


def _real_answers(limit: int = 80) -> list[str]:
    texts = [
        r["text"]
        for line in ANSWERS.read_text().splitlines()
        if line.strip()
        for r in json.loads(line)["responses"]
        if r.get("text")
    ]
    return texts[:limit]


@pytest.mark.parametrize("mode", ["sample", "full"])
def test_openvino_matches_fp32_torch_within_1e_4(mode):
    policy = LongTextPolicy(mode=mode)
    texts = TEXTS + _real_answers()
    ours, torch_emb = OpenVinoEmbedder(long_texts=policy), TorchEmbedder(long_texts=policy)
    a, b = ours.embed(texts), torch_emb.embed(texts)
    assert np.array_equal(a.windows, b.windows) and np.array_equal(a.embedded, b.embedded)
    assert np.abs(cosine_matrix(a.vectors) - cosine_matrix(b.vectors)).max() < 1e-4
    windows = [w for ws in ours.windows_for(texts) for w in ws]
    wa, wb = ours.embed_windows(windows), torch_emb.embed_windows(windows)
    assert np.abs(wa @ wa.T - wb @ wb.T).max() < 1e-4


def test_batches_side_by_side_give_the_vectors_of_one_thread():
    texts = [
        f"Answer {i}: lists are mutable, tuples are not; item {i} changes in place." * (1 + i % 5) for i in range(60)
    ] + TEXTS
    side_by_side = OpenVinoEmbedder(threads=2, max_batch_tokens=256)
    in_turn = OpenVinoEmbedder(threads=1, max_batch_tokens=256)
    seen = set()
    run = side_by_side._run
    side_by_side._run = lambda ids, mask: (seen.add(threading.get_ident()), run(ids, mask))[1]
    a, b = side_by_side.embed(texts), in_turn.embed(texts)
    assert len(seen) == 2
    np.testing.assert_array_equal(a.vectors, b.vectors)


def test_the_setting_selects_it_and_the_model_compiles_on_first_use(tmp_path):
    emb = load_embedder("openvino", threads=1)
    assert isinstance(emb, OpenVinoEmbedder) and emb.runtime == "openvino-fp32"
    fresh = OpenVinoEmbedder(threads=1)
    assert not fresh.loaded
    assert fresh.embed(["one text"]).vectors.shape == (1, 384) and fresh.loaded


def test_a_whole_replay_on_openvino_gives_the_records_of_onnx_runtime(tmp_path, monkeypatch):
    """``validator replay`` of the 22 example rounds on each runtime (batches side by side, the next round
    tokenised ahead, the heatmaps rendered between): same members and reasons, vectors within 1e-4."""
    from storage import keys
    from storage.embeddings import decode_embeddings
    from storage.local import LocalStore
    from validator.cli.main import main

    stores = {}
    for runtime in ("onnx", "openvino"):
        monkeypatch.setenv("VALIDATOR_EMBEDDING__RUNTIME", runtime)
        out = tmp_path / runtime
        assert main(["replay", str(ANSWERS), "--out", str(out), "--no-progress"]) == 0
        stores[runtime] = LocalStore(out)
    ids = sorted({k.split("/")[1] for k in stores["onnx"].list("rounds/") if k.endswith("/evaluation.json")})
    assert len(ids) == 22
    for round_id in ids:
        a, b = (json.loads(stores[r].get(keys.evaluation(round_id))) for r in ("onnx", "openvino"))
        assert a["embedding"]["runtime"] == "onnxruntime-fp32" and b["embedding"]["runtime"] == "openvino-fp32"
        assert a["members"] == b["members"], round_id
        assert [r["reason"] for r in a["responses"]] == [r["reason"] for r in b["responses"]], round_id
        va, vb = (decode_embeddings(stores[r].get(keys.embeddings(round_id))).vectors for r in ("onnx", "openvino"))
        assert np.abs(va - vb).max() < 1e-4


def test_the_compiled_model_is_cached_per_version_and_gives_the_same_vectors(tmp_path):
    fresh = OpenVinoEmbedder(threads=1, cache_dir=tmp_path)
    a = fresh.embed(TEXTS).vectors
    blobs = list(tmp_path.glob("openvino-*/*.blob"))
    assert len(blobs) == 1  # written by the first compile (the ONNX export is in tmp_path too)
    again = OpenVinoEmbedder(threads=1, cache_dir=tmp_path)
    np.testing.assert_array_equal(again.embed(TEXTS).vectors, a)  # read from the blob: same numbers
    assert list(tmp_path.glob("openvino-*/*.blob")) == blobs


def test_an_unwritable_cache_directory_compiles_without_the_blob_cache(tmp_path):
    from embedding.openvino_runtime import _blob_dir

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert _blob_dir(blocker, "2026.4.1-22982-abc") is None
    assert _blob_dir(tmp_path, "2026.4.1-22982-abc") == tmp_path / "openvino-2026.4.1"


# Two threads that first enter OpenVINO's bindings at the same moment, while a third imports modules (what a
# replay does: its import-warmup thread runs during the first batches). Before the bindings lock and the
# warm-up in open(), whole replays hung in 1 of 3 to 1 of 11 runs, both threads in Type.to_dtype.
_RACE = r"""
import threading, sys
import numpy as np
from embedding.openvino_runtime import OpenVinoEmbedder
emb = OpenVinoEmbedder(threads=2, max_batch_tokens=64)
texts = [f"answer {i}: " + "word " * (5 + i % 40) for i in range(200)]
importer = threading.Thread(target=lambda: __import__("sklearn.neighbors"))
gate = threading.Barrier(3)
out = {}
def embed(k):
    gate.wait()
    out[k] = emb.embed(texts[k::2]).vectors
callers = [threading.Thread(target=embed, args=(k,)) for k in range(2)]
for t in callers: t.start()
gate.wait(); importer.start()
for t in callers + [importer]: t.join()
print(sum(len(v) for v in out.values()))
"""


def test_threads_meeting_in_the_bindings_do_not_deadlock():
    root = Path(__file__).resolve().parents[2]
    for attempt in range(6):  # fresh processes: the race is at a process's first calls
        done = subprocess.run(
            [sys.executable, "-c", _RACE],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=180,
            env={**__import__("os").environ, "PYTHONFAULTHANDLER": "1"},
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.split()[-1] == "200", attempt


def test_prepare_exports_and_compiles_for_the_configured_runtime(tmp_path, monkeypatch, capsys):
    from validator.cli.main import main

    monkeypatch.setenv("VALIDATOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("VALIDATOR_EMBEDDING__RUNTIME", "openvino")
    assert main(["prepare"]) == 0
    assert "embedding model ready (openvino-fp32)" in capsys.readouterr().out
    assert list(tmp_path.glob("minilm-*/*.onnx")) and len(list(tmp_path.glob("openvino-*/*.blob"))) == 1


def test_the_model_is_compiled_fp32_unpinned_one_stream_per_thread(tmp_path):
    emb = OpenVinoEmbedder(threads=2, cache_dir=tmp_path)
    emb.open()
    props = {
        name: emb.compiled.get_property(name)
        for name in ("INFERENCE_PRECISION_HINT", "ENABLE_CPU_PINNING", "NUM_STREAMS", "INFERENCE_NUM_THREADS")
    }
    assert props["INFERENCE_PRECISION_HINT"].get_type_name() == "f32"
    assert props["ENABLE_CPU_PINNING"] is False  # one-thread processes side by side must not share a core
    assert int(props["NUM_STREAMS"]) == 2 and int(props["INFERENCE_NUM_THREADS"]) == 2
