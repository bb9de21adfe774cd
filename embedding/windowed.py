"""Tokenising, windowing, dedup and pooling shared by every runtime of the real model.

``WindowedEmbedder`` implements ``consensus.embedder.Embedder``: it tokenises
the texts, cuts them into windows (``embedding.windows``), runs the windows
through its runtime in padded batches, pools, and combines each text's
windows into one unit vector. Identical texts are embedded once (and
remembered, up to ``memo_size`` texts), and so are identical windows (by the
sha256 of their token ids, up to ``window_memo_size`` windows: a window met
in an earlier round or another text is not run again; ``embedding.memo``);
empty (or whitespace-only) texts get the zero vector. ``tokenise_ahead`` tokenises texts
before they are embedded (on another thread: replay does the next round's while this round's
batches run). A runtime subclass (``embedding.onnx_runtime``,
``embedding.torch_runtime``) implements ``_run(ids, mask)``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path

import numpy as np

from consensus.embedder import Embeddings, LongTextPolicy
from embedding.cache import ModelFiles, read_model_files
from embedding.memo import LruMemo, window_key
from embedding.windows import combine_windows, mean_pool, pack_batches, pad_batch, text_windows

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
PLANNED_MAX = 8192  # texts tokenised ahead and not embedded yet (replay holds one or two rounds)


class WindowedEmbedder:
    """The real model's texts -> ``Embeddings``; subclasses supply ``_run(ids, mask) -> (b, s, d)`` float32."""

    name = MODEL_NAME
    runtime = "abstract"

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        long_texts: LongTextPolicy | None = None,
        max_batch_tokens: int = 1024,
        memo_size: int = 20000,
        window_memo_size: int = 32768,
        cache_dir: Path | None = None,
    ) -> None:
        # lazy: start-up cost, tokenizers takes 0.06 s to import
        from tokenizers import Tokenizer

        files: ModelFiles = read_model_files(model_dir, cache_dir)
        self.model_dir = files.model_dir
        self.cache_dir = cache_dir
        self.checksum = files.checksum
        self.max_seq_length = files.max_seq_length
        self.dim = files.dim
        self.tokenizer = Tokenizer.from_str(files.tokenizer_json)
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.cls_id = self.tokenizer.token_to_id("[CLS]")
        self.sep_id = self.tokenizer.token_to_id("[SEP]")
        self.max_batch_tokens = max_batch_tokens
        self.long_texts = long_texts or LongTextPolicy()
        # about 1.6 kB per entry: 20,000 texts + 32,768 windows stay under 100 MB
        self.text_memo: LruMemo[str, tuple[np.ndarray, int, int, int]] = LruMemo(memo_size)
        self.window_memo: LruMemo[bytes, np.ndarray] = LruMemo(window_memo_size)
        self.windows_run = 0  # windows that went through the model (the rest came from the memos)
        # text -> (word pieces, windows) tokenised ahead (tokenise_ahead), taken by the next embed of the text
        self._planned: dict[str, tuple[int, list[list[int]]]] = {}
        self._planned_lock = threading.Lock()

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _map_batches(self, fn, batches: list) -> Iterable[np.ndarray]:
        """``fn`` over the batches, results in order; a runtime may run batches side by side."""
        return map(fn, batches)

    def _embed_batch(self, windows: Sequence[Sequence[int]]) -> np.ndarray:
        ids, mask = pad_batch(windows)
        return mean_pool(self._run(ids, mask), mask)

    # -- windows ------------------------------------------------------------
    def windows_for(self, texts: Sequence[str]) -> list[list[list[int]]]:
        """Token ids of every window of every text, special tokens included."""
        return [windows for _pieces, windows in self._plan(texts)]

    def tokenise_ahead(self, texts: Sequence[str]) -> None:
        """Tokenise and window ``texts`` now, for a later ``embed`` of them; safe from another thread.

        A text's windows depend on the text alone, so no vector changes; only when the work is done
        does. Texts the text memo holds are skipped; the rest are kept until embedded, at most
        ``PLANNED_MAX`` texts (the oldest are dropped: they are tokenised again when embedded).
        """
        todo = [t for t in dict.fromkeys(texts) if t.strip() and t not in self.text_memo]
        plans = self._tokenise(todo)
        with self._planned_lock:
            self._planned.update(zip(todo, plans))
            excess = len(self._planned) - PLANNED_MAX
            for text in list(islice(self._planned, max(0, excess))):
                del self._planned[text]

    def _plan(self, texts: Sequence[str]) -> list[tuple[int, list[list[int]]]]:
        """(word pieces in the text, its windows) for every text: tokenised ahead, or now."""
        with self._planned_lock:
            ready = {t: self._planned.pop(t) for t in texts if t in self._planned} if self._planned else {}
        rest = [t for t in texts if t not in ready]
        fresh = dict(zip(rest, self._tokenise(rest))) if rest else {}
        return [ready[t] if t in ready else fresh[t] for t in texts]

    def _tokenise(self, texts: Sequence[str]) -> list[tuple[int, list[list[int]]]]:
        """(word pieces in the text, its windows) for every text, tokenised now."""
        if not texts:
            return []
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        max_content = self.max_seq_length - 2
        return [
            (len(enc.ids), text_windows(text, enc.ids, self.long_texts, max_content, self.cls_id, self.sep_id))
            for text, enc in zip(texts, encodings)
        ]

    def embed_windows(self, windows: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit vectors (w, d) for windows of token ids, mean-pooled over tokens.

        A window already embedded (same token ids) comes from the window memo;
        the others are embedded once each, sorted by length and packed into
        batches of at most ``max_batch_tokens`` padded tokens, so padding is
        small and results do not depend on the order texts arrive in.
        """
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        todo: dict[bytes, list[int]] = {}
        for i, w in enumerate(windows):
            key = window_key(w)
            hit = self.window_memo.get(key) if key not in todo else None
            if hit is not None:
                out[i] = hit
            else:
                todo.setdefault(key, []).append(i)
        fresh = [windows[rows[0]] for rows in todo.values()]
        vectors = np.zeros((len(fresh), self.dim), dtype=np.float32)
        batches = pack_batches([len(w) for w in fresh], self.max_batch_tokens)
        pooled = self._map_batches(self._embed_batch, [[fresh[i] for i in batch] for batch in batches])
        for batch, batch_vectors in zip(batches, pooled):
            vectors[batch] = batch_vectors
        self.windows_run += len(fresh)
        for (key, rows), vector in zip(todo.items(), vectors):
            out[rows] = vector
            self.window_memo.put(key, vector)
        return out

    # -- texts --------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> Embeddings:
        """(n, d) unit rows for ``texts``; zero rows for empty texts; counts per text."""
        n = len(texts)
        vectors = np.zeros((n, self.dim), dtype=np.float32)
        windows = np.zeros(n, dtype=np.int32)
        tokens = np.zeros(n, dtype=np.int32)
        embedded = np.zeros(n, dtype=np.int32)
        todo: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            if not text.strip():
                continue
            hit = self.text_memo.get(text) if text not in todo else None
            if hit is not None:
                vectors[i], windows[i], tokens[i], embedded[i] = hit
            else:
                todo.setdefault(text, []).append(i)
        if todo:
            unique = list(todo)
            plans = self._plan(unique)
            flat_vecs = self.embed_windows([w for _pieces, ws in plans for w in ws])
            pos = 0
            for text, (pieces, ws) in zip(unique, plans):
                vector, pieces_embedded = combine_windows(flat_vecs[pos : pos + len(ws)], ws)
                pos += len(ws)
                entry = (vector, len(ws), pieces, pieces_embedded)
                for i in todo[text]:
                    vectors[i], windows[i], tokens[i], embedded[i] = entry
                self.text_memo.put(text, entry)
        return Embeddings(vectors=vectors, windows=windows, tokens=tokens, embedded=embedded)
