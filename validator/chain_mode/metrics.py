"""The chain's health as Prometheus metrics, on the daemon's own registry (``validator.metrics.Metrics``).

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
    validator_chain_weight_submissions_total        attempts by outcome: set, commit, planned, refused,
                                                    not_sent, no_answer

Before anything is known a gauge reads NaN (not 0, which would look like a
lost permit or an inactive validator).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

from validator.metrics import Metric, register

OUTCOMES = ("set", "commit", "planned", "refused", "not_sent", "no_answer")


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
        Counter, "validator_chain_weight_submissions", "Weight submissions (or plans) by outcome.", ("outcome",)
    )

    def __init__(self, registry: CollectorRegistry) -> None:
        register(self, registry)
        for outcome in OUTCOMES:  # every series exists from the start, at 0
            self.submissions.labels(outcome=outcome)
        for gauge in (self.weights_set_block, self.weights_set_time, self.permit, self.stake):
            gauge.set(math.nan)
        self.metagraph_age.set(math.nan)
        self.blocks_until_inactive.set(math.nan)

    def watch(self, age_s: Callable[[], float], until_inactive: Callable[[], float | None]) -> None:
        """Compute the age and the blocks until inactive at each scrape (None: unknown, NaN)."""
        self.metagraph_age.set_function(age_s)
        self.blocks_until_inactive.set_function(lambda: _or_nan(until_inactive()))

    def standing(self, *, permit: bool | None, stake: float | None) -> None:
        """The hotkey at the last read (None: not registered: no permit, stake unknown)."""
        self.permit.set(1.0 if permit else 0.0)
        self.stake.set(math.nan if stake is None else stake)

    def landed(self, block: int, at: float) -> None:
        self.weights_set_block.set(block)
        self.weights_set_time.set(at)

    def attempt(self, outcome: str) -> None:
        self.submissions.labels(outcome=outcome.replace(" ", "_")).inc()


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
