"""Benchmarks evaluate rounds through the product's own unit of work, as the daemon does.

``replay`` hands every round of a rounds file, in order, to ``validator.round.evaluate.evaluate_stored`` (the unit of work
the daemon, ``validator round`` and replay share), writes it with the product's ``RoundWriter`` into a
memory store, and folds each record into a ``Ledger`` exactly as the daemon does (``validator.records.ledger_entries``),
storing the ledger's identity links with the next round's input as the daemon does: a benchmark figure is
the figure the daemon would produce over these rounds (without the LM, without the heatmap PNG, which
moves no number). Vectors come from ``benchmarks.data.VectorCache`` through ``CachedEmbedder``; the lab's
rules (``benchmarks.lab``) are handed in through ``consensus.extensions`` when asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from benchmarks.data import CachedEmbedder, VectorCache
from benchmarks.lab import LabConfig, extensions
from consensus.signals import Signals
from consensus.text import model_text
from consensus.types import Evaluation, InputMarker, Round
from emissions.allocate import Allocation
from storage.memory import MemoryStore
from validator.records.evaluation_record import RoundRecord
from validator.records.ledger_entries import Ledger, fold_record, identity_links
from validator.records.lm_evidence import LMEvidence
from validator.records.writer import RoundWriter
from validator.round.embed_ahead import round_texts
from validator.round.evaluate import evaluate_stored
from validator.settings import Settings


@dataclass(frozen=True)
class Replayed:
    round: Round
    evaluation: Evaluation
    allocation: Allocation
    record: RoundRecord


def replay(
    rounds: Sequence[Round],
    cache: VectorCache,
    settings: Settings,
    lab: LabConfig | None = None,
    grades: Callable[[Round], Mapping[int, float] | None] | None = None,
    figures: Mapping[str, Mapping[int, str]] | None = None,
    signals: Callable[[Round], Signals | None] | None = None,
) -> list[Replayed]:
    """Evaluate, write and fold every round as the daemon does without the LM (with ``lab``'s rules).

    ``grades``: the LM's cached grade of each answer of a round (``benchmarks.lm_grades``), or None where
    the cache does not cover it; given to the round as its stored LM evidence, as a store replay reuses it.
    ``figures``: round id -> the LM's confirmed figure contradictions (``benchmarks.lm_figures``), likewise.
    ``signals``: any other LM evidence of a round the lab measured (``benchmarks.factual``: the factual check's
    agreement and the arbitration), handed in the same way; ``grades`` and ``figures`` are added to it."""
    lab = lab or LabConfig()
    embedder = CachedEmbedder(cache)
    normalise = settings.consensus.text.normalise_text
    # one pass over every text first: the model runs once, in large batches, and the cache is written once
    texts = [t for r in rounds for t in round_texts(r, normalise)]
    edges = [model_text(x, normalise) for r in rounds for x in (r.prompt, r.reference) if x]
    embedder.embed(texts + edges)
    sentences = None
    if lab.coverage_semantic > 0:
        cache.sentences(texts)  # every sentence embedded in one pass, the file written once
        sentences = cache.sentences
    hooks, consensus = extensions(lab, settings.consensus, sentences)
    settings = dataclasses.replace(
        settings,
        consensus=consensus,
        output=dataclasses.replace(settings.output, heatmap=False),
        lm=dataclasses.replace(settings.lm, enabled=False),
    )
    writer = RoundWriter(MemoryStore(), embedder)
    ledger = Ledger()
    out = []
    for sequence, r in enumerate(rounds, start=1):
        links = identity_links(ledger, settings.consensus, [x.miner for x in r.responses])
        stored = dataclasses.replace(r, daemon=InputMarker(sequence=sequence, links=links))
        writer.write_input(stored)
        graded = grades(r) if grades is not None else None
        figured = (figures or {}).get(r.round_id)
        given = signals(r) if signals is not None else None
        evidence = (
            None
            if graded is None and figured is None and given is None
            else LMEvidence(
                r.round_id,
                "cached",
                dataclasses.replace(given or Signals(), lm_grade=graded, figure_contradictions=figured),
            )
        )
        record, outcome = evaluate_stored(stored, settings, embedder, extensions=hooks, evidence=evidence)
        record = writer.write(stored, record, outcome)
        ledger = fold_record(ledger, sequence, record)
        if outcome is None:
            raise ValueError(f"round {r.round_id}: below the daemon's quorum ({settings.daemon.quorum} answers)")
        out.append(Replayed(r, outcome.evaluation, outcome.allocation, record))
    return out
