"""The chain's health as Prometheus metrics, on the daemon's own registry (``validator.daemon.prometheus.Metrics``).

``ChainMode`` feeds them: every metagraph read sets the permit and the stake
(and the read's time, from which the age is computed at each scrape), every
weight attempt counts one submission by its outcome, and every submission that
lands sets the block and the time of the last weights. ``blocks_until_inactive``
is computed at each scrape from the chain head estimated then (the last read's
block plus the blocks its age makes at ``[chain] block_time_s``), so it counts
down between two reads as the chain does.

    validator_chain_weights_set_block               block of the last weights that landed (set or commit)
    validator_chain_weights_set_timestamp_seconds   unix time they landed
    validator_chain_blocks_until_inactive           activity_cutoff blocks after our last update, minus the head
    validator_chain_permit                          1 while the hotkey holds a validator permit, else 0
    validator_chain_stake                           the hotkey's stake (alpha) at the last read
    validator_chain_metagraph_age_seconds           seconds since the metagraph was last read
    validator_chain_weight_submissions_total        attempts by outcome (set, commit, planned, refused,
                                                    not_sent, no_answer) and kind (ledger, padded: the
                                                    miners' weights; keep-alive: a lone self-weight; empty)
    validator_chain_keepalive_streak                landed submissions in a row that were keep-alives (0 once
                                                    the miners' weights land): self-weights are masked in the
                                                    epoch, so while it is above 0 vtrust and dividends decay
    validator_chain_reveals_total                   landed commits checked after their reveal window, by
                                                    outcome: revealed, missing (the chain dropped the reveal)
    validator_chain_vtrust                          our uid's validator trust after the last epoch (0..1)
    validator_chain_dividends                       our uid's share of the validators' dividends (0..1)
    validator_chain_incentive                       our uid's share of the miners' incentive (0..1)
    validator_chain_emission                        alpha emitted to our uid in the last epoch

Before anything is known a gauge reads NaN (not 0, which would look like a
lost permit or an inactive validator); the metagraph's age, made before the
chain is opened (``validator daemon`` serves /metrics from its first second),
counts from the daemon's start until the first read.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge

from validator.daemon.prometheus import Metric, register

if TYPE_CHECKING:
    from chain.types import Neuron

OUTCOMES = ("set", "commit", "planned", "refused", "not_sent", "no_answer")
KINDS = ("ledger", "padded", "keep-alive", "empty")  # chain.weights.WeightVector.kind
REAL = ("ledger", "padded")  # the kinds that weigh miners (and so earn dividends)


class ChainMetrics:
    """The chain gauges and the submissions counter (module docstring), registered on ``registry``."""

    weights_set_block = Metric(
        Gauge, "validator_chain_weights_set_block", "Block of the last weights that landed (set or commit)."
    )
    weights_set_time = Metric(
        Gauge, "validator_chain_weights_set_timestamp_seconds", "Unix time the last weights landed."
    )
    blocks_until_inactive = Metric(
        Gauge,
        "validator_chain_blocks_until_inactive",
        "Blocks left before the validator counts as inactive without a weight update (<= 0: inactive).",
    )
    permit = Metric(Gauge, "validator_chain_permit", "1 while the hotkey holds a validator permit.")
    stake = Metric(Gauge, "validator_chain_stake", "The hotkey's stake (alpha) at the last metagraph read.")
    metagraph_age = Metric(Gauge, "validator_chain_metagraph_age_seconds", "Seconds since the metagraph was last read.")
    submissions = Metric(
        Counter,
        "validator_chain_weight_submissions",
        "Weight submissions (or plans) by outcome and by the vector's kind (keep-alive: a lone self-weight).",
        ("outcome", "kind"),
    )
    keepalive_streak = Metric(
        Gauge,
        "validator_chain_keepalive_streak",
        "Landed weight submissions in a row that were only the keep-alive self-weight (0: the miners' weights "
        "landed last).",
    )
    reveals = Metric(
        Counter,
        "validator_chain_reveals",
        "Landed commits checked on chain after their reveal window, by outcome (revealed, missing: the weights on "
        "chain are not what was committed).",
        ("outcome",),
    )
    vtrust = Metric(Gauge, "validator_chain_vtrust", "Our uid's validator trust after the last epoch (0..1).")
    dividends = Metric(Gauge, "validator_chain_dividends", "Our uid's share of the validators' dividends (0..1).")
    incentive = Metric(Gauge, "validator_chain_incentive", "Our uid's share of the miners' incentive (0..1).")
    emission = Metric(Gauge, "validator_chain_emission", "Alpha emitted to our uid in the last epoch.")

    def __init__(
        self, registry: CollectorRegistry, *, started_at: float | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        """``started_at``: the daemon's start (unix time); until the first read the metagraph's age counts from
        it, so a chain silent at boot raises ValidatorChainSilent (NaN without it)."""
        register(self, registry)
        for outcome in OUTCOMES:  # every series exists from the start, at 0
            for kind in KINDS:
                self.submissions.labels(outcome=outcome, kind=kind)
        self.keepalive_streak.set(0)
        for outcome in ("revealed", "missing"):
            self.reveals.labels(outcome=outcome)
        self._streak = 0
        for gauge in (self.weights_set_block, self.weights_set_time, self.permit, self.stake, *self._earning()):
            gauge.set(math.nan)
        if started_at is None:
            self.metagraph_age.set(math.nan)
        else:
            self.metagraph_age.set_function(lambda: clock() - started_at)
        self.blocks_until_inactive.set(math.nan)

    def watch(self, age_s: Callable[[], float], until_inactive: Callable[[], float | None]) -> None:
        """Compute the age and the blocks until inactive at each scrape (None: unknown, NaN)."""
        self.metagraph_age.set_function(age_s)
        self.blocks_until_inactive.set_function(lambda: _or_nan(until_inactive()))

    def _earning(self) -> tuple[Gauge, ...]:
        return (self.vtrust, self.dividends, self.incentive, self.emission)

    def standing(self, *, permit: bool | None, stake: float | None, neuron: Neuron | None = None) -> None:
        """The hotkey at the last read (None: not registered: no permit, stake unknown), and what the last
        epoch made of its uid (``neuron``; None: not registered, NaN)."""
        self.permit.set(1.0 if permit else 0.0)
        self.stake.set(math.nan if stake is None else stake)
        values = (
            (math.nan,) * 4
            if neuron is None
            else (neuron.validator_trust, neuron.dividends, neuron.incentive, neuron.emission)
        )
        for gauge, value in zip(self._earning(), values):
            gauge.set(value)

    def landed(self, block: int, at: float) -> None:
        self.weights_set_block.set(block)
        self.weights_set_time.set(at)

    def attempt(self, outcome: str, kind: str, *, landed: bool = False) -> None:
        """One attempt counted by outcome and kind; one that ``landed`` moves the keep-alive streak."""
        self.submissions.labels(outcome=outcome.replace(" ", "_"), kind=kind).inc()
        if landed:
            self.streak(kind)

    def streak(self, kind: str) -> None:
        """A submission of ``kind`` landed: the miners' weights end the keep-alive streak, a keep-alive adds one."""
        self._streak = 0 if kind in REAL else self._streak + 1
        self.keepalive_streak.set(self._streak)


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
