"""Plain, frozen data that flows through a round.

``Round`` and ``Response`` are the input contract (see docs/round-format.md): what was asked and answered, with,
when the daemon asked it, the daemon's marker (``InputMarker``) and each failed miner's detail, as
``rounds/<round>/input.json`` stores them (``validator.records.stored_round``). ``Evaluation`` and
``ResponseResult`` are what the pure pipeline returns. Nothing here does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from consensus.identity import ClosePair, Link
    from tasks.source import Task


@dataclass(frozen=True)
class Response:
    """One miner's answer in a round.

    ``error`` is set by the querying edge when the miner failed (timeout, HTTP
    error...); such a response never enters consensus and never earns.
    """

    miner: str
    text: str
    latency_s: float
    confidence: float | None = None
    error: str | None = None
    entity: str | None = None  # who runs the miner (operator, coldkey or network address), from the miners file
    # when the answer's last byte reached the validator, by the validator's own clock: seconds from the round's
    # first request (``validator.miners.client``); arrival order (which of two answers came first) reads it.
    # None when not taken (a rounds file without it): arrival order then reads ``latency_s``
    received_s: float | None = None


@dataclass(frozen=True)
class InputMarker:
    """The daemon's marker of a round it asked (recovery refuses an input that is not its own). The marker lives
    only in the validator's stored input: miners see a plain prompt. The identity links are stored with the round
    because the ledger moves on: replay and what-if evaluate the round with the links the daemon used; the
    forgotten hotkeys so that a ledger folded from the stored rounds drops them where the daemon's did."""

    sequence: int | None  # None: a marker without a usable sequence (never this daemon's)
    started_at: str | None = None  # ISO 8601 UTC, when the miners were asked
    canary: bool = False  # a canary round: the reference is a known answer to judge against
    links: tuple[Link, ...] = ()  # the ledger's identity links between this round's miners, before the round
    forgotten: tuple[str, ...] = ()  # hotkeys dropped from the ledger since the last round (Ledger.forgotten)
    tick: int | None = None  # the tick of this round (validator.daemon.committee_draw); None: stored before committees
    committee: int | None = None  # which of the tick's committees (0-based); its members are the round's miners
    committees: int | None = None  # how many committees the tick has
    task: Task | None = None  # a task round: the task asked (spec and the verifier's entry; tasks.source)


@dataclass(frozen=True)
class Round:
    """What was asked and answered: one of the three round types (docs/architecture.md, "One round, three types").
    ``failures`` and ``daemon`` are the validator's knowledge beside the answers (stored in ``input.json``'s
    ``daemon`` section, ``validator.records.stored_round``); the pure core reads neither. A round asked by
    ``validator round`` has failures and no marker; one read from a rounds file has neither."""

    round_id: str
    prompt: str
    responses: tuple[Response, ...]
    reference: str | None = None
    failures: Mapping[str, str] = field(default_factory=dict, hash=False)  # miner -> human detail of its failure
    daemon: InputMarker | None = None  # the daemon's marker, when the daemon asked the round

    @property
    def started_at(self) -> str | None:
        return None if self.daemon is None else self.daemon.started_at

    @property
    def canary(self) -> bool:
        return self.daemon is not None and self.daemon.canary

    @property
    def task(self) -> Task | None:
        return None if self.daemon is None else self.daemon.task


class Reason(str, enum.Enum):
    """Why a response is not in consensus (``IN_CONSENSUS`` when it is)."""

    IN_CONSENSUS = "in_consensus"
    ERROR = "error"
    EMPTY = "empty"
    COPY = "copy"
    TOO_SHORT = "too_short"
    OUTLIER = "outlier"
    OTHER_CLUSTER = "other_cluster"
    POLARITY = "polarity"
    FACTUAL = "factual"  # a short answer no other member states, against a common one (LM check)
    INJECTION = "injection"  # the text addresses the evaluator (consensus.injection)
    REFERENCE = "reference"  # states none of the round's reference answer's facts (consensus.reference)
    WRONG = "wrong"  # a task round's verifier scored the answer wrong (consensus.verified)
    UNREADABLE = "unreadable"  # a task round's answer could not be read (no "Answer:" line, ...; consensus.verified)

    @property
    def filtered(self) -> bool:
        """Removed by a filter: such a response earns nothing."""
        return self in _FILTERED


_FILTERED = frozenset(
    {
        Reason.ERROR,
        Reason.EMPTY,
        Reason.COPY,
        Reason.TOO_SHORT,
        Reason.OUTLIER,
        Reason.INJECTION,
        Reason.WRONG,
        Reason.UNREADABLE,
    }
)


class Polarity(str, enum.Enum):
    AFFIRMATIVE = "affirmative"
    NEGATIVE = "negative"
    UNCLEAR = "unclear"


@dataclass(frozen=True)
class ScoreParts:
    """The composite score of one response and every part of it.

    Parts are in [0, 1]; ``composite`` is in [0, 100]. ``weights`` are the
    weights actually applied (they sum to 1).
    """

    alignment: float
    quality: float
    confidence: float
    bonus: float
    penalty: float
    weights: tuple[float, float, float, float]
    composite: float
    reference: float | None = None  # judged agreement with the round's reference answer, when there is one


@dataclass(frozen=True)
class ResponseResult:
    index: int
    miner: str
    reason: Reason
    detail: str
    words: int
    cluster: int  # -1 when the response did not reach clustering
    score: ScoreParts
    copy_of: int | None = None  # index of the response this one copies
    polarity: Polarity | None = None

    @property
    def in_consensus(self) -> bool:
        return self.reason is Reason.IN_CONSENSUS


@dataclass(frozen=True)
class ConsensusResult:
    score: float  # mu + lambda * sigma over the consensus members' pairwise similarities
    mean: float
    std: float
    pairs: int
    reached: bool
    polarity_agreed: bool | None  # None when no polarity labels were given
    majority_polarity: Polarity | None
    note: str


@dataclass(frozen=True)
class Evaluation:
    round_id: str
    results: tuple[ResponseResult, ...]
    consensus: ConsensusResult
    members: tuple[int, ...]  # indices of the in-consensus responses
    lof: str  # how the outlier step ran ("ran", "disabled", "skipped: ...")
    quality_threshold_words: float
    notes: tuple[str, ...] = field(default=())
    # responses that are one voice and share one payout (entities, sybil-similar answers, copies tied
    # in arrival time); emissions pays each group what one of its members would earn
    groups: tuple[tuple[int, ...], ...] = field(default=())
    # pairs of miners far more alike than this round's answers (consensus.identity): the ledger counts them
    # over rounds, and a pair close in most rounds is linked
    close_pairs: tuple[ClosePair, ...] = field(default=())
    comparable: tuple[str, ...] = field(default=())  # miners whose answers had text enough to be compared
