"""The evaluation record: what one round's evaluation stores, as frozen types, and its one JSON form.

Every writer builds a ``RoundRecord`` (``validator.round.evaluate.build_record`` for an
evaluated round, ``validator.round.evaluate.no_quorum_record`` for a round below quorum)
and ``validator.records.writer.RoundWriter`` stores ``record.to_json()``; every reader
(ledger, review, report, replay diff, daemon recovery, ``validator round``) goes
through ``RoundRecord.from_json``.
The JSON layout is documented in docs/round-format.md.

Schema and versions. ``SCHEMA_VERSION`` is ``(major, minor)``; the record's
``schema`` string is ``consensus-validator/evaluation/<major>`` while the minor
is 0 (the records written before this module) and ``.../<major>.<minor>``
after. A reader accepts its own major and every minor up to its own; a record
of another major, or one holding a field this code does not know, is refused
with a ``RecordError`` naming the field.

Adding a field (the only change that does not need a new major):

1. add it to its dataclass with a default (``None`` or ``()``) and
   ``spec(since=<new minor>, omit_none=True)`` for an optional section, so
   records without it still load and records that do not use it do not change;
2. bump the minor of ``SCHEMA_VERSION``;
3. document it in docs/round-format.md and set it in the writer.

Field options (``spec``): ``key`` is the JSON name when it differs from the
attribute (``lambda``); ``evaluated`` marks a part that only an evaluated round
has (absent from a no-quorum record, required in the others); ``omit_none``
leaves the key out when the value is ``None``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from storage.codec import CodecError, field_spec, from_plain, loads, to_plain
from validator.records.recorded_config import RecordedConfig
from validator.records.task_section import TaskAnswerRecord, TaskRecord  # noqa: F401 - the task section's parts, re-exported

SCHEMA_NAME = "consensus-validator/evaluation"
SCHEMA_VERSION = (1, 7)  # 1.1: the optional ``canary`` section; 1.2: ``factual_checks`` and ``lm_skipped``;
# 1.3: ``arbitration``; 1.4: ``close_pairs`` and ``comparable``; 1.5: ``daemon.forgotten``;
# 1.6: ``daemon.tick``, ``daemon.committee``, ``daemon.committees`` (secret committees); 1.7: ``task``
NO_QUORUM = "no_quorum"
EVALUATED = "evaluated"  # the flag of the parts only an evaluated round has


def schema_string(version: tuple[int, int] = SCHEMA_VERSION) -> str:
    major, minor = version
    return f"{SCHEMA_NAME}/{major}" if minor == 0 else f"{SCHEMA_NAME}/{major}.{minor}"


SCHEMA = schema_string()


class RecordError(ValueError):
    """A stored document that is not a readable evaluation record; the message names the field and why."""


def spec(
    default: Any = dataclasses.MISSING,
    *,
    key: str | None = None,
    evaluated: bool = False,
    omit_none: bool = False,
    since: int = 0,
) -> Any:
    """A record field (options in the module docstring); ``since`` is the schema minor that added it."""
    return field_spec(default, key=key, only_if=EVALUATED if evaluated else None, omit_none=omit_none, since=since)


# ---- the record's parts -----------------------------------------------------------------------------------

# keyword-only: a required field (no default) may follow an optional one, so the JSON keeps its order
_record = dataclass(frozen=True, kw_only=True)


@_record
class Producer:
    package: str
    version: str


@_record
class EmbeddingInfo:
    model: str
    checksum_sha256: str
    runtime: str
    max_seq_length: int | None
    long_texts: str | None


@_record
class WeightsRecord:
    alignment: float
    quality: float
    confidence: float
    bonus: float


@_record
class ScoreRecord:
    """The composite score (0..100) and the parts it was made of."""

    composite: float
    alignment: float | None = spec(None, evaluated=True)
    quality: float | None = spec(None, evaluated=True)
    confidence: float | None = spec(None, evaluated=True)
    bonus: float | None = spec(None, evaluated=True)
    penalty: float | None = spec(None, evaluated=True)
    reference: float | None = spec(None, evaluated=True)
    weights: WeightsRecord | None = spec(None, evaluated=True)


@_record
class EmissionRecord:
    """One response's payment and every factor of it."""

    eligible: bool
    amount: int
    share: float
    speed: float | None = spec(None, evaluated=True)
    cluster: float | None = spec(None, evaluated=True)
    top: float | None = spec(None, evaluated=True)
    weight: float | None = spec(None, evaluated=True)


@_record
class ResponseRecord:
    index: int
    miner: str
    in_consensus: bool
    reason: str
    detail: str | None
    cluster: int | None = spec(None, evaluated=True)
    copy_of: int | None = spec(None, evaluated=True)
    polarity: str | None = spec(None, evaluated=True)
    words: int
    tokens: int | None = spec(None, evaluated=True)
    tokens_embedded: int | None = spec(None, evaluated=True)
    windows: int | None = spec(None, evaluated=True)
    latency_s: float
    confidence: float | None
    confidence_source: str | None = spec(None, evaluated=True)  # "miner" ("selectit" in records before commit 663e260)
    error: str | None
    score: ScoreRecord
    emissions: EmissionRecord

    @property
    def failed(self) -> bool:
        return self.error is not None


@_record
class ConsensusRecord:
    score: float | None
    mean: float | None = spec(None, evaluated=True)
    std: float | None = spec(None, evaluated=True)
    pairs: int | None = spec(None, evaluated=True)
    reached: bool
    threshold: float | None = spec(None, evaluated=True)
    lambda_: float | None = spec(None, key="lambda", evaluated=True)
    polarity_agreed: bool | None = spec(None, evaluated=True)
    majority_polarity: str | None = spec(None, evaluated=True)
    note: str


@_record
class FiltersRecord:
    lof: str
    quality_threshold_words: float


@_record
class EmissionsSummary:
    pool: int
    pool_scale: float | None = spec(None, evaluated=True)
    total: int
    top_index: int | None = spec(None, evaluated=True)
    top_diff: float | None = spec(None, evaluated=True)


@_record
class HeatmapInfo:
    key: str | None
    url: str | None = spec(None, omit_none=True)  # a presigned URL (daemon on S3)


@_record
class NarrativeRecord:
    kind: str  # "template", "lm" or "none"
    text: str


@_record
class PolarityCheckRecord:
    index: int
    label: str
    score: int
    expected: float | None
    fallback: bool


@_record
class ReferenceCheckRecord:
    index: int
    quality: int | None
    score: float | None
    error: str | None


@_record
class DaemonMarker:
    """Written by the daemon: which sequence this round is (recovery refuses a round that is not its own), and
    the hotkeys it dropped from its ledger before the round (its input's, ``validator.records.stored_round.InputMarker``)."""

    sequence: int
    started_at: str | None
    forgotten: tuple[str, ...] | None = spec(None, omit_none=True, since=5)
    # the tick and which of its committees this round is (its members are the round's responses); absent
    # in a record written before committees: each round was a tick of one committee
    tick: int | None = spec(None, omit_none=True, since=6)
    committee: int | None = spec(None, omit_none=True, since=6)
    committees: int | None = spec(None, omit_none=True, since=6)


@_record
class ReplayMarker:
    replay_id: str
    of: str
    embeddings_reused: bool


@_record
class CanaryAnswerRecord:
    index: int
    miner: str
    accuracy: float
    embedding: float | None
    judge: float | None
    stance: bool | None
    right: bool
    note: str


@_record
class FactualCheckRecord:
    """One member's factual agreement with the other dominant-cluster members (``lm.factual``)."""

    index: int
    anchors: tuple[int, ...]  # the other checked members whose short answer agrees with its own
    agreement: float | None  # share of the other checked members that agree, 0..1; None: skipped (see ``skipped``)
    score: int | None
    skipped: str | None


@_record
class ArbitrationRecord:
    """The LM's arbitration between the members' short answers (``lm.arbitrate``): what it was asked, what it said."""

    question: str  # what the LM answered: the round's prompt (no miner text goes into its prompt)
    answer: str | None  # the LM's own short answer; None: not asked (see ``skipped``) or no usable answer
    confidence: float | None  # probability of the tokens that decide its answer
    groups: int  # distinct short answers among the checked members
    agrees: tuple[int, ...]  # members whose short answer states the LM's answer (they stay)
    disagrees: tuple[int, ...]  # members whose short answer does not (they leave, reason ``factual``)
    from_text: tuple[int, ...]  # members of the two above read from their text (the factual check did not reach them)
    skipped: str | None  # why it did not decide (not asked, abstained); None: it decided


@_record
class ClosePairRecord:
    """Two miners whose answers were far more alike than the round's (``consensus.identity.close_pairs``)."""

    first: str  # the two miners in name order
    second: str
    later: str | None  # the one whose answer arrived later (None: within the tie window)


@_record
class SkippedCheckRecord:
    """An LM check that did not run: stage (polarity, factual, reference, figures), index (None: all), why."""

    stage: str
    index: int | None
    reason: str


@_record
class CanaryRecord:
    """A canary round's judgement against its known answer (``validator.round.canaries``)."""

    canary: bool
    right_at: float
    consensus_accuracy: float | None
    consensus_right: bool | None
    answers: tuple[CanaryAnswerRecord, ...]


@_record
class RoundRecord:
    """One round's evaluation record; ``status`` is None (file replay), "ok" or "no_quorum" (daemon)."""

    round_id: str
    prompt: str
    reference: str | None
    producer: Producer
    embedding: EmbeddingInfo | None = spec(None, evaluated=True)
    config: RecordedConfig  # the settings' own section types (validator.records.recorded_config)
    consensus: ConsensusRecord
    filters: FiltersRecord | None = spec(None, evaluated=True)
    members: tuple[int, ...]
    emissions: EmissionsSummary
    responses: tuple[ResponseRecord, ...]
    heatmap: HeatmapInfo
    narrative: NarrativeRecord
    polarity_checks: tuple[PolarityCheckRecord, ...] | None = spec(None, evaluated=True)
    reference_checks: tuple[ReferenceCheckRecord, ...] | None = spec(None, evaluated=True)
    notes: tuple[str, ...]
    status: str | None = spec(None, omit_none=True)
    canary: CanaryRecord | None = spec(None, omit_none=True, since=1)
    factual_checks: tuple[FactualCheckRecord, ...] | None = spec(None, omit_none=True, since=2)
    lm_skipped: tuple[SkippedCheckRecord, ...] | None = spec(None, omit_none=True, since=2)
    arbitration: ArbitrationRecord | None = spec(None, omit_none=True, since=3)
    # the round's evidence for the ledger's identity rule, folded into ledger.json's pairs
    close_pairs: tuple[ClosePairRecord, ...] | None = spec(None, omit_none=True, since=4)
    # the miners whose answers could be compared (``Evaluation.comparable``): the pairs' rounds together
    comparable: tuple[str, ...] | None = spec(None, omit_none=True, since=4)
    daemon: DaemonMarker | None = spec(None, omit_none=True)
    replay: ReplayMarker | None = spec(None, omit_none=True)
    task: TaskRecord | None = spec(None, omit_none=True, since=7)

    @property
    def evaluated(self) -> bool:
        return self.status != NO_QUORUM

    @property
    def top_miner(self) -> str | None:
        i = self.emissions.top_index
        return self.responses[i].miner if i is not None and 0 <= i < len(self.responses) else None

    def to_json(self) -> dict[str, Any]:
        """The stored form: plain JSON values, ``schema`` first (``storage.codec.dumps`` makes the bytes)."""
        flags = frozenset({EVALUATED}) if self.evaluated else frozenset()
        return {"schema": SCHEMA, **to_plain(self, flags)}

    @classmethod
    def from_json(cls, data: Any, source: str = "record") -> RoundRecord:
        """Read a stored record (any minor of this major); ``RecordError`` names ``source``, the field and why."""
        if not isinstance(data, Mapping):
            raise RecordError(
                f"{source}: not an evaluation record (a JSON object is expected, got {type(data).__name__})"
            )
        version = parse_schema(data.get("schema"), source)
        flags = frozenset() if data.get("status") == NO_QUORUM else frozenset({EVALUATED})
        try:
            return from_plain(cls, {k: v for k, v in data.items() if k != "schema"}, flags)
        except CodecError as exc:
            newer = (
                f" (the record is schema {schema_string(version)}, newer than this code's {SCHEMA})"
                if exc.why == "unknown field" and version > SCHEMA_VERSION
                else ""
            )
            raise RecordError(f"{source}: {exc}{newer}") from exc


def parse_schema(value: Any, source: str = "record") -> tuple[int, int]:
    """``(major, minor)`` of a record's ``schema`` string; ``RecordError`` for another schema or major."""
    if not isinstance(value, str):
        raise RecordError(f"{source}: field 'schema': missing or not a string (expected {SCHEMA!r})")
    m = re.fullmatch(re.escape(SCHEMA_NAME) + r"/(\d+)(?:\.(\d+))?", value)
    if m is None:
        raise RecordError(f"{source}: field 'schema': {value!r} is not an evaluation record (expected {SCHEMA!r})")
    version = (int(m.group(1)), int(m.group(2) or 0))
    if version[0] != SCHEMA_VERSION[0]:
        raise RecordError(
            f"{source}: field 'schema': major version {version[0]} cannot be read by this code "
            f"(it reads {SCHEMA_NAME}/{SCHEMA_VERSION[0]}.x)"
        )
    return version


def load_record(raw: bytes, source: str = "record") -> RoundRecord:
    """A record from its stored bytes (``storage.codec``); undecodable JSON is a ``RecordError`` too."""
    try:
        data = loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RecordError(f"{source}: not JSON ({exc})") from exc
    return RoundRecord.from_json(data, source)
