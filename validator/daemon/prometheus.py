"""The daemon's Prometheus metrics, served in text format on loopback.

One registry per daemon (not the library's global one), so tests and
several daemons in one process do not share counters. Every metric is
declared once, as data on the class that feeds it (``Metric``: its kind,
name, help, labels and buckets), and made on the registry in one loop
(``register``); ``validator.daemon.chain.metrics`` declares the chain's the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar, overload

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_http_server

from tasks.trust import Trust

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
# the round stages that are LM calls (``validator.round.gather_evidence`` timings, the daemon's narrative)
LM_CHECKS = ("polarity", "factual", "arbitration")  # they share one budget (validator.round.gather_evidence)
LM_STAGES = (*LM_CHECKS, "narrative")  # the narrative has an allowance of its own (validator.daemon.daemon)

M = TypeVar("M", Counter, Gauge, Histogram)


class Metric(Generic[M]):
    """One metric declared on a class (kind, name, help, labels, a histogram's buckets).

    ``register(obj, registry)`` makes every metric ``obj``'s class declares on
    ``registry``, in declaration order; from then on the attribute is ``obj``'s own.
    """

    def __init__(
        self, kind: type[M], name: str, doc: str, labels: tuple[str, ...] = (), *, buckets: tuple[float, ...] = ()
    ) -> None:
        self.kind: type[M] = kind
        self.name, self.doc, self.labels, self.buckets = name, doc, labels, buckets
        self.attr = ""

    def __set_name__(self, owner: type, attr: str) -> None:
        self.attr = attr

    @overload
    def __get__(self, obj: None, owner: type) -> Metric[M]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> M: ...
    def __get__(self, obj: object | None, owner: type) -> Metric[M] | M:
        if obj is None:
            return self
        raise AttributeError(f"{self.attr}: not registered yet (validator.daemon.prometheus.register)")

    def make(self, registry: CollectorRegistry) -> M:
        extra: dict[str, Any] = {"buckets": self.buckets} if self.buckets else {}
        made: M = self.kind(self.name, self.doc, self.labels, registry=registry, **extra)
        return made


def register(obj: object, registry: CollectorRegistry) -> None:
    """Every ``Metric`` of ``obj``'s class made on ``registry`` and set as ``obj``'s attribute of that name."""
    for metric in vars(type(obj)).values():
        if isinstance(metric, Metric):
            obj.__dict__[metric.attr] = metric.make(registry)


class Metrics:
    rounds = Metric(Counter, "validator_rounds", "Rounds completed, by status (ok, no_quorum).", ("status",))
    failures = Metric(Counter, "validator_miner_failures", "Miner requests that failed, by reason.", ("reason",))
    answers = Metric(Counter, "validator_miner_answers", "Miner requests that returned a usable answer.")
    latency = Metric(
        Histogram,
        "validator_miner_latency_seconds",
        "Miner latency, request sent to last byte.",
        buckets=LATENCY_BUCKETS,
    )
    reached = Metric(Counter, "validator_consensus_reached", "Rounds whose consensus score reached the threshold.")
    consensus_rate = Metric(Gauge, "validator_consensus_rate", "Share of completed rounds that reached consensus.")
    stage = Metric(
        Histogram,
        "validator_round_stage_seconds",
        "Time per round stage.",
        ("stage",),
        buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120),
    )
    spool_pending = Metric(Gauge, "validator_store_spooled", "Objects waiting in the local spool for the store.")
    last_round = Metric(Gauge, "validator_last_round_sequence", "Sequence number of the last completed round.")
    ticks = Metric(
        Counter, "validator_ticks", "Ticks completed (every miner asked once, in committees; docs/daemon.md)."
    )
    last_tick = Metric(Gauge, "validator_last_tick", "Number of the last completed tick.")
    tick_committees = Metric(Gauge, "validator_tick_committees", "Committees (rounds) of the last completed tick.")
    unpaid = Metric(
        Counter,
        "validator_miner_unpaid",
        "Responses paid nothing, by reason (a failure such as timeout, or copy, offtopic, injection, "
        "polarity, factual...; validator.review.unpaid).",
        ("reason",),
    )
    lm_budget = Metric(
        Gauge, "validator_lm_budget_seconds", "The LM's time budget per round (lm.round_budget_s; 0 = none)."
    )
    lm_seconds = Metric(
        Histogram,
        "validator_lm_round_seconds",
        "Time a round spent in LM calls (polarity, factual, arbitration, narrative).",
        buckets=(0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 240),
    )
    lm_spent = Metric(
        Counter,
        "validator_lm_budget_spent",
        "Rounds whose LM checks used at least their whole budget (later checks were skipped).",
    )
    weight = Metric(
        Gauge,
        "validator_miner_weight",
        "Each miner's weight in the ledger after the last round (EMA x canary accuracy, normalised).",
        ("miner",),
    )
    ema = Metric(Gauge, "validator_miner_ema", "Each miner's EMA of its paid share after the last round.", ("miner",))
    verified = Metric(
        Gauge,
        "validator_miner_verified_accuracy",
        "Each miner's earned trust: the posterior mean of its verified accuracy on task rounds (tasks.trust; 0.5, "
        "the prior, before its first task; bound=mean), and its 95% interval (bound=low, high).",
        ("miner", "bound"),
    )
    tasks = Metric(Counter, "validator_task_rounds", "Rounds that asked a verifiable task (docs/daemon.md, Tasks).")

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        register(self, self.registry)
        self._rounds_done = 0
        self._reached_done = 0

    def observe_round(
        self,
        *,
        sequence: int,
        status: str,
        reached: bool,
        latencies: Iterable[float],
        failures: Iterable[str],
        stages: dict[str, float],
    ) -> None:
        self.rounds.labels(status=status).inc()
        for reason in failures:
            self.failures.labels(reason=reason).inc()
        for latency in latencies:
            self.answers.inc()
            self.latency.observe(latency)
        self._rounds_done += 1
        if reached:
            self.reached.inc()
            self._reached_done += 1
        self.consensus_rate.set(self._reached_done / self._rounds_done)
        for stage, seconds in stages.items():
            self.stage.labels(stage=stage).observe(seconds)
        self.last_round.set(sequence)

    def observe_tick(self, tick: int, committees: int) -> None:
        """A tick completed: its last committee's round is in the ledger."""
        self.ticks.inc()
        self.last_tick.set(tick)
        self.tick_committees.set(committees)

    def observe_unpaid(self, unpaid: Mapping[str, str]) -> None:
        """One round's unpaid responses: miner -> reason word (``RoundLine.unpaid``)."""
        for reason in unpaid.values():
            self.unpaid.labels(reason=reason).inc()

    def observe_lm(self, stages: dict[str, float], budget_s: float) -> None:
        """One round's time in LM calls against ``budget_s`` (``lm.round_budget_s``), when it made any."""
        self.lm_budget.set(budget_s)
        spent = sum(seconds for stage, seconds in stages.items() if stage in LM_STAGES)
        if not any(stage in LM_STAGES for stage in stages):
            return
        self.lm_seconds.observe(spent)
        if budget_s > 0 and sum(stages.get(stage, 0.0) for stage in LM_CHECKS) >= budget_s:
            self.lm_spent.inc()

    def observe_ledger(self, ledger) -> None:
        """The ledger's weights and EMAs after a round (``emissions.ledger.Ledger``); a miner the ledger no
        longer holds (forgotten on chain) leaves the metrics too."""
        weights = ledger.weights()
        self.weight.clear()
        self.ema.clear()
        self.verified.clear()
        for miner, weight in weights.items():
            m = ledger.miners[miner]
            self.weight.labels(miner=miner).set(weight)
            self.ema.labels(miner=miner).set(m.ema)
            trust = Trust(m.tasks_right, m.tasks)
            low, high = trust.interval()
            self.verified.labels(miner=miner, bound="mean").set(trust.mean)
            self.verified.labels(miner=miner, bound="low").set(low)
            self.verified.labels(miner=miner, bound="high").set(high)

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def serve(self, port: int) -> tuple[object, int]:
        """Serve on 127.0.0.1:``port`` (0 = a free port); returns (server, bound port)."""

        try:
            server, thread = start_http_server(port, addr="127.0.0.1", registry=self.registry)
        except OSError as exc:  # in use (another daemon on this machine?) or not ours to bind: one line, exit 2
            raise ValueError(
                f"cannot serve metrics on 127.0.0.1:{port}: {exc.strerror or exc}; set another "
                f"--metrics-port or [daemon] metrics_port (0 = a free port, -1 = off)"
            ) from None
        self._server, self._thread = server, thread
        return server, server.server_address[1]

    def close(self) -> None:
        server = getattr(self, "_server", None)
        if server is not None:
            server.shutdown()
            server.server_close()
            self._server = None
