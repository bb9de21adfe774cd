"""SelectIT token scorer: the quality of an (instruction, response) pair from one model's own ratings.

From ../shared/seeds/selectit_token_scorer.md (Liu et al., 2024). For each
of the first k rating prompts of ``rp_file`` the model sees::

    <rating prompt>
    Instruction: <instruction>
    Response: <response>
    The answer is:

and the score of that prompt is the expected rating sum(i * P(i)) over the
rating tokens "1".."5" of the next-token distribution, renormalised over
them. With k > 1 the sample's score is mu / (1 + alpha * sigma) over the k
prompt scores (population standard deviation), clamped to the seed's 1..5
range; samples without an instruction or output score 3.0.

Over an OpenAI-compatible API (the embedded llama.cpp server included) the
prompt is the user turn and "The answer is:" is prefilled as the start of the
assistant's turn, so the first visible generated token is the seed's "next
token". Its ``top_logprobs`` give the distribution: a rating token missing
from them counts as probability 0 (it is below the smallest listed
alternative) and the rest are renormalised; a position where rating tokens
hold less than ``min_mass`` gives that prompt no score. A sample whose k
prompts all give none scores 3.0, with the reason kept. Rating tokens are
found with the model's tokenizer (``judge.tokens``).

The k x n prompts of a batch of n samples are sent concurrently (at most
``workers`` at a time: a server with one slot only queues the rest). Prompts over
``max_length`` tokens are truncated with a warning: the response is cut
first, then the instruction, so the rating prompt and "The answer is:" stay.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from consensus.params import check_fields, from_mapping, param
from judge.errors import InputError, JudgeConfigError
from judge.tokens import CharTokenizer, RatingTokens, Tokenizer
from lm.client import ChatClient, TokenLogprob
from lm.errors import LMError
from lm.untrusted import quote_untrusted
from storage.files import FileFormatError, read_yaml

log = logging.getLogger(__name__)

PREFILL = "The answer is:"
DEFAULT_SCORE = 3.0
RATING_RANGE = (1.0, 5.0)
DEFAULT_RP_FILE = Path(__file__).with_name("rating_prompts.txt")
_BOUNDARY_MARGIN = 2  # tokens: counts of joined pieces can differ by one at each seam


def _check_model(value: str, where: str) -> None:
    if value != "local" and not value.startswith(("http://", "https://")):
        raise JudgeConfigError(
            where,
            f"expected 'local' (the embedded LM) or the http(s) URL of an OpenAI-compatible "
            f"server, got {value!r}; Hugging Face model ids are not loaded in-process: "
            f"serve the model (e.g. with llama.cpp) and give its URL",
        )


@dataclass(frozen=True)
class SelectitConfig:
    """The seed's YAML (name, model, rp_file, k, alpha, max_length, batch_size) and the API's extras."""

    name: str = param("SelectitTokenScorer", "Identifier of the scorer (shown in logs).")
    model: str = param("local", "'local' (the embedded LM) or the http(s) URL of an OpenAI-compatible server.")
    served_model: str = param("", "Model name sent in requests; empty = the server's default.")
    api_key: str = param("", "NAME of the environment variable (or .env entry) holding the API key; empty = none.")
    rp_file: str = param("", "Rating prompts, one per line; empty = the shipped judge/rating_prompts.txt.")
    k: int = param(
        1, "Rating prompts per sample (the first k of rp_file); k > 1 adds the consistency penalty.", lo=1, hi=100
    )
    alpha: float = param(0.2, "Penalty on the spread across prompts: mu / (1 + alpha * sigma).", lo=0.0, hi=100.0)
    max_length: int = param(
        2048, "Most tokens in a prompt; longer ones lose the end of the response (warned).", lo=32, hi=1_000_000
    )
    batch_size: int = param(8, "Samples per batch; the k x n prompts of a batch are sent concurrently.", lo=1, hi=1024)
    top_logprobs: int = param(
        20, "Alternatives read at the answer position (OpenAI allows 20, llama.cpp more).", lo=1, hi=100
    )
    min_mass: float = param(
        0.05, "Least probability the rating tokens must hold at the answer position.", lo=0.0, hi=1.0
    )
    workers: int = param(
        0, "Concurrent requests at most; 0 = all k x n prompts of a batch at once (the seed's).", lo=0, hi=4096
    )
    timeout_s: float = param(120.0, "Seconds per HTTP request (queueing in the server counts).", lo=0.0, lo_open=True)

    def __post_init__(self) -> None:
        check_fields(self, "selectit")
        _check_model(self.model, "selectit.model")

    @property
    def rp_path(self) -> Path:
        return Path(self.rp_file) if self.rp_file else DEFAULT_RP_FILE


def load_selectit_config(path: str | Path | None) -> SelectitConfig:
    """The scorer's settings from the seed's YAML file (None: the defaults).

    A relative ``rp_file`` is looked up in the working directory, then next to the YAML file.
    """
    if path is None:
        return SelectitConfig()
    path = Path(path)
    try:
        data = read_yaml(path)
    except FileFormatError as exc:
        raise JudgeConfigError(exc.where, exc.problem) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise JudgeConfigError(str(path), "expected a mapping of settings (name, model, rp_file, k, alpha, ...)")
    data = {str(k): v for k, v in data.items()}
    for key in ("served_model", "api_key", "rp_file"):
        if data.get(key) is None and key in data:
            data[key] = ""
    rp = data.get("rp_file")
    if isinstance(rp, str) and rp and not Path(rp).is_absolute() and not Path(rp).exists():
        beside = path.parent / rp
        if beside.exists():
            data["rp_file"] = str(beside)
    try:
        return from_mapping(SelectitConfig, data, "selectit")
    except TypeError as exc:  # a value of a type the constraint table does not cover
        raise JudgeConfigError(str(path), str(exc)) from None


def load_rating_prompts(path: str | Path) -> tuple[str, ...]:
    """Rating prompts, one per line; blank lines and lines starting with '#' are skipped."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(str(path), f"cannot read the rating prompt file: {exc.strerror or exc}") from None
    prompts = tuple(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))
    if not prompts:
        raise InputError(str(path), "the rating prompt file holds no prompt")
    return prompts


# -- the pure core -------------------------------------------------------------------------------


def build_prompt(rating_prompt: str, instruction: str, response: str) -> str:
    """The user turn; ``PREFILL`` ("The answer is:") follows as the assistant's first words."""
    # the seed's layout; the response is untrusted: no role token or marker of it may reach the template
    return f"{rating_prompt}\nInstruction: {instruction}\nResponse: {quote_untrusted(response, limit=1 << 30)}"


def rating_distribution(top: Sequence[tuple[str, float]], tokens: RatingTokens) -> dict[int, float]:
    """P(rating) at one position from its (token, logprob) alternatives; forms of one rating are summed."""
    dist: dict[int, float] = {}
    for token, logprob in top:
        rating = tokens.rating_of(token)
        if rating is not None:
            dist[rating] = dist.get(rating, 0.0) + math.exp(logprob)
    return dist


def expected_rating(dist: Mapping[int, float]) -> float:
    """sum(i * P(i)) with P renormalised over the ratings present (a missing rating counts as 0)."""
    mass = sum(dist.values())
    if mass <= 0:
        raise ValueError("no probability on any rating")
    return sum(r * p for r, p in dist.items()) / mass


def read_rating(
    logprobs: Sequence[TokenLogprob] | None, tokens: RatingTokens, min_mass: float
) -> tuple[float | None, str | None]:
    """(expected rating, None) at the first visible generated token, or (None, why not)."""
    if not logprobs:
        return None, "the server returned no log-probabilities"
    for item in logprobs:
        if not item.token.strip():  # whitespace before the digit, or the end of the text
            continue
        dist = rating_distribution(item.top or ((item.token, item.logprob),), tokens)
        mass = sum(dist.values())
        if mass <= 0 or mass < min_mass:
            return None, f"rating tokens hold {mass:.3f} of the answer position (model wrote {item.token!r})"
        return expected_rating(dist), None
    return None, "the model gave no visible token"


def combine(scores: Sequence[float], alpha: float) -> float:
    """mu / (1 + alpha * sigma) (sigma with 1/k), clamped to 1..5; one score is returned as is."""
    if not scores:
        raise ValueError("combine needs at least one score")
    if len(scores) == 1:
        return float(scores[0])
    mu = sum(scores) / len(scores)
    sigma = math.sqrt(sum((s - mu) ** 2 for s in scores) / len(scores))
    lo, hi = RATING_RANGE
    return min(hi, max(lo, mu / (1.0 + alpha * sigma)))


def fit_prompt(
    rating_prompt: str, instruction: str, response: str, tokenizer: Tokenizer, max_length: int
) -> tuple[str, str, int | None]:
    """(instruction, response) cut so the prompt fits ``max_length`` tokens, and the original length when cut."""
    total = tokenizer.count(build_prompt(rating_prompt, instruction, response)) + tokenizer.count(PREFILL)
    if total <= max_length:
        return instruction, response, None
    excess = total - max_length + _BOUNDARY_MARGIN
    n_response = tokenizer.count(response)
    if n_response >= excess:
        return instruction, tokenizer.truncate(response, n_response - excess), total
    excess -= n_response
    n_instruction = tokenizer.count(instruction)
    return tokenizer.truncate(instruction, max(0, n_instruction - excess)), "", total


def sample_fields(sample: Mapping[str, Any]) -> tuple[str, str] | None:
    """(instruction, output) of a dataset record, Alpaca's optional ``input`` appended; None when invalid."""
    instruction, output, extra = sample.get("instruction"), sample.get("output"), sample.get("input")
    if not isinstance(instruction, str) or not instruction.strip():
        return None
    if not isinstance(output, str) or not output.strip():
        return None
    if isinstance(extra, str) and extra.strip():
        instruction = f"{instruction}\n\n{extra}"
    return instruction, output


# -- scoring ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleScore:
    id: Any
    score: float  # 1..5; 3.0 when nothing usable
    prompt_scores: tuple[float | None, ...] = ()  # per rating prompt; None: that prompt gave no rating
    reason: str | None = None  # why the score is the default, or why some prompt gave none
    truncated_from: int | None = None  # the prompt's token count before truncation
    valid: bool = True

    def record(self, details: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "score": self.score}
        if details:
            out.update(
                prompt_scores=list(self.prompt_scores),
                valid=self.valid,
                reason=self.reason,
                truncated_from=self.truncated_from,
            )
        return out

    @property
    def confidence(self) -> float:
        """The score mapped to [0, 1]: (score - 1) / 4."""
        return min(1.0, max(0.0, (self.score - 1.0) / 4.0))


@dataclass
class _Job:
    instruction: str
    response: str
    truncated_from: int | None
    scores: list[float | None] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


class SelectitScorer:
    """Scores samples with one chat client; build once, reuse for many samples."""

    def __init__(
        self,
        client: ChatClient,
        config: SelectitConfig,
        *,
        prompts: Sequence[str] | None = None,
        tokens: RatingTokens | None = None,
        tokenizer: Tokenizer | None = None,
        workers: int | None = None,
    ) -> None:
        self.client = client
        self.config = config
        self.workers = workers or config.workers or config.k * config.batch_size
        available = tuple(prompts) if prompts is not None else load_rating_prompts(config.rp_path)
        if len(available) < config.k:
            raise JudgeConfigError(
                "selectit.k", f"k = {config.k} but {config.rp_path} holds only {len(available)} rating prompt(s)"
            )
        self.prompts = available[: config.k]
        self.tokens = tokens or RatingTokens.by_surface()
        self.tokenizer = tokenizer or CharTokenizer()
        self._longest = max(self.prompts, key=lambda p: self.tokenizer.count(p))
        floor = self.tokenizer.count(build_prompt(self._longest, "", "")) + self.tokenizer.count(PREFILL)
        if floor + _BOUNDARY_MARGIN >= config.max_length:
            raise JudgeConfigError(
                "selectit.max_length",
                f"{config.max_length} tokens cannot hold the rating prompt itself ({floor} tokens)",
            )

    def _rate(self, rating_prompt: str, instruction: str, response: str) -> tuple[float | None, str | None]:
        messages = [{"role": "user", "content": build_prompt(rating_prompt, instruction, response)}]
        try:
            completion = self.client.complete(
                messages, max_tokens=4, temperature=0.0, seed=0, top_logprobs=self.config.top_logprobs, prefill=PREFILL
            )
        except LMError as exc:
            return None, f"call failed: {exc}"
        return read_rating(completion.logprobs, self.tokens, self.config.min_mass)

    def _prepare(self, sample_id: Any, instruction: str, response: str) -> _Job:
        instruction, response, before = fit_prompt(
            self._longest, instruction, response, self.tokenizer, self.config.max_length
        )
        if before is not None:
            log.warning(
                "%s: sample %r: prompt of %d tokens exceeds max_length %d; truncated (response first)",
                self.config.name,
                sample_id,
                before,
                self.config.max_length,
            )
        return _Job(instruction, response, before)

    def score(self, samples: Sequence[Any], *, progress: bool = False) -> list[SampleScore]:
        """One ``SampleScore`` per sample, in order; ``id`` is the sample's "id" or its index."""

        k, n = self.config.k, self.config.batch_size
        out: list[SampleScore] = []
        with (
            ThreadPoolExecutor(max_workers=min(self.workers, k * n)) as pool,
            tqdm(total=len(samples), desc=self.config.name, unit="sample", disable=not progress) as bar,
        ):
            for start in range(0, len(samples), n):
                batch = samples[start : start + n]
                ids = [s.get("id", start + i) if isinstance(s, Mapping) else start + i for i, s in enumerate(batch)]
                fields = [sample_fields(s) if isinstance(s, Mapping) else None for s in batch]
                jobs = {i: self._prepare(ids[i], *f) for i, f in enumerate(fields) if f is not None}
                calls = [(i, p) for i in jobs for p in self.prompts]
                results = list(
                    pool.map(lambda c, jobs=jobs: self._rate(c[1], jobs[c[0]].instruction, jobs[c[0]].response), calls)
                )
                for (i, _), (value, reason) in zip(calls, results):
                    jobs[i].scores.append(value)
                    if reason:
                        jobs[i].reasons.append(reason)
                for i, sample_id in enumerate(ids):
                    out.append(self._finish(sample_id, jobs.get(i)))
                bar.update(len(batch))
        return out

    def _finish(self, sample_id: Any, job: _Job | None) -> SampleScore:
        if job is None:
            return SampleScore(sample_id, DEFAULT_SCORE, (), "missing or empty 'instruction' or 'output'", None, False)
        usable = [s for s in job.scores if s is not None]
        reason = "; ".join(dict.fromkeys(job.reasons)) or None
        if not usable:
            return SampleScore(sample_id, DEFAULT_SCORE, tuple(job.scores), reason, job.truncated_from, False)
        return SampleScore(
            sample_id, combine(usable, self.config.alpha), tuple(job.scores), reason, job.truncated_from, True
        )

    def score_pair(self, instruction: str, response: str, sample_id: Any = 0) -> SampleScore:
        return self.score([{"id": sample_id, "instruction": instruction, "output": response}])[0]

    def confidence(self, prompt: str, response_text: str) -> float:
        """The SelectIT score of (prompt, response) in [0, 1]; 0.5 when nothing usable came back."""
        return self.score_pair(prompt, response_text).confidence
