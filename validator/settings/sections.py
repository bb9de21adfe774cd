"""The validator's own settings sections: frozen dataclasses declared with ``param`` limits.

Each section is a table of the TOML file (``[embedding]``, ``[lm]``, ...) and
a group of ``VALIDATOR_<SECTION>__<FIELD>`` variables. A field may also carry
aliases: the unprefixed names of the seed (``SERVER_URL``, ``MODEL``, ...),
the standard AWS names and the older ``VALIDATOR_*`` names, read by
``validator.settings.loader`` in the order declared here. Secret fields are
read only from the environment or ``.env``, never from a file, and never
appear in ``repr``. The sections hold values only: nothing here reads the
environment (``loader`` does) or builds a client; ``lm_config`` and
``s3_settings`` turn a section into the plain values ``lm/`` and
``storage/`` take as arguments.

This module holds the evaluation's sections (``embedding``, ``lm``, ``daemon``; with ``consensus``,
``emissions`` and ``input`` they are ``Recorded``, named by ``RECORDED``), ``output`` (what a round draws),
``Settings`` (every section) and ``SECTIONS``.
The edges' sections (``lm_client``, ``s3``, ``paths``, ``chain``) are ``validator.settings.edges``;
how a field is declared (``setting``, ``like``, ``aliases_of``, ``secret_fields``) is
``validator.settings.fields``. Both are re-exported here.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from consensus.config import ConsensusConfig
from consensus.embedder import LongTextPolicy
from consensus.errors import ConfigError
from consensus.params import Deprecated, check_fields, param, plain, section_type
from emissions.config import EmissionsConfig
from lm.config import Endpoint, LMConfig, Secret
from storage.s3_settings import S3Settings
from tasks.source import DEFAULT_CONFIGS, DEFAULT_FAMILIES
from validator.records.round_input import InputLimits
from validator.settings.edges import ChainSettings, CommitteeSecret, LMClientSettings, PathsSettings, S3Section
from validator.settings.fields import aliases_of, like, retired, secret_fields, setting  # noqa: F401 - re-exported for callers


@dataclass(frozen=True)
class EmbeddingSettings:
    runtime: str = param("openvino", choices=("onnx", "openvino", "torch"))
    """Embedding runtime: openvino (OpenVINO fp32 on the ONNX export, default), onnx (ONNX Runtime fp32 on the same export) or torch (fp32 reference)."""
    threads: int = setting(0, lo=0, aliases=("VALIDATOR_THREADS",))
    """Threads for the embedding runtime; 0 = one per CPU core."""
    long_texts: str = param("sample", choices=("sample", "full"))
    """Texts over one window: sample (bounded cost, spans the text) or full (every word piece)."""
    token_budget: int = param(256, lo=1, hi=100_000)
    """Word pieces embedded per long text in sample mode."""
    sample_window: int = param(62, lo=1, hi=254)
    """Word pieces per sampled window (plus [CLS] and [SEP])."""
    window_seed: int = param(0, lo=-(2**63), hi=2**63 - 1)
    """Seed mixed into sampled window offsets; a private value makes them unpredictable."""

    def policy(self):
        """The long-text policy the embedder applies (``consensus.embedder.LongTextPolicy``)."""

        return LongTextPolicy(
            mode=self.long_texts,
            token_budget=self.token_budget,
            sample_window=self.sample_window,
            seed=self.window_seed,
        )

    def __post_init__(self) -> None:
        check_fields(self, "embedding")
        if self.token_budget < self.sample_window:
            raise ConfigError("embedding.token_budget", f"must be >= sample_window ({self.sample_window})")


@dataclass(frozen=True)
class LMRoundSettings:
    enabled: bool = False
    """Use an LM in rounds (polarity, narrative): SERVER_URL, or the embedded local LM. --lm / --no-lm override it; daemon and round default to true, replay to false."""
    polarity: bool = True
    """With the LM on: classify the dominant cluster's answers as yes / no / unclear."""
    polarity_from_factual: bool = True
    """On a yes/no prompt with the factual check on, the polarity labels are the yes or no of the factual check's short answers: one LM call per member instead of two (false: the LM_SCORE classifier's own calls)."""
    narrative: bool = True
    """With the LM on: write the narrative with the LM (template on failure)."""
    workers: int = param(8, lo=1, hi=64)
    """Concurrent LM checks per round."""
    reference_judging: bool = True
    """With the LM on and a round reference answer: judge each answer against it and blend it into the composite (consensus.weights.weight_reference)."""
    reference_mode: str = param("judge", choices=("judge", "short"))
    """How answers are judged against the reference: judge (LLM-as-a-judge, 1..5, every answered response) or short (each member's short answer from the factual check compared with the reference's by rule: no call of its own; the default with the embedded LM)."""
    factual: bool = True
    """With the LM on: the LM writes each dominant-cluster answer in a few words; an answer the majority does not share leaves consensus (lm/factual.py, docs/validity.md)."""
    round_budget_s: float = param(30.0, lo=0.0)
    """Seconds of LM checks per round (polarity, factual, judging); checks not finished by then are recorded as skipped, never carried over. 0 = no limit (the default of `validator replay`, which is offline)."""

    # Rules retired from the round (issue 34): a settings file or variable asking for one gets one line; a record
    # holding one still reads (consensus.params.from_plain drops it).
    DEPRECATED: ClassVar[dict[str, Deprecated]] = {
        "grade": retired(
            "the LM grade lives in the lab (python -m benchmarks.lm_grades; docs/validity.md, 'LM grades'); the pay "
            "never read it",
            False,
        ),
        "selectit_confidence": retired(
            "a miner that reports no confidence is scored as one without (docs/consensus.md); SelectIT itself "
            "stays: validator selectit, docs/judging.md",
            False,
        ),
        "factual_on_explanations": retired(
            "the factual check skips a prompt that asks for an explanation and has no reference (measured at "
            "commit 46996aa: docs/lm.md)",
            False,
        ),
    }

    def __post_init__(self) -> None:
        check_fields(self, "lm")


@dataclass(frozen=True)
class DaemonSettings:
    interval_s: float = param(30.0, lo=0.0)
    """Seconds from one round's start to the next (a slow round starts the next at once); with the embedded miner pool the default is 0, back to back."""
    quorum: int = param(3, lo=2)
    """Fewest usable answers for a round to count; below it the round is stored as no quorum and pays nobody."""
    request_timeout_s: float = param(30.0, lo=0.001, hi=3600)
    """Per-miner request timeout (a miner's own timeout_s in the miners file wins)."""
    round_deadline_s: float = param(60.0, lo=0.001, hi=7200)
    """Deadline for all miners' answers in a round."""
    max_answer_chars: int = param(20_000, lo=1, hi=1_000_000)
    """A longer answer fails as oversized."""
    max_tokens: int = param(200, lo=1, hi=100_000)
    """max_tokens asked of miners."""
    moving_average_alpha: float = param(0.02, lo=0.0, hi=1.0, lo_open=True)
    """Weight of the newest tick in each miner's EMA score (0.02: about 110 ticks, some 55 minutes at 30 s a tick, for a newcomer to reach 90% of its weight; at 0.1 the final weights rested on some 20 answers and ranked the development set 0.04 below its per-round figure, benchmarks/journal/validity.md "Final weights against ticks and memory")."""
    metrics_port: int = param(9478, lo=-1, hi=65535)
    """Port of the Prometheus endpoint on 127.0.0.1, fixed so Prometheus finds a restarted daemon (a second daemon on one machine needs another); 0 = a free port, -1 = off."""
    round_prefix: str = "round-"
    """Round ids are this prefix and a 6-digit sequence number."""
    miners_file: str = ""
    """Miners file (TOML or YAML); empty = the embedded local miner pool."""
    prompts_file: str = ""
    """Prompt source (JSONL, CSV or InstructLab qna.yaml), asked in a secret order, each once per pass, beside tasks ([tasks] share); empty = every round asks a task (with tasks off: six built-in prompts, never in chain mode)."""
    spool_dir: str = ""
    """Local spool for a remote store that is down; empty = <cache>/spool/<store hash>."""
    canaries_file: str = ""
    """Canary prompts with reference answers (JSONL, CSV or qna.yaml) mixed into the rounds; empty = none (docs/daemon.md)."""
    canary_rate: float = param(0.1, lo=0.0, hi=1.0)
    """Share of rounds that ask a canary (seeded by canary_seed and the committees' secret)."""
    canary_seed: int = param(0, lo=-(2**63), hi=2**63 - 1)
    """Seed of the canary schedule; a private value makes it unpredictable."""
    committee_size: int = param(16, lo=0, hi=100_000)
    """Miners per committee: each tick splits the miners into committees of about this size, each asked its own prompt (one round each; docs/daemon.md); 0 or fewer than twice as many miners = one committee, everyone in one round."""
    committee_links: bool = True
    """Miners the ledger has linked as one operator (identity persistence) are drawn into different committees, like the hotkeys of one declared entity (docs/daemon.md)."""
    canary_alpha: float = param(0.3, lo=0.0, hi=1.0, lo_open=True)
    """Weight of the newest canary round in each miner's canary accuracy (an EMA over canary rounds, which scales its weight)."""

    def __post_init__(self) -> None:
        check_fields(self, "daemon")
        if any(c in self.round_prefix for c in "\x00\n\r") or len(self.round_prefix) > 64:
            raise ConfigError("daemon.round_prefix", "at most 64 characters, no control characters")


DEFAULT_TASK_FAMILIES = ",".join(DEFAULT_FAMILIES)


@dataclass(frozen=True)
class TaskSettings:
    enabled: bool = True
    """Mix verifiable tasks (reasoning-gym generators, seeded by the committees' secret and the round; docs/daemon.md "Tasks") into the daemon's rounds; a task round pays for correctness as its verifier decides."""
    families: str = DEFAULT_TASK_FAMILIES
    """Task families asked, comma-separated (reasoning-gym names; the default set: small settings whose answers cannot be guessed, docs/daemon.md "Tasks"); a round's family is drawn from these."""
    share: float = param(0.5, lo=0.0, hi=1.0)
    """Share of rounds that ask a task when a prompt source is given (daemon.prompts_file); without one every round asks a task."""
    config: str = ""
    """Generator settings per family as a JSON object (`{"chain_sum": {"min_terms": 3, "max_terms": 6}}`): difficulty and ranges; a family named here takes exactly this object (`{}` = its generator's defaults), the others the product's default config (tasks/source.py DEFAULT_CONFIGS) or their generator's."""

    def __post_init__(self) -> None:
        check_fields(self, "tasks")
        if not self.family_names():
            raise ConfigError("tasks.families", "name at least one task family")
        self.configs()

    def family_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.strip() for f in self.families.split(",") if f.strip()))

    def configs(self) -> dict[str, dict[str, Any]]:
        """``config`` parsed: family -> generator settings (``ConfigError`` when it is not such an object)."""
        defaults = {f: dict(DEFAULT_CONFIGS[f]) for f in self.family_names() if f in DEFAULT_CONFIGS}
        if not self.config.strip():
            return defaults
        try:
            value = json.loads(self.config)
        except ValueError as exc:
            raise ConfigError("tasks.config", f"not JSON: {exc}") from None
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise ConfigError("tasks.config", "a JSON object of family -> object of generator settings")
        unknown = sorted(set(value) - set(self.family_names()))
        if unknown:
            raise ConfigError("tasks.config", f"settings for a family not in tasks.families: {', '.join(unknown)}")
        return defaults | value


@dataclass(frozen=True)
class OutputSettings:
    heatmap: bool = True
    """Render the similarity heatmap PNG of each round (`validator round` without a store: off)."""

    def __post_init__(self) -> None:
        check_fields(self, "output")


@dataclass(frozen=True)
class Recorded:
    """The sections that decide a round's numbers: every record keeps them (``validator.records.recorded_config``)."""

    consensus: ConsensusConfig = field(default_factory=ConsensusConfig)
    """The rules of one round's evaluation, one table per stage (consensus/config.py)."""
    emissions: EmissionsConfig = field(default_factory=EmissionsConfig)
    """How a round's pool is split (emissions/config.py)."""
    input: InputLimits = field(default_factory=InputLimits)
    """What a round may hold (validator/records/round_input.py)."""
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    """How answers are embedded."""
    lm: LMRoundSettings = field(default_factory=LMRoundSettings)
    """What the LM does in a round."""
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    """How the daemon asks its miners and keeps its ledger."""

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """The recorded sections' JSON form (stored in every record, hashed into replay ids): section -> setting
        -> value; the consensus sections' settings by their own names (``consensus.params.plain``)."""
        return {name: plain(getattr(self, name)) for name in RECORDED}


@dataclass(frozen=True)
class Settings(Recorded):
    """Every section, validated: the recorded ones (``Recorded``), then how to reach servers, where to cache
    and what to draw (they hold the secrets and never go into a record)."""

    lm_client: LMClientSettings = LMClientSettings()
    s3: S3Section = S3Section()
    paths: PathsSettings = PathsSettings()
    chain: ChainSettings = ChainSettings()
    committees: CommitteeSecret = CommitteeSecret()
    output: OutputSettings = OutputSettings()
    tasks: TaskSettings = TaskSettings()

    def lm_config(self) -> LMConfig:
        """The plain LM values ``lm/`` takes (``lm.config.LMConfig``); tokens wrapped in ``Secret``."""
        c = self.lm_client

        def token(value: str) -> Secret | None:
            return Secret(value) if value else None

        endpoint = Endpoint(c.server_url.rstrip("/") or None, token(c.api_token), c.model or None)
        judge = (
            Endpoint(c.judge_server_url.rstrip("/"), token(c.judge_api_token), c.judge_model or None)
            if c.judge_server_url
            else endpoint
        )
        cache_dir = Path(c.cache_dir).expanduser() if c.cache_dir else self.paths.cache / "lm-responses"
        shared = {f.name: getattr(c, f.name) for f in dataclasses.fields(c) if f.metadata.get("like") is LMConfig}
        return LMConfig(
            endpoint=endpoint,
            judge=judge,
            calibration_file=c.calibration or None,
            cache_dir=str(cache_dir),
            local_cache_dir=str(self.paths.cache),
            **shared,  # the fields lm_client declares like LMConfig's (validator.settings.fields.like)
        )

    def s3_settings(self):
        """The plain values ``storage.s3.S3Store`` takes (``storage.s3_settings``; checked again when made).

        Raises ``ConfigError`` naming the missing variable when only half of the key pair is set.
        """
        s = self.s3
        # checked when S3 is used, at the command's start: a stray half pair must not stop a local-only command
        if bool(s.access_key_id) != bool(s.secret_access_key):
            missing = (
                "secret_access_key (AWS_SECRET_ACCESS_KEY)" if s.access_key_id else "access_key_id (AWS_ACCESS_KEY_ID)"
            )
            raise ConfigError(f"s3.{missing}", "not set, but the other half of the key pair is: set both or neither")
        return S3Settings(
            endpoint_url=s.endpoint_url or None,
            region=s.region,
            access_key_id=s.access_key_id or None,
            secret_access_key=s.secret_access_key or None,
            session_token=s.session_token or None,
            connect_timeout_s=s.connect_timeout_s,
            read_timeout_s=s.read_timeout_s,
            max_attempts=s.max_attempts,
        )


RECORDED = tuple(f.name for f in dataclasses.fields(Recorded))

SECTIONS: dict[str, type] = {f.name: section_type(f) for f in dataclasses.fields(Settings)}
