"""Trust weighting the free-form consensus (issue 44, item 5), a lab rule: measured, not shipped.

An answer's voice in choosing the dominant cluster and in centring the consensus (``consensus.extensions``
``voice_weights``) is its miner's earned trust: the posterior mean of its verified accuracy on task rounds
(``tasks.trust.Trust`` over the ledger's ``tasks`` and ``tasks_right``), raised to ``power`` (2 sharpens it).
An identity with no task yet weighs the prior's mean; when every answer of a round weighs the same (no trust
anywhere: a rounds file replayed alone) the evaluation is exactly the product's.

The rule reads the ledger as it stands when the round is evaluated (``ledger``: a callable, the daemon's
current ledger): ``benchmarks.network --trust-voice POWER`` hands it to the daemon (``TrustDaemon``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from consensus.context import Context
from consensus.extensions import Extensions, VoiceWeights
from consensus.types import Round
from emissions.ledger import Ledger
from tasks.trust import Trust
from validator.daemon.daemon import Daemon
from validator.records.evaluation_record import RoundRecord
from validator.round.evaluate import evaluate_stored
from validator.round.stages import EvaluatedRound


def trust_weights(ledger: Callable[[], Ledger], power: float = 1.0) -> VoiceWeights:
    """The rule (module docstring): every answer's weight, its miner's trust mean to the ``power``."""

    def rule(ctx: Context) -> Mapping[int, float]:
        miners = ledger().miners
        out = {}
        for i, r in enumerate(ctx.round.responses):
            entry = miners.get(r.miner)
            trust = Trust(entry.tasks_right, entry.tasks) if entry is not None else Trust(0, 0)
            out[i] = trust.mean**power
        return out

    return rule


class TrustDaemon(Daemon):
    """The product's daemon evaluating with the lab's trust rule (its ``_evaluate`` with ``extensions``)."""

    def __init__(self, *args: Any, power: float = 1.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.extensions = Extensions(voice_weights=(trust_weights(lambda: self.ledger, power),))

    def _evaluate(self, stored: Round, stages: dict[str, float]) -> tuple[RoundRecord, EvaluatedRound | None]:
        record, outcome = evaluate_stored(
            stored, self.settings, self.embedder, lm=self.lm, defer_narrative=True, extensions=self.extensions
        )
        if outcome is not None:
            stages.update(outcome.timings)
        return self._writer().write(stored, record, outcome), outcome
