"""What every stage reads and what each returns: the round's ``Context`` and a ``Stage`` verdict.

``Context`` holds the round and what was measured on it once (similarity matrix, word counts,
latencies, the config and the edge's signals), with the words, prompt words, reference agreement
and Jaccard matrix read once on first use (``RoundReading``, shared by a context given new signals). ``Stage`` says whom a stage removes and why. The stages
themselves are in ``consensus.stages`` (and ``consensus.factual_stage``, ``consensus.injection``), which
re-exports ``Context``, ``Stage`` and ``Removed``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from consensus.config import ConsensusConfig
from consensus.filters import jaccard_matrix, words
from consensus.reference import agreements, claim_shares, support
from consensus.signals import Signals
from consensus.text import skeleton, stems
from consensus.text import words as normalised_words
from consensus.types import Reason, Round

Removed = Mapping[int, tuple[Reason, str]]


@dataclass(frozen=True, eq=False)
class RoundReading:
    """What is read once from a round's texts on first use: words, prompt words, stems, the reference's
    agreement, the Jaccard matrix. It reads the round and the text config; the reference's support is kept per
    NLI verdicts handed in (the only signal it reads), so a
    ``Context`` given the LM's signals later (``consensus.pipeline.decide(plan=)``) shares it."""

    round: Round
    config: ConsensusConfig
    _support: dict[tuple[tuple[int, float], ...], dict[int, float]] = field(
        default_factory=dict, init=False, repr=False
    )

    def words(self, text: str) -> list[str]:
        """``text``'s words as every stage compares them (``consensus.text.words``; legacy ``filters.words``)."""
        return normalised_words(text) if self.config.text.normalise_text else words(text)

    @cached_property
    def text_words(self) -> tuple[tuple[str, ...], ...]:
        """Each response's words (``words``), read once for the copies, groups and coverage stages."""
        return tuple(tuple(self.words(r.text)) for r in self.round.responses)

    @cached_property
    def prompt_words(self) -> frozenset[str]:
        return frozenset(self.words(self.round.prompt))

    @cached_property
    def word_stems(self) -> tuple[frozenset[str], ...]:
        """Each response's word stems (``consensus.text.stems``), read once for the quality part."""
        return tuple(stems(ws) for ws in self.text_words)

    def folded(self, text: str) -> str:
        """``text`` as the fact rules read it: ``consensus.text.skeleton`` (legacy: as written)."""
        return skeleton(text) if self.config.text.normalise_text else text

    @cached_property
    def reference_agreement(self) -> dict[int, float]:
        """Each answer's share of the reference answer's facts (consensus.reference); empty without one."""
        return self._against_reference(agreements)

    @cached_property
    def reference_claims(self) -> dict[int, float]:
        """Each answer's share of a long reference answer's claims (consensus.reference.claim_shares); empty
        without one or for a short one."""
        return self._against_reference(claim_shares)

    def reference_support(self, entailment: Mapping[int, float] | None = None) -> dict[int, float]:
        """How far the reference supports each answer (consensus.reference.support: [0, 1], -1 when the answer
        contradicts it), given the NLI judge's ``entailment`` (``Signals.reference_entailment``) if any; empty
        without a reference that states a fact or a claim. Read once per distinct ``entailment``."""
        key = tuple(sorted((entailment or {}).items()))
        if key not in self._support:
            given = dict(key)
            self._support[key] = self._against_reference(lambda t, r, p: support(t, r, p, given))
        return self._support[key]

    def _against_reference(self, measure: Callable[[dict[int, str], str, str], dict[int, float]]) -> dict[int, float]:
        """``measure`` (answers, reference, prompt; all as the fact rules read them); empty without a reference."""
        if not self.round.reference:
            return {}
        return measure(
            {i: self.folded(r.text) for i, r in enumerate(self.round.responses)},
            self.folded(self.round.reference),
            self.folded(self.round.prompt),
        )

    @cached_property
    def jaccard(self) -> np.ndarray:
        """(n, n) Jaccard similarity of the responses' word sets, for the copies and groups stages."""
        return jaccard_matrix(self.text_words)


@dataclass(frozen=True)
class Context:
    """What every stage reads: the round, its similarity matrix (n, n), word counts, and ``latencies``: when each
    answer arrived, by the validator's clock where it took one (``consensus.pipeline.arrivals``).

    ``reading``: what is read once from the round's texts (``RoundReading``); made here when not given, and
    made afresh when it belongs to another round or config, so ``dataclasses.replace(ctx, signals=...)`` keeps
    it and a replaced round or config never reads a stale one."""

    round: Round
    sim: np.ndarray
    counts: np.ndarray
    latencies: np.ndarray
    config: ConsensusConfig
    signals: Signals
    reading: RoundReading | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        r = self.reading
        if r is None or r.round is not self.round or r.config is not self.config:
            object.__setattr__(self, "reading", RoundReading(self.round, self.config))

    @property
    def _read(self) -> RoundReading:
        assert self.reading is not None  # set in __post_init__
        return self.reading

    @property
    def texts(self) -> list[str]:
        return [r.text for r in self.round.responses]

    def words(self, text: str) -> list[str]:
        """``text``'s words as every stage compares them (``RoundReading.words``)."""
        return self._read.words(text)

    @property
    def text_words(self) -> tuple[tuple[str, ...], ...]:
        return self._read.text_words

    @property
    def prompt_words(self) -> frozenset[str]:
        return self._read.prompt_words

    @property
    def word_stems(self) -> tuple[frozenset[str], ...]:
        return self._read.word_stems

    def folded(self, text: str) -> str:
        """``text`` as the fact rules read it (``RoundReading.folded``)."""
        return self._read.folded(text)

    @property
    def reference_agreement(self) -> dict[int, float]:
        return self._read.reference_agreement

    @property
    def reference_claims(self) -> dict[int, float]:
        return self._read.reference_claims

    @property
    def reference_support(self) -> dict[int, float]:
        return self._read.reference_support(self.signals.reference_entailment)

    @property
    def jaccard(self) -> np.ndarray:
        return self._read.jaccard


@dataclass(frozen=True)
class Stage:
    """One stage's verdict: whom it removes and why, plus notes for the record."""

    removed: Removed = field(default_factory=dict)
    notes: tuple[str, ...] = ()
