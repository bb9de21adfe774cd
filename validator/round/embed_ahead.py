"""Overlap a replay's rounds: round k+1 is embedded while round k is evaluated, rendered and written.

The embedding runtime spends its time in native code that releases the GIL,
while a round's heatmap, record and writes are Python on one core. The
in-process engine (``validator.replaying.engine.LocalExecutor``: file and store
replay, what-if) therefore hands the next round's texts to one background thread
(``embed_ahead``) and evaluates, renders and writes the current round on the
caller's thread, in file order. The vectors are the ones the round would
have computed itself (the same texts in the same single ``embed`` call), so
every output stays byte-identical; only wall time changes. At most
``depth`` rounds are embedded ahead, so memory stays bounded.

An embedder that can tokenise ahead (``tokenise_ahead(texts)``, as
``embedding.windowed.WindowedEmbedder`` does) gets the next round's texts on
a second thread as soon as they are read: their tokens and windows are ready
when the current round's last batch ends, so the model never waits for the
tokenizer between rounds. Windows depend on the text alone: no vector changes.
An embedder with ``open()`` (the ONNX session) opens while the first round is
tokenised.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from consensus.embedder import Embedder, Embeddings
from consensus.text import model_text
from consensus.types import Round

T = TypeVar("T")


def round_texts(round_: Round, normalise: bool = True) -> list[str]:
    """The texts ``validator.round.stages.run_stages`` embeds for a round: what a reader sees of each answer
    (``consensus.text.model_text``; ``normalise`` is ``consensus.text.normalise_text``), failed answers empty."""
    return [model_text(r.text, normalise) if r.error is None else "" for r in round_.responses]


def _embed(embedder: Embedder, texts: list[str], tokenised: Future | None) -> Embeddings:
    if tokenised is not None:
        opening = getattr(embedder, "open", None)  # load the model while the texts are being tokenised
        if opening is not None:
            opening()
        try:
            tokenised.result()
        except Exception:  # noqa: BLE001 - embed tokenises again and raises the error for this item
            pass
    return embedder.embed(texts)


def _waiter(future: Future | None) -> Callable[[], Embeddings | None]:
    if future is None:
        return lambda: None
    return future.result


def embed_ahead(
    items: Iterable[T], texts_of: Callable[[T], Sequence[str] | None], embedder: Embedder, *, depth: int = 1
) -> Iterator[tuple[T, Callable[[], Embeddings | None]]]:
    """Yield ``(item, embedded)`` in order; ``embedded()`` waits for and returns the item's ``Embeddings``.

    ``texts_of(item)`` gives the texts to embed, or None for an item that
    needs none (a bad line): its ``embedded()`` returns None. While the caller
    works on item k, items k+1 .. k+``depth`` are embedded on a background
    thread. An error raised by the embedder is raised by ``embedded()``, in
    the caller's thread, for that item only.
    """
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-ahead")
    tokenise = getattr(embedder, "tokenise_ahead", None)
    tokeniser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenise-ahead") if tokenise else None
    pending: deque[tuple[T, Future | None]] = deque()
    try:
        for item in items:
            texts = texts_of(item)
            future = None
            if texts is not None:
                texts = list(texts)
                tokenised = tokeniser.submit(tokenise, texts) if tokeniser is not None else None
                future = pool.submit(_embed, embedder, texts, tokenised)
            pending.append((item, future))
            if len(pending) > depth:
                item0, future = pending.popleft()
                yield item0, _waiter(future)
        while pending:
            item0, future = pending.popleft()
            yield item0, _waiter(future)
    finally:
        # a consumer that stops early leaves nothing running behind it
        pool.shutdown(wait=True, cancel_futures=True)
        if tokeniser is not None:
            tokeniser.shutdown(wait=True, cancel_futures=True)
