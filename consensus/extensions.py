"""Rules handed to the evaluation from outside: the lab's hook into the product, none by default.

The product's stages and composite know only the rules that ship. A rule under measurement lives in
``benchmarks/lab/`` and reaches a round through ``Extensions``, passed to ``consensus.decide`` (and
``validator.round.stages.run_stages``); with the default (empty) ``Extensions`` nothing here runs. When a rule
ships it moves into the product with its setting and tests; when it does not, the product never learns
its name. docs/architecture.md ("Where a new rule goes").

Five hook points, each a tuple of plain callables applied in order:

- ``coverage``: ``(Graded, coverages) -> coverages``, the quality part's coverage before its length
  control (sentence coverage blends in here);
- ``quality``: ``(Graded, qualities) -> qualities``, right after the specificity factor and before the
  prose factor (the product's factors after specificity are plain products, so a factor here is one more);
- ``voice_pairs``: ``(Context, alive) -> pairs``, pairs of answers to count as one voice and one payout,
  besides entities and tied copies (the similarity sybil rule);
- ``composite``: ``(Context, {index: ScoreParts}) -> {index: ScoreParts}``, the finished score parts of the answers
  that earn (not empty, failed, copies or addressed to the evaluator), before they are paid (the LM's grade blended
  into the composite, ``benchmarks/lab/lm_grade.py``);
- ``voice_weights``: ``(Context) -> {index: weight}``, each answer's voice in choosing the dominant cluster (its
  distinct voices weighted, a group's voice its members' mean weight; ``min_support`` still counts voices) and in
  centring the consensus (alignment a weighted mean over the members); an answer not named weighs 1, several
  rules multiply, and weights naming every answer alike change nothing (a miner's earned trust, ``benchmarks/lab/trust_voice.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from consensus.context import Context
    from consensus.types import ScoreParts


@dataclass(frozen=True)
class Graded:
    """What a coverage or quality factor reads of the round.

    members: (m,) the dominant cluster; peers: (p,) the answers coverage is measured against;
    own: each grouped answer's group-mates (one voice); graded: the answers long enough to be graded by
    what they say of their own; word_sets: each earning answer's words as quality compares them (stems,
    residual of a restatement); prompt_words, common: the prompt's and generic English words in that form;
    groups: the one-voice groups; share, mass: the word coverage matrix (n, n) and the peers' weights (n,)
    (None unless coverage is pooled).
    """

    ctx: Context
    members: np.ndarray
    peers: np.ndarray
    own: Mapping[int, list[int]]
    graded: frozenset[int]
    word_sets: Mapping[int, frozenset[str]]
    prompt_words: frozenset[str]
    common: frozenset[str]
    groups: tuple[tuple[int, ...], ...]
    share: np.ndarray
    mass: np.ndarray | None


Factor = Callable[[Graded, dict[int, float]], dict[int, float]]
PairRule = Callable[["Context", np.ndarray], list[tuple[int, int]]]
Composite = Callable[["Context", Mapping[int, "ScoreParts"]], dict[int, "ScoreParts"]]
VoiceWeights = Callable[["Context"], Mapping[int, float]]


@dataclass(frozen=True)
class Extensions:
    """Rules from outside the product (benchmarks/lab): empty, the evaluation is the product's alone."""

    coverage: tuple[Factor, ...] = field(default=())
    quality: tuple[Factor, ...] = field(default=())
    voice_pairs: tuple[PairRule, ...] = field(default=())
    composite: tuple[Composite, ...] = field(default=())
    voice_weights: tuple[VoiceWeights, ...] = field(default=())

    def weights(self, ctx: Context) -> dict[int, float] | None:
        """Each answer's voice weight by the ``voice_weights`` rules (their product); None without any."""
        if not self.voice_weights:
            return None
        out: dict[int, float] = {}
        for rule in self.voice_weights:
            for i, w in rule(ctx).items():
                out[int(i)] = out.get(int(i), 1.0) * float(w)
        if len(out) == len(ctx.round.responses) and len(set(out.values())) <= 1:
            return None  # every voice alike: the evaluation is exactly the product's
        return out


NONE = Extensions()
