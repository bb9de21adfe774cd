"""Benchmarks evaluate rounds as the product does: every round of a rounds file, in order.

``replay`` evaluates and allocates each round as ``validator replay`` does without the LM, with the
identity links the daemon's ledger would hold from the rounds before (``PairTracker``) and the lab's rules
(``benchmarks.lab``) when asked; vectors come from ``benchmarks.data.VectorCache``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.data import SentenceCache, VectorCache, embedded_text
from benchmarks.lab import LabConfig, extensions
from consensus.pipeline import evaluate
from consensus.signals import Signals
from consensus.types import Evaluation, Round
from emissions.allocate import Allocation, allocate
from validator.settings import Settings


@dataclass(frozen=True)
class Replayed:
    round: Round
    evaluation: Evaluation
    allocation: Allocation


def replay(rounds: list[Round], cache: VectorCache, settings: Settings, lab: LabConfig | None = None) -> list[Replayed]:
    """Evaluate and allocate every round, as ``validator replay`` does without the LM (with ``lab``'s rules)."""
    # one pass over every text first: the model runs once, in large batches, and the cache is written once
    cache.get(
        [embedded_text(x.text) if x.error is None else "" for r in rounds for x in r.responses]
        + [embedded_text(r.reference) for r in rounds if r.reference]
        + [embedded_text(r.prompt) for r in rounds]
    )
    lab = lab or LabConfig()
    sentences = None
    if lab.coverage_semantic > 0:
        sentences = SentenceCache(cache)
        sentences.fill([embedded_text(x.text) if x.error is None else "" for r in rounds for x in r.responses])
    hooks, consensus = extensions(lab, settings.consensus, sentences.get if sentences else None)
    out = []
    tracker = PairTracker(settings)
    for r in rounds:
        texts = [embedded_text(x.text) if x.error is None else "" for x in r.responses]
        ref = [embedded_text(r.reference)] if r.reference else []
        vectors = cache.get(texts + ref + [embedded_text(r.prompt)])
        x = vectors[: len(texts)]
        # what validator replay gives the core: similarities to the reference and to the prompt
        extra: dict[str, Any] = {"prompt_similarity": Signals.cosines(x, vectors[-1])}
        extra.update(tracker.signals(r))
        signals = Signals.from_reference_vector(x, vectors[len(texts)], **extra) if ref else Signals(**extra)
        ev = evaluate(r, x, consensus, signals, extensions=hooks)
        allocation = allocate(r, ev, settings.emissions)
        tracker.fold(r, ev, allocation)
        out.append(Replayed(r, ev, allocation))
    return out


class PairTracker:
    """The daemon's persistence rule over the rounds in order (consensus.identity): the ledger's pair evidence
    folded round after round, and each round's followers and linked entities from the rounds before it."""

    def __init__(self, settings: Settings) -> None:
        self.config = settings.consensus
        self.ledger = None
        self.sequence = 0
        if getattr(self.config, "identity_persistence", False):
            from emissions.ledger import Ledger

            self.ledger = Ledger()

    def signals(self, round_: Round) -> dict[str, Any]:
        if self.ledger is None or not self.ledger.pairs:
            return {}
        from consensus.identity import round_links

        c = self.config
        present = {x.miner: i for i, x in enumerate(round_.responses) if x.error is None and x.text.strip()}
        followers, entities = round_links(
            present, self.ledger.links(min_rounds=c.identity_min_rounds, share=c.identity_share, lead=c.identity_lead)
        )
        return {k: v for k, v in (("followers", followers), ("entities", entities)) if v}

    def fold(self, round_: Round, ev: Evaluation, allocation: Allocation) -> None:
        if self.ledger is None:
            return
        from emissions.ledger import MinerEntry

        self.sequence += 1
        entries = [
            MinerEntry(res.miner, share, amount, res.in_consensus, resp.error is not None)
            for res, resp, share, amount in zip(ev.results, round_.responses, allocation.shares, allocation.amounts)
        ]
        self.ledger = self.ledger.apply(
            self.sequence, round_.round_id, entries, no_quorum=False, close=ev.close_pairs, comparable=ev.comparable
        )
