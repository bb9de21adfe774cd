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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from consensus.types import Response

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
    """Ask every miner ``prompt``; ``on_done`` follows the round's progress (it must return at once)."""

    def __call__(self, prompt: str, on_done: Progress | None = None) -> QueryResult: ...


def miners_query(miners: Sequence[MinerSpec], settings: Settings, signer: Signer | None = None) -> Query:
    """The query edge over real miners (``validator.miners.client``): concurrent, timed, every failure kept;
    every request signed by ``signer`` (the validator's hotkey) when there is one."""
    from validator.miners.answers import to_response
    from validator.miners.client import query_miners
    from validator.miners.limits import QueryLimits

    limits = QueryLimits.from_settings(settings.daemon)

    def query(prompt: str, on_done: Progress | None = None) -> QueryResult:
        t = time.perf_counter()
        answers = query_miners(prompt, miners, limits, on_done=on_done, signer=signer)
        details = {a.hotkey: a.detail or a.failure.value for a in answers if a.failure is not None}
        return QueryResult(tuple(to_response(a) for a in answers), details, time.perf_counter() - t)

    return query
