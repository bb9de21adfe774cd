"""LM_SCORE's yes/no mode: P(yes) from the first answer token, calibrated per model and prompt.

The content and the question are asked as a plain yes/no question
(``yesno_prompt``). One call at temperature 0 with ``top_logprobs`` gives
the distribution of the first visible answer token; every surface form of
"yes" ("Yes", " yes", "YES", "yes.") and of "no" is summed. The raw signal
is the log-odds ``z = log P(yes) - log P(no)``.

Log-odds are not comparable across models and prompts (the seed's reason
for setting this design aside), so they are calibrated: a fitted logistic
map ``p = sigmoid(a * z + b)`` (Platt scaling: monotone, two parameters, a
temperature ``1/a`` and a bias ``b``) per (model, prompt), fitted on a
labeled set (``validator lm calibrate``) and stored in ``calibrations.json``.
The score is ``round(10 * p)``: after calibration a 7 means "about 70% of
such answers are yes" whatever model produced it. A model with no stored
calibration uses the identity map (``p = P(yes) / (P(yes) + P(no))``) and a
warning says so once.

A form missing from the top alternatives: its probability is at most that of
the least likely listed token, and at most the mass not listed; the smaller
of the two bounds is used (so one listed "Yes" at 0.9 with "No" absent gives
log-odds of about log(0.9 / p_min), not infinity). Neither form listed, or
both together below 5% of the mass: the answer did not start with yes or no,
and LM_SCORE falls back to 5 like the other modes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from storage.files import write_text_atomic

log = logging.getLogger(__name__)

Z_LIMIT = 30.0  # log-odds are clipped to +-30 (p within 1e-13 of 0 or 1)
MIN_MASS = 0.05
BUILTIN_CALIBRATIONS = Path(__file__).with_name("calibrations.json")

YES_FORMS = frozenset({"yes"})
NO_FORMS = frozenset({"no"})


def yesno_prompt(content_parts: Sequence[str], question: str) -> str:
    content = "\n".join(content_parts)
    return f"""{content}

Question: {question}
Answer with yes or no."""


PROMPT_ID = hashlib.sha256(yesno_prompt(["{content}"], "{question}").encode()).hexdigest()[:12]


def _form(token: str) -> str:
    return token.strip().strip(".,!:;\"'*`").lower()


@dataclass(frozen=True)
class YesNo:
    p_yes: float  # summed over surface forms (missing: the bound described above)
    p_no: float
    listed_mass: float  # probability held by the listed alternatives
    estimated: str | None  # "yes" or "no" when that side was missing and bounded

    @property
    def log_odds(self) -> float:
        z = math.log(max(self.p_yes, 1e-300)) - math.log(max(self.p_no, 1e-300))
        return max(-Z_LIMIT, min(Z_LIMIT, z))


class NotYesNo(ValueError):
    """The answer token is neither yes nor no."""


def yes_no_probabilities(alternatives: Iterable[tuple[str, float]]) -> YesNo:
    """P(yes) and P(no) from one position's (token, logprob) alternatives."""
    alternatives = list(alternatives)
    probs = [math.exp(lp) for _, lp in alternatives]
    p_yes = sum(p for (tok, _), p in zip(alternatives, probs) if _form(tok) in YES_FORMS)
    p_no = sum(p for (tok, _), p in zip(alternatives, probs) if _form(tok) in NO_FORMS)
    listed = min(1.0, sum(probs))
    if p_yes + p_no < MIN_MASS:
        raise NotYesNo(f"yes/no forms hold {p_yes + p_no:.3f} of the answer token's probability")
    estimated = None
    if p_yes == 0.0 or p_no == 0.0:
        bound = min(min(probs), max(1.0 - listed, 0.0)) if probs else 0.0
        bound = max(bound, 1e-13)
        estimated = "yes" if p_yes == 0.0 else "no"
        p_yes, p_no = (bound, p_no) if p_yes == 0.0 else (p_yes, bound)
    return YesNo(p_yes, p_no, listed, estimated)


@dataclass(frozen=True)
class Calibration:
    """``p = sigmoid(a * z + b)`` for one model and prompt; identity is a=1, b=0."""

    model: str
    prompt: str = PROMPT_ID
    a: float = 1.0
    b: float = 0.0
    n: int = 0  # items it was fitted on (0: identity, not fitted)
    source: str = ""

    @property
    def fitted(self) -> bool:
        return self.n > 0

    def probability(self, z: float) -> float:
        t = self.a * z + self.b
        return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))

    def score(self, z: float) -> tuple[int, float]:
        """(0..10 score, 10 * p): the score is 10p rounded half up."""
        expected = 10.0 * self.probability(z)
        return int(math.floor(expected + 0.5)), expected


def fit_calibration(log_odds: Sequence[float], labels: Sequence[bool], model: str, source: str = "") -> Calibration:
    """Maximum-likelihood logistic fit of labels on log-odds (unregularised Platt scaling).

    Needs both labels present; perfectly separated data has no finite
    maximum, so the fit is lightly regularised (C=100) to stay finite.
    """
    # lazy: start-up cost, scikit-learn takes 4.7 s to import
    from sklearn.linear_model import LogisticRegression

    z = np.asarray(log_odds, dtype=float).reshape(-1, 1)
    y = np.asarray(labels, dtype=int)
    if len(z) != len(y) or len(set(y.tolist())) < 2:
        raise ValueError("calibration needs matching log-odds and labels, with both yes and no items")
    model_fit = LogisticRegression(C=100.0, solver="lbfgs", max_iter=1000).fit(z, y)
    return Calibration(
        model=model, a=float(model_fit.coef_[0, 0]), b=float(model_fit.intercept_[0]), n=len(y), source=source
    )


def load_calibrations(path: str | Path) -> dict[tuple[str, str], Calibration]:
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read calibrations: {exc}") from exc
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a JSON list of calibrations")
    out = {}
    for i, entry in enumerate(entries):
        try:
            cal = Calibration(**entry)
            float(cal.a), float(cal.b)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: entry {i}: {exc}") from exc
        out[(cal.model, cal.prompt)] = cal
    return out


def save_calibration(path: str | Path, calibration: Calibration) -> None:
    """Add or replace one (model, prompt) entry in a calibrations file."""
    path = Path(path)
    entries = load_calibrations(path)
    entries[(calibration.model, calibration.prompt)] = calibration
    rows = [asdict(c) for _, c in sorted(entries.items())]
    write_text_atomic(path, json.dumps(rows, indent=2) + "\n")


_warned: set[str] = set()
_lock = threading.Lock()


def calibration_for(
    model: str | None, extra: str | Path | None = None, builtin: Mapping[tuple[str, str], Calibration] | None = None
) -> Calibration:
    """The calibration of ``model`` for this prompt: a user file first, then the shipped ones, else identity."""
    name = model or "default"
    tables = [load_calibrations(extra)] if extra else []
    tables.append(dict(builtin) if builtin is not None else load_calibrations(BUILTIN_CALIBRATIONS))
    for table in tables:
        if (name, PROMPT_ID) in table:
            return table[(name, PROMPT_ID)]
    with _lock:
        if name not in _warned:
            _warned.add(name)
            log.warning(
                "LM_SCORE yesno: no calibration for model %r and prompt %s; using P(yes)/(P(yes)+P(no)) "
                "uncalibrated (fit one with `validator lm calibrate`)",
                name,
                PROMPT_ID,
            )
    return Calibration(model=name)
