"""The collect edge as the daemon and ``validator round`` see it: a prompt in, every miner's ``Response`` out.

A ``Query`` is any callable that asks the miners one prompt and returns a
``QueryResult``: the responses in the miners' order (a failure is a response
with ``error`` set to its reason and an empty text), each failure's detail
and the time the query took. ``miners_query`` is the real one, over HTTP
(``validator.miners.client``); ``validator.miners.fake.FakeMiners`` is the
in-memory one a test or a notebook uses instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from consensus.types import Response
from validator.miners.answers import to_response
from validator.miners.client import query_miners
from validator.miners.limits import QueryLimits

if TYPE_CHECKING:
    from chain.epistula import Signer
    from validator.miners.spec import MinerSpec
    from validator.settings import Settings

Progress = Callable[[int, int], None]  # (miners finished, miners asked), called as each one finishes


@dataclass(frozen=True)
class QueryResult:
    """What the miners answered: failures carry ``error`` = the reason and an empty text."""

    responses: tuple[Response, ...]
    details: dict[str, str] = field(default_factory=dict)  # miner -> human detail of its failure
    seconds: float = 0.0


class Query(Protocol):
    """Ask every miner ``prompt``, or only ``members`` (a committee's hotkeys); ``on_done`` follows the round's
    progress (it must return at once)."""

    def __call__(
        self, prompt: str, on_done: Progress | None = None, members: Collection[str] | None = None
    ) -> QueryResult: ...


def miners_query(miners: Sequence[MinerSpec], settings: Settings, signer: Signer | None = None) -> Query:
    """The query edge over real miners (``validator.miners.client``): concurrent, timed, every failure kept;
    every request signed by ``signer`` (the validator's hotkey) when there is one."""
    return MinersQuery(tuple(miners), settings, signer)


class MinersQuery:
    """``miners_query``'s query; ``specs`` are its miners (the daemon draws its committees from them)."""

    def __init__(self, specs: tuple[MinerSpec, ...], settings: Settings, signer: Signer | None) -> None:

        self.specs, self.signer = specs, signer
        self.limits = QueryLimits.from_settings(settings.daemon)

    def __call__(
        self, prompt: str, on_done: Progress | None = None, members: Collection[str] | None = None
    ) -> QueryResult:

        asked = self.specs if members is None else tuple(s for s in self.specs if s.hotkey in set(members))
        t = time.perf_counter()
        answers = query_miners(prompt, asked, self.limits, on_done=on_done, signer=self.signer)
        details = {a.hotkey: a.detail or a.failure.value for a in answers if a.failure is not None}
        return QueryResult(tuple(to_response(a) for a in answers), details, time.perf_counter() - t)
