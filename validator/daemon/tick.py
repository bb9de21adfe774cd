"""Asking a tick's committees at once: each committee its own prompt, all committees concurrently.

The daemon (``validator.daemon.daemon``) evaluates a tick's committees one after the other, but it asks them
together when the tick's first committee not yet stored comes up: a tick against real miners then takes one
round deadline for the asking, not one per committee. Each committee's answers are stored as its round's input
right away (crash point 4 of each round), so a restart asks no miner twice; the links and the forgotten hotkeys
of an input are set from the ledger just before its round is evaluated (``Daemon._round_input``), as when each
round was asked on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tasks.source import Task
from validator.daemon.committee_draw import TickPlan
from validator.daemon.task_source import TaskSource, choose
from validator.miners.query import Query, QueryResult
from validator.round.prompt_source import PromptItem
from validator.settings import Settings

MAX_PARALLEL = 32  # committees asked at once (each asks its members concurrently itself)


@dataclass(frozen=True)
class Asked:
    """One committee's answers: its round's sequence, when it was asked, the prompt and what came back."""

    committee: int
    sequence: int
    started_at: float
    item: PromptItem
    canary: bool
    result: QueryResult
    task: Task | None = None  # a task round's task (validator.daemon.task_source)


def ask_committees(
    query: Query,
    plan: TickPlan,
    committees: Sequence[int],
    *,
    prompts: Sequence[PromptItem],
    canaries: Sequence[PromptItem],
    secret: bytes,
    settings: Settings,
    clock: Callable[[], float],
    on_done: Callable[[int, int], None] | None = None,
    tasks: TaskSource | None = None,
) -> list[Asked]:
    """Ask ``committees`` of ``plan`` (their prompts by sequence, ``validator.daemon.task_source.choose``), concurrently;
    ``on_done(k, n)`` counts the miners finished over all of them."""
    jobs = []
    for c in committees:
        sequence = plan.first_sequence + c
        got = choose(sequence, prompts=prompts, canaries=canaries, secret=secret, daemon=settings.daemon, tasks=tasks)
        # the clock is read here, in order, not in the threads
        jobs.append((c, sequence, clock(), got.item, got.canary, got.task))
    total = sum(len(plan.committees[c]) for c in committees)
    lock, finished = threading.Lock(), [0]

    def progress(_k: int, _n: int) -> None:
        with lock:
            finished[0] += 1
            count = finished[0]
        if on_done is not None:
            on_done(min(count, total), total)

    def ask(job: tuple[int, int, float, PromptItem, bool, Task | None]) -> Asked:
        c, sequence, started, item, canary, task = job
        members = plan.committees[c]
        # a committee asks only its members; a query without a roster asks everyone (one committee)
        if members:
            result = query(item.prompt, on_done=progress if len(jobs) > 1 else on_done, members=members)
        else:
            result = query(item.prompt, on_done)
        return Asked(c, sequence, started, item, canary, result, task)

    if len(jobs) == 1:
        return [ask(jobs[0])]
    with ThreadPoolExecutor(max_workers=min(len(jobs), MAX_PARALLEL), thread_name_prefix="committee") as pool:
        return list(pool.map(ask, jobs))
