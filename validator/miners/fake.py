"""A miner transport in memory, as httpx ships ``MockTransport``: scripted answers, no network, no server.

``FakeMiners`` is a ``validator.miners.query.Query``: hand it to the daemon
(``Daemon(query=...)``) or call it as ``validator round`` does, and every
miner answers its scripted text, or fails with its scripted reason, in the
order given. Latencies are deterministic (``latency_s``), so records and
ledgers built from it are the same on every run. For the HTTP path itself
(timeouts, the deadline, body caps) the simulated network ``minerpool``
serves real sockets instead.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from consensus.types import Response
from validator.miners.query import Progress, QueryResult

Answer = str | Callable[[str], str]  # a text, or a function of the prompt
Failure = str | tuple[str, str]  # a reason ("timeout"), or (reason, detail)
Failures = Mapping[str, Failure] | Callable[[int], Mapping[str, Failure]]  # per miner, or per call (0, 1, ...)


@dataclass(frozen=True)
class Member:
    hotkey: str
    entity: str | None = None


class FakeMiners:
    """Scripted miners (see the module docstring); ``calls`` keeps every prompt asked.

    ``answers``: hotkey -> text (or ``fn(prompt) -> text``), in the round's order. ``failures``:
    hotkey -> reason (a ``FailureReason`` value such as "timeout") or (reason, detail), or a
    function of the call's number giving that call's failures: the miner fails with an empty text
    and the detail (default ``"<reason> (scripted)"``). The i-th miner's latency is
    ``latency_s(i)`` (default ``0.5 + 0.1 * i``); a failure's is ``failed_latency_s``.
    """

    def __init__(
        self,
        answers: Mapping[str, Answer],
        failures: Failures | None = None,
        *,
        latency_s: Callable[[int], float] = lambda i: 0.5 + 0.1 * i,
        failed_latency_s: float = 1.0,
        entities: Mapping[str, str] | None = None,
        seconds: float = 0.01,
    ) -> None:
        self.answers = dict(answers)
        self.failures = failures if callable(failures) else dict(failures or {})
        self.latency_s, self.failed_latency_s = latency_s, failed_latency_s
        self.entities = dict(entities or {})
        self.seconds = seconds
        self.calls: list[str] = []

    @property
    def specs(self) -> tuple[Member, ...]:
        """The scripted miners and their entities (the daemon draws its committees from them)."""
        return tuple(Member(m, self.entities.get(m)) for m in self.answers)

    def __call__(
        self, prompt: str, on_done: Progress | None = None, members: Collection[str] | None = None
    ) -> QueryResult:
        failing = self.failures(len(self.calls)) if callable(self.failures) else self.failures
        self.calls.append(prompt)
        responses: list[Response] = []
        details: dict[str, str] = {}
        asked = [(m, a) for m, a in self.answers.items() if members is None or m in members]
        for i, (miner, answer) in enumerate(asked):
            failure = failing.get(miner)
            entity = self.entities.get(miner)
            if failure:
                reason, detail = failure if isinstance(failure, tuple) else (failure, f"{failure} (scripted)")
                responses.append(Response(miner, "", self.failed_latency_s, error=reason, entity=entity))
                details[miner] = detail
            else:
                text = answer(prompt) if callable(answer) else answer
                responses.append(Response(miner, text, self.latency_s(i), entity=entity))
            if on_done is not None:
                on_done(i + 1, len(asked))
        return QueryResult(tuple(responses), details, self.seconds)
