"""LM_SCORE: how strongly the content answers a yes/no question with yes, as an integer 0..10.

Specified by ``../shared/seeds/lm_score_design.md``: the prompt below is the
seed's, byte for byte (a test compares it with the seed when the seed is
present); content parts are joined by "\n"; 5 when the model gives nothing
usable. Three modes (``LMConfig.score_mode``):

- ``sampled``: the seed's design. The answer text is parsed (robust to
  "Score: 8", "8/10", "**8**", surrounding text, think blocks) through checked
  generation with retries, one sample at temperature 0. The seed's ENSEMBLE (3 samples, AGGREGATION
  maj or avg) was retired from the product in commit 663e260 (2026-11-26) (issue 34: off by default, and it does
  nothing in the default yesno mode); the lab keeps it (``benchmarks.lm_score.score_ensemble``).
- ``logprob``: one short call with ``top_logprobs``; the expected score
  sum(s * P(s)) over the score tokens of the first generated token,
  renormalised. When the tokenizer writes numbers digit by digit, "10" is "1"
  then "0": a second call prefilled with "1" reads P("0" | "1") and splits
  P("1") between 1 and 10.
- ``yesno``: the content asked as a plain yes/no question; P(yes) against
  P(no) from the first answer token, mapped to 0..10 through a calibration
  fitted per model and prompt (``lm/yesno.py``). Not the seed's prompt: the
  seed set this design aside because raw probabilities are not comparable
  across models; the calibration is the answer to that (docs/lm.md).

Every fallback to 5 is counted in ``ScoreStats`` and logged.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from lm import yesno
from lm.checked_generation import Checked, CheckFailed, generate_checked, strip_think
from lm.client import ChatClient, Completion, Message
from lm.config import LMConfig
from lm.errors import LMError

log = logging.getLogger(__name__)

FALLBACK = 5
THINK_PREFILL = "<think>Okay, I think I have finished thinking</think>"


def lm_score_prompt(content_parts: Sequence[str], question: str) -> str:
    """The seed's LM_SCORE prompt, exactly."""
    content = "\n".join(content_parts)

    prompt = f"""Based on the following content, answer this yes/no question: {question}

Content: 
{content}

Provide a score from 0 to 10 based on your confidence in the answer:
- 10 = strongly yes, definitely true
- 7-9 = probably yes, likely true
- 5-6 = uncertain, could go either way
- 3-4 = probably no, likely false
- 0-2 = strongly no, definitely false

Provide only a single number from 0 to 10.
Score:"""  # noqa: W291 - "Content: " keeps the seed prompt's trailing space
    return prompt


_PATTERNS = (
    re.compile(r"^\s*\**\s*(\d{1,2})\s*\**\s*\.?\s*$"),  # the whole answer is a number (maybe bold)
    re.compile(r"score\s*(?:is|of|=|:)?\s*\**\s*(\d{1,2})(?!\d)", re.IGNORECASE),  # "Score: 8", "score of **7**"
    re.compile(r"(?<!\d)(\d{1,2})\s*(?:/|out of)\s*10(?!\d)", re.IGNORECASE),  # "8/10", "7 out of 10"
    re.compile(r"\*\*\s*(\d{1,2})\s*\*\*"),  # "**8**"
)


def parse_score(text: str) -> int:
    """The 0..10 score in a model's answer; raises ``CheckFailed`` when there is none or it is ambiguous."""
    body = strip_think(text).strip()
    if not body:
        raise CheckFailed("empty answer")
    for pattern in _PATTERNS:
        found = [int(m) for m in pattern.findall(body)]
        found = [v for v in found if 0 <= v <= 10]
        if found:
            return found[-1] if pattern is _PATTERNS[1] else found[0]
    numbers = {int(m) for m in re.findall(r"(?<!\d\.)(?<!\d)(\d{1,2})(?!\d|\.\d)", body)}
    numbers = {v for v in numbers if 0 <= v <= 10}
    if len(numbers) == 1:
        return numbers.pop()
    if not numbers:
        raise CheckFailed("no number from 0 to 10 in the answer")
    raise CheckFailed(f"ambiguous: several numbers ({', '.join(map(str, sorted(numbers)))})")


@dataclass
class ScoreStats:
    """Counters over a process's LM_SCORE calls (fallbacks are what an operator watches)."""

    scores: int = 0
    fallbacks: int = 0
    attempts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, attempts: int, fallback: bool) -> None:
        with self._lock:
            self.scores += 1
            self.attempts += attempts
            self.fallbacks += int(fallback)


STATS = ScoreStats()


@dataclass(frozen=True)
class ScoreResult:
    score: int  # 0..10
    expected: float | None  # the expectation in logprob mode (before rounding)
    samples: tuple[int | None, ...]  # the sample's parsed value (None: it failed)
    fallback: bool  # True when the score is the 5 of "nothing usable"
    mode: str
    raw: tuple[str | None, ...] = ()
    log_odds: float | None = None  # yesno mode: log P(yes) - log P(no) before calibration


def _prefill(config: LMConfig) -> str | None:
    # The seed's text, then the blank line chat templates put after a closed
    # think block: without it non-reasoning models (Qwen2.5) end the turn
    # right after "</think>".
    return None if config.thinking else THINK_PREFILL + "\n\n"


def _max_tokens(config: LMConfig) -> int:
    return 1024 if config.thinking else 16


def sample_score(
    client: ChatClient, prompt: str, config: LMConfig, *, seed: int = 0, temperature: float = 0.0
) -> Checked[int]:
    """One sampled score of the seed's prompt, checked, with retries (the lab's ENSEMBLE draws several:
    ``benchmarks.lm_score.score_ensemble``)."""
    return generate_checked(
        client,
        parse_score,
        None,
        prompt,
        config.retries,
        feedback=False,
        max_tokens=_max_tokens(config),
        temperature=temperature,
        seed=seed,
        prefill=_prefill(config),
    )


def score_sampled(client: ChatClient, prompt: str, config: LMConfig, *, seed: int = 0) -> ScoreResult:
    result = sample_score(client, prompt, config, seed=seed)
    samples = (result.value if result.ok else None,)
    raw = tuple(a.raw for a in result.attempts)
    score = samples[0] if samples[0] is not None else FALLBACK
    return ScoreResult(score, None, samples, samples[0] is None, "sampled", raw)


def _score_token(token: str) -> int | None:
    t = token.strip()
    if t.isdigit() and len(t) <= 2 and int(t) <= 10 and (t == "0" or not t.startswith("0")):
        return int(t)
    return None


def _distribution(top: Sequence[tuple[str, float]]) -> dict[int, float]:
    """P(score) from one position's top log-probabilities (surface forms merged: "7", " 7")."""
    dist: dict[int, float] = {}
    for token, logprob in top:
        value = _score_token(token)
        if value is not None:
            dist[value] = dist.get(value, 0.0) + math.exp(logprob)
    return dist


class NoLogprobs(CheckFailed):
    """The server answered without log-probabilities."""


def _answer_position(completion: Completion) -> tuple[int, Sequence[tuple[str, float]]]:
    """The first generated position that is not whitespace, and its top alternatives."""
    if not completion.logprobs:
        raise NoLogprobs("the server returned no log-probabilities")
    for i, item in enumerate(completion.logprobs):
        if item.token.strip():
            return i, item.top or ((item.token, item.logprob),)
    raise CheckFailed("the answer holds no visible token")


def score_logprob(client: ChatClient, prompt: str, config: LMConfig, *, top: int = 20) -> ScoreResult | None:
    """Expected score from the distribution at the answer's first visible token.

    Up to 3 tokens are generated so leading whitespace is skipped. With
    THINKING=t no prefill is sent: a reasoning model would start with
    "<think>" and fall back, so use THINKING=f with those. Returns None when
    the server gives no log-probabilities (the caller then samples).
    """
    messages: list[Message] = [{"role": "user", "content": prompt}]
    prefill = _prefill(config)
    raw: list[str | None] = []
    try:
        first = client.complete(messages, max_tokens=3, temperature=0.0, top_logprobs=top, prefill=prefill)
        raw.append(first.text)
        pos, alternatives = _answer_position(first)
        dist = _distribution(alternatives)
        mass = sum(dist.values())
        if mass < 0.05:
            raise CheckFailed(f"score tokens hold only {mass:.3f} of the answer token's probability")
        if 1 in dist and 10 not in dist and dist[1] / mass >= 0.01:
            # digits are tokenised singly: is the "1" the start of "10"?
            assert first.logprobs is not None
            if first.logprobs[pos].token.strip() == "1" and pos + 1 < len(first.logprobs):
                nxt = first.logprobs[pos + 1].top  # the model wrote "1": the next position says what follows
            else:
                second = client.complete(
                    messages, max_tokens=1, temperature=0.0, top_logprobs=top, prefill=(prefill or "") + "1"
                )
                raw.append(second.text)
                nxt = second.logprobs[0].top if second.logprobs else ()
            p_zero = sum(math.exp(lp) for tok, lp in nxt if tok == "0")
            p_one = dist.pop(1)
            dist[10] = p_one * p_zero
            dist[1] = p_one * (1.0 - p_zero)
            mass = sum(dist.values())
    except NoLogprobs:
        return None
    except (LMError, CheckFailed) as exc:
        log.warning("LM_SCORE logprob mode fell back to %d: %s", FALLBACK, exc)
        return ScoreResult(FALLBACK, None, (None,), True, "logprob", tuple(raw))
    expected = sum(value * p for value, p in dist.items()) / mass
    score = int(math.floor(expected + 0.5))
    return ScoreResult(score, expected, (score,), False, "logprob", tuple(raw))


def score_yesno(
    client: ChatClient, content_parts: Sequence[str], question: str, config: LMConfig, *, top: int = 20
) -> ScoreResult | None:
    """Calibrated P(yes) as a 0..10 score; None when the server gives no log-probabilities."""

    messages: list[Message] = [{"role": "user", "content": yesno.yesno_prompt(content_parts, question)}]
    raw: list[str | None] = []
    try:
        completion = client.complete(
            messages, max_tokens=3, temperature=0.0, top_logprobs=top, prefill=_prefill(config)
        )
        raw.append(completion.text)
        _, alternatives = _answer_position(completion)
        probs = yesno.yes_no_probabilities(alternatives)
    except NoLogprobs:
        return None
    except (LMError, CheckFailed, yesno.NotYesNo) as exc:
        log.warning("LM_SCORE yesno mode fell back to %d: %s", FALLBACK, exc)
        return ScoreResult(FALLBACK, None, (None,), True, "yesno", tuple(raw))
    calibration = yesno.calibration_for(getattr(client, "model", None), config.calibration_file)
    score, expected = calibration.score(probs.log_odds)
    return ScoreResult(score, expected, (score,), False, "yesno", tuple(raw), log_odds=probs.log_odds)


def lm_score_detailed(
    client: ChatClient, *content_parts: str, question: str, config: LMConfig | None = None, seed: int = 0
) -> ScoreResult:
    if not content_parts:
        raise ValueError("LM_SCORE needs at least one content part and a question")
    config = config or LMConfig()
    prompt = lm_score_prompt(content_parts, question)
    result: ScoreResult | None
    if config.score_mode in ("logprob", "yesno"):
        if config.score_mode == "logprob":
            result = score_logprob(client, prompt, config)
        else:
            result = score_yesno(client, content_parts, question, config)
        if result is None:  # the server gives no log-probabilities: the seed's sampled mode instead
            log.info("LM_SCORE: %s returned no log-probabilities; using sampled mode", client.name)
            result = score_sampled(client, prompt, config, seed=seed)
    else:
        result = score_sampled(client, prompt, config, seed=seed)
    STATS.add(len(result.raw), result.fallback)
    if result.fallback:
        label = getattr(client, "label", None)  # the stage and miner (lm.client.labelled)
        log.warning(
            "LM_SCORE%s fell back to %d after %d attempt(s) (question %r)",
            f" ({label})" if label else "",
            FALLBACK,
            len(result.raw),
            question[:80],
        )
    return result


_DEFAULT: tuple[ChatClient, LMConfig] | None = None


def configure(client: ChatClient | None, config: LMConfig | None = None) -> None:
    """Set (or clear, with None) the client that ``LM_SCORE`` uses when none is passed."""
    global _DEFAULT
    _DEFAULT = None if client is None else (client, config or LMConfig())


def LM_SCORE(
    *content_parts: str,
    question: str,
    client: ChatClient | None = None,  # noqa: N802
    config: LMConfig | None = None,
) -> int:
    """The seed's LM_SCORE: an integer 0 (no) .. 10 (yes); 5 when nothing usable came back.

    Uses ``client`` or the one set by ``configure`` (``validator.lm_session.lm_scoring``
    sets it from SERVER_URL, or the embedded local LM, for the duration of a block).
    """
    if client is None:
        if _DEFAULT is None:
            raise RuntimeError(
                "LM_SCORE has no client: pass client=..., or call lm.lm_score.configure(client) "
                "(validator.lm_session.lm_scoring() does this from the settings)"
            )
        client, default_config = _DEFAULT
        config = config or default_config
    return lm_score_detailed(client, *content_parts, question=question, config=config).score
