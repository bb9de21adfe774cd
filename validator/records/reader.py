"""The one reader of a store's files: a round's input, record, embeddings, LM evidence and heatmap, and the
store's own documents (the ledger, the tick under way, a rounds file's summary, a store replay's report).

``RoundReader`` is the counterpart of ``validator.records.writer.RoundWriter``: every driver that reads what
was stored reads it here (the daemon's recovery, store replay and what-if through both engines, the
committees of a store replay, the review and the notebooks), at the keys of ``storage.keys`` (a round's
own, or beside them under a replay id: ``storage.keys.Target``). Each file has one typed model that
reads and writes its JSON (the model's ``from_json`` / ``to_json``); this module only fetches the bytes,
decodes them and names the key when they are not what they should be:

=============================================  ==================================================
file                                           model
=============================================  ==================================================
``rounds/<round>/input.json``                  ``consensus.types.Round`` (``validator.records.stored_round``)
``rounds/<round>/evaluation.json``             ``validator.records.evaluation_record.RoundRecord``
``rounds/<round>/embeddings.npz``              ``storage.embeddings.StoredEmbeddings``
``rounds/<round>/lm-evidence.json``            ``validator.records.lm_evidence.LMEvidence``
``rounds/<round>/heatmap.png``                 PNG bytes
``ledger.json``                                ``emissions.ledger.Ledger``
``daemon-tick.json``                           ``validator.daemon.committee_draw.TickPlan``
``summary.json``                               ``validator.records.replay_summary.ReplaySummaryFile``
``replays/<replay>.json``                      ``validator.records.replay_summary.StoreReplayFile``
=============================================  ==================================================

Errors: ``KeyNotFound`` / ``StoreError`` from the store; a document that is there and unreadable raises
the model's error (``RecordError``, ``RoundError``, ``EvidenceError``, ``LedgerError``, ``SummaryError``,
all ``ValueError``) naming the key. Methods whose file is optional say so and return None when absent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from consensus.embedder import Embedder, RoundEmbeddings
from consensus.types import InputMarker, Round
from storage import keys
from storage.base import KeyNotFound, Store
from storage.codec import loads
from storage.embeddings import decode_embeddings
from storage.keys import ORIGINAL, Target
from validator.daemon.committee_draw import TickPlan
from validator.records.evaluation_record import RoundRecord, load_record
from validator.records.lm_evidence import EvidenceError, LMEvidence
from validator.records.replay_summary import ReplaySummaryFile, StoreReplayFile
from validator.records.stored_round import parse_stored, read_marker

if TYPE_CHECKING:
    from emissions.ledger import Ledger
    from validator.daemon.committee_draw import TickPlan
    from validator.records.lm_evidence import LMEvidence
    from validator.records.round_input import InputLimits

__all__ = [
    "RoundReader",
    "decode_json",
    "decode_ledger",
    "decode_tick_plan",
    "embedder_policy",
    "marker_of",
    "parse_input",
]

T = TypeVar("T")


def embedder_policy(embedder: Embedder) -> str:
    """The long-text policy of ``embedder`` as stored with its embeddings ("unknown" when it has none)."""
    policy = getattr(embedder, "long_texts", None)
    return policy.describe() if policy is not None and hasattr(policy, "describe") else "unknown"


def decode_json(raw: bytes, where: str) -> Any:
    """A stored JSON document; ``ValueError`` naming ``where`` when it is not JSON."""
    try:
        return loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{where}: not JSON ({exc})") from None


def marker_of(doc: Any, where: str = "input") -> InputMarker | None:
    """The daemon's marker of a decoded input or record (``daemon.sequence``...); None when it has none.
    The daemon's recovery checks it before it reads the rest (a foreign file may not be a round at all)."""
    return read_marker(doc, where)


def parse_input(doc: Any, where: str, limits: InputLimits | None = None) -> Round:
    """A decoded ``input.json`` as a ``Round`` (with its failures and marker); ``RoundError`` names ``where`` and
    the field."""
    return parse_stored(doc, where, limits)


def decode_ledger(raw: bytes, where: str) -> Ledger:
    """A stored ``ledger.json`` (the store's or the daemon's local mirror); ``LedgerError`` names ``where``."""
    # lazy: two classes named Ledger (validator.records.ledger_entries's and emissions')
    from validator.records.ledger_entries import Ledger, LedgerError

    try:
        return Ledger.from_json(decode_json(raw, where))
    except LedgerError as exc:
        raise LedgerError(f"{where}: {exc}") from None
    except ValueError as exc:
        raise LedgerError(str(exc)) from None


def decode_tick_plan(raw: bytes, where: str) -> TickPlan:
    """A stored ``daemon-tick.json``; ``ValueError`` names ``where``."""

    try:
        return TickPlan.from_json(decode_json(raw, where))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


class RoundReader:
    """The one reader of ``store`` (module docstring); ``target``: a round's own keys or a replay's."""

    def __init__(self, store: Store, target: Target = ORIGINAL) -> None:
        self.store, self.target = store, target

    def document(self, key: str) -> Any:
        """The JSON document under ``key``: ``KeyNotFound`` when absent, ``ValueError`` when not JSON."""
        return decode_json(self.store.get(key), key)

    # ---- one round's files -----------------------------------------------------------------------
    def input(self, round_id: str, limits: InputLimits | None = None) -> Round:
        """The round's ``input.json`` (a replay has none of its own: always the round's)."""
        return self.input_at(keys.round_input(round_id), limits)

    def input_at(self, key: str, limits: InputLimits | None = None) -> Round:
        """The input stored under ``key`` (a key a selection listed)."""
        return parse_input(self.document(key), key, limits)

    def record(self, round_id: str) -> RoundRecord:
        """The round's evaluation record at this reader's target."""
        return self.record_at(self.target.record_key(round_id))

    def record_at(self, key: str) -> RoundRecord:
        """The record stored under ``key``; ``RecordError`` when it is not one."""
        return load_record(self.store.get(key), key)

    def evidence(self, round_id: str) -> LMEvidence | None:
        """The LM's evidence of the round at this reader's target; None when there is none (a round without the
        LM, or stored before evidence was); ``EvidenceError`` when it is there and unreadable or another round's."""

        key = self.target.evidence_key(round_id)
        try:
            raw = self.store.get(key)
        except KeyNotFound:
            return None
        try:
            doc = loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            raise EvidenceError(f"{key}: not JSON ({exc})") from None
        evidence = LMEvidence.from_json(doc, key)
        if evidence.round_id != round_id:
            raise EvidenceError(f"{key}: holds the evidence of round {evidence.round_id!r}")
        return evidence

    def embeddings(self, round_id: str, embedder: Embedder, responses: int) -> RoundEmbeddings | None:
        """The round's stored embeddings when ``embedder`` would give the same ones, else None (none stored,
        unreadable, another model or policy, another number of responses)."""
        key = self.target.embeddings_key(round_id)
        try:
            stored = decode_embeddings(self.store.get(key), key)
        except (KeyNotFound, OSError, ValueError):
            return None
        if not stored.matches(embedder.checksum, embedder_policy(embedder), responses):
            return None
        return RoundEmbeddings(stored.vectors, stored.windows, stored.tokens, stored.embedded, stored.edges)

    def heatmap(self, round_id: str) -> bytes | None:
        """The round's heatmap PNG bytes; None when none is stored."""
        try:
            return self.store.get(self.target.heatmap_key(round_id))
        except KeyNotFound:
            return None

    # ---- the store's own documents ----------------------------------------------------------------
    def ledger(self) -> Ledger | None:
        """The store's ``ledger.json``; None when there is none."""
        return self._optional(keys.ledger(), decode_ledger)

    def tick_plan(self) -> TickPlan | None:
        """The committees of the daemon's tick under way (``daemon-tick.json``); None when there is none."""
        return self._optional(keys.tick_plan(), decode_tick_plan)

    def summary(self) -> ReplaySummaryFile | None:
        """A rounds file's replay summary (``summary.json``); None when there is none."""
        return self._optional(keys.summary(), lambda raw, key: ReplaySummaryFile.from_json(decode_json(raw, key), key))

    def _optional(self, key: str, decode: Callable[[bytes, str], T]) -> T | None:
        """The document under ``key`` decoded, None when the store has none (a decoding error names the key)."""
        try:
            raw = self.store.get(key)
        except KeyNotFound:
            return None
        return decode(raw, key)

    def replay_report(self, replay_id: str) -> StoreReplayFile:
        """A store replay's report (``replays/<replay>.json``): its diff against the originals."""
        return StoreReplayFile.from_json(self.document(keys.replay_report(replay_id)), keys.replay_report(replay_id))
