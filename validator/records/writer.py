"""A round's artefacts in a store: the one writer (input, heatmap, embeddings, LM evidence, record).

``RoundWriter`` is the only code that writes a round's artefacts, for every
driver (daemon, ``validator round``, file and store replay, what-if, both
engines), in one order: the input (when the driver has not stored it
already), then the heatmap, the embeddings, the LM's evidence (when the LM
was asked: ``validator.records.lm_evidence``) and last the record, the round's
commit point. Its ``storage.keys.Target`` says where: the round's own keys
(``ORIGINAL``: the daemon, ``validator round``, a rounds file's first
evaluation) or beside them under a replay id (``Target.replay``: store
replay and what-if), where every write is ``put_once`` (a retried task
rewrites nothing; other bytes are never overwritten, the originals least of
all). Records go through ``validator.records.evaluation_record`` and ``storage.codec``,
embeddings through ``storage.embeddings``, keys through ``storage.keys``.
What it writes is read back by the one reader, ``validator.records.reader.RoundReader``
(stored embeddings are reused only when the model checksum, the long-text
policy and the number of responses all match). The value types it writes live
with their models (``validator.records.evaluation_record``, ``validator.records.stored_round``,
``validator.records.lm_evidence``, ``consensus.embedder``), not here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from consensus.embedder import Embedder, Embeddings
from storage import keys
from storage.base import KeyNotFound, Store
from storage.codec import dumps
from storage.embeddings import encode_embeddings
from storage.keys import ORIGINAL, Target
from validator.records.evaluation_record import DaemonMarker, ReplayMarker, RoundRecord
from validator.records.lm_evidence import encode_evidence
from validator.records.reader import embedder_policy
from validator.records.stored_round import stored_to_json

if TYPE_CHECKING:
    from consensus.types import Round
    from validator.records.lm_evidence import LMEvidence
    from validator.round.stages import EvaluatedRound


class WriteConflict(OSError):
    """A key a replay must write already holds other bytes: it is left as it is."""


def put_once(store: Store, key: str, data: bytes, content_type: str) -> bool:
    """Write ``data`` under ``key`` unless it is there already; True when this call wrote it.

    The same bytes already there: a retried task, nothing to do. Other bytes: ``WriteConflict``.
    """
    try:
        held = store.get(key)
    except KeyNotFound:
        store.put(key, data, content_type)
        return True
    if held != data:
        raise WriteConflict(f"{key} exists with other contents; a replay never overwrites (use another id)")
    return False


def encoded_embeddings(emb: Embeddings, embedder: Embedder) -> bytes:
    """``emb`` as stored, with its model checksum, long-text policy and edges (the prompt's vector, ...)."""
    return encode_embeddings(
        emb, model_checksum=embedder.checksum, policy=embedder_policy(embedder), edges=getattr(emb, "edges", None)
    )


class RoundWriter:
    """The one writer of a round's artefacts (module docstring) into ``store`` at ``target``.

    ``embedder``: the model the embeddings were made with (their stored checksum and policy); None
    for a writer of inputs only. ``presign`` (the daemon on S3) puts a time-limited URL of the heatmap
    into the record.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        target: Target = ORIGINAL,
        *,
        presign: Callable[[str], str | None] | None = None,
    ) -> None:
        self.store, self.embedder, self.target, self.presign = store, embedder, target, presign

    def _put(self, key: str, data: bytes, content_type: str) -> None:
        if self.target.replay_id is None:
            self.store.put(key, data, content_type)  # the round's own keys: a re-run writes them again
        else:
            put_once(self.store, key, data, content_type)

    def write_input(self, stored: Round) -> None:
        """The round as received (and the daemon's marker): before it is evaluated, so a crash can resume."""
        if self.target.replay_id is not None:
            raise ValueError("a replay never writes a round's input")
        self.store.put(keys.round_input(stored.round_id), dumps(stored_to_json(stored)), "application/json")

    def write(
        self,
        stored: Round,
        record: RoundRecord,
        outcome: EvaluatedRound | None,
        *,
        embeddings_reused: bool = False,
    ) -> RoundRecord:
        """Heatmap, embeddings (unless ``embeddings_reused``: read from the store), the LM's evidence (when the
        LM was asked, not when it was read back), then the record; returns the record as written. ``record`` and
        ``outcome``: what ``validator.round.evaluate.evaluate_stored`` gave for ``stored`` (``outcome`` None: below
        quorum, nothing evaluated).

        The record is stamped here: at the round's own keys with the daemon's marker (when the
        daemon asked the miners), beside them with the replay's marker.
        """
        rid = stored.round_id
        if outcome is not None:
            if outcome.heatmap_png is not None:
                key = self.target.heatmap_key(rid)
                self._put(key, outcome.heatmap_png, "image/png")
                if self.presign is not None:
                    record = dataclasses.replace(
                        record, heatmap=dataclasses.replace(record.heatmap, url=self.presign(key))
                    )
            if not embeddings_reused:
                if self.embedder is None:
                    raise ValueError("writing a round's embeddings needs the embedder that made them")
                self._put(
                    self.target.embeddings_key(rid),
                    encoded_embeddings(outcome.embeddings, self.embedder),
                    "application/octet-stream",
                )
            if outcome.evidence is not None and not outcome.evidence_reused:
                self.write_evidence(outcome.evidence)
        marker = stored.daemon
        if self.target.replay_id is not None:
            record = dataclasses.replace(
                record,
                replay=ReplayMarker(
                    replay_id=self.target.replay_id,
                    of=keys.evaluation(rid),
                    embeddings_reused=embeddings_reused,
                ),
            )
        elif marker is not None and marker.sequence is not None:
            record = dataclasses.replace(
                record,
                daemon=DaemonMarker(
                    sequence=marker.sequence,
                    started_at=marker.started_at,
                    forgotten=marker.forgotten or None,
                    tick=marker.tick,
                    committee=marker.committee,
                    committees=marker.committees,
                ),
            )
        self.write_record(record)
        return record

    def write_evidence(self, evidence: LMEvidence) -> None:
        """The LM's evidence alone (the daemon's narrative adds to it after the round is committed)."""

        self._put(self.target.evidence_key(evidence.round_id), encode_evidence(evidence), "application/json")

    def write_record(self, record: RoundRecord) -> None:
        """The record alone (the daemon's narrative, added after the round is committed)."""
        self._put(self.target.record_key(record.round_id), dumps(record.to_json()), "application/json")
