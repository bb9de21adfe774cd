"""The daemon's task source: which rounds ask a verifiable task, and which task (docs/daemon.md "Tasks").

Round ``sequence`` asks a task when ``u(secret, "task-round", sequence) < share`` (every round when the daemon
has no prompt source), ``u`` the HMAC-SHA256 of the validator's secret (``validator.daemon.committee_draw.derive``) mapped
to [0, 1). Its family and the generator's seed are two more HMAC draws of the secret and the sequence: without
the secret no miner can tell which rounds ask a task or which one; with it the same round draws the same task.

No question is asked twice: the source keeps a digest of every question it gave (and, with a state directory,
in the file ``asked-tasks`` there, one hex digest a line, so a restart remembers them); a draw whose question
was asked before is drawn again with the next attempt number in the HMAC. The default families' small settings
have finite question spaces (``prime_factorization`` up to 100 has 99 questions, the nine about 44,000 in all,
docs/daemon.md "Tasks"): from attempt ``WIDEN`` on, a draw uses its generator's own config, whose space is far larger
(numbers of several digits), so a long-running daemon never stops for want of a new question; the task's stored spec
holds the config it was drawn with, so replay re-verifies it exactly. A task round is itself a
known-answer round; canary rounds (``validator.round.canaries``) still come from a canaries file only: tasks as canaries
(their verdicts scaling the weights a second time) ranked a simulated ladder worse (docs/validity.md,
"Verifiable tasks").

``choose`` is the one place a round's prompt is decided: a canary (from the file), a task, or the operator's next
prompt (``validator.daemon.committee_draw.prompt_index``).
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tasks.source import Task, TaskSpec, check_families, generate
from validator.daemon.committee_draw import canary_round, committee_count, derive, pick, prompt_index
from validator.round.prompt_source import PromptItem
from validator.settings.sections import DaemonSettings, TaskSettings

FILE = "asked-tasks"
ATTEMPTS = 256  # draws per round before giving up (each family's space would have to be nearly exhausted)
WIDEN = 32  # from this attempt on, a family is drawn at its generator's own config (a far larger question space)


class TaskSourceError(ValueError):
    """No unasked task could be drawn (every family's questions asked), or the families do not build."""


def _unit(secret: bytes, purpose: str, number: int) -> float:
    return derive(secret, purpose, number) / 2.0**64


def digest(question: str) -> str:
    return hashlib.sha256(question.encode("utf-8")).hexdigest()[:32]


class TaskSource:
    """Tasks for the daemon's rounds (module docstring)."""

    def __init__(
        self,
        settings: TaskSettings,
        secret: bytes,
        *,
        every_round: bool,
        state_dir: str | Path | None = None,
    ) -> None:
        self.families = settings.family_names()
        self.configs = settings.configs()
        self.share = 1.0 if every_round else settings.share
        self.every_round = every_round
        self.secret = secret
        try:
            check_families(self.families, self.configs)
        except ValueError as exc:
            raise TaskSourceError(f"[tasks]: {exc}") from None
        self.file = Path(state_dir) / FILE if state_dir is not None else None
        self.asked: set[str] = set()
        if self.file is not None and self.file.is_file():
            self.asked = {line.strip() for line in self.file.read_text(encoding="ascii").splitlines() if line.strip()}
        self._given: dict[int, Task] = {}  # this process's draws by sequence (a round asked again gets its task)

    def is_task_round(self, sequence: int) -> bool:
        return self.every_round or _unit(self.secret, "task-round", sequence) < self.share

    def draw(self, sequence: int, attempt: int) -> Task:
        """Attempt ``attempt`` of round ``sequence``'s task (pure: the secret, the sequence and the attempt)."""
        family = self.families[derive(self.secret, f"task-family:{attempt}", sequence) % len(self.families)]
        seed = derive(self.secret, f"task-seed:{attempt}", sequence)
        return generate(TaskSpec(family, seed, self.configs.get(family, {}) if attempt < WIDEN else {}))

    def task_for(self, sequence: int) -> Task:
        """Round ``sequence``'s task: the first draw whose question was never asked (module docstring)."""
        if sequence in self._given:
            return self._given[sequence]
        for attempt in range(ATTEMPTS):
            task = self.draw(sequence, attempt)
            key = digest(task.question)
            if key not in self.asked:
                self._remember(key)
                self._given[sequence] = task
                return task
        raise TaskSourceError(f"round {sequence}: {ATTEMPTS} draws gave only questions asked before")

    def _remember(self, key: str) -> None:
        self.asked.add(key)
        if self.file is not None:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            with open(self.file, "a", encoding="ascii") as f:
                f.write(key + "\n")
                f.flush()
                os.fsync(f.fileno())


@dataclass(frozen=True)
class Choice:
    """A round's prompt: what the miners see, whether it is a canary, and the task when it asks one."""

    item: PromptItem
    canary: bool
    task: Task | None = None


def choose(
    sequence: int,
    *,
    prompts: Sequence[PromptItem],
    canaries: Sequence[PromptItem],
    secret: bytes,
    daemon: DaemonSettings,
    tasks: TaskSource | None,
) -> Choice:
    """Round ``sequence``'s prompt (module docstring)."""
    if tasks is None:
        item, canary = pick(prompts, canaries, sequence, secret, daemon.canary_rate, daemon.canary_seed)
        return Choice(item, canary)
    if canaries and canary_round(secret, sequence, daemon.canary_rate, daemon.canary_seed):
        item, _ = pick(canaries, canaries, sequence, secret, 1.0, daemon.canary_seed)
        return Choice(item, True)
    if not prompts or tasks.is_task_round(sequence):
        task = tasks.task_for(sequence)
        return Choice(PromptItem(task.prompt), False, task)
    return Choice(prompts[prompt_index(secret, len(prompts), sequence)], False)


def repeat_after_ticks(prompts: int, committees: int, task_share: float, canary_share: float) -> float:
    """About how many ticks until a prompts file's first prompt is asked again: every prompt is asked once per
    pass, and a tick asks ``committees`` rounds of which ``(1 - canary_share) * (1 - task_share)`` are prompts."""
    per_tick = committees * (1.0 - canary_share) * (1.0 - task_share)
    return math.inf if per_tick <= 0 else prompts / per_tick


def repeat_notice(
    prompts: Sequence[PromptItem], miners: int, daemon: DaemonSettings, tasks: TaskSource | None, canaries: bool
) -> str | None:
    """When the prompts will repeat (every prompt is asked once per pass, ``validator.daemon.committee_draw``): after how many
    ticks, with ``miners``' committees and the share of rounds tasks and canaries take; None without prompts. A
    repeated prompt's paid answer is known, so a miner could serve it from a table."""
    if not prompts:
        return None
    committees = committee_count(miners, daemon.committee_size) if miners else 1
    task_share = 0.0 if tasks is None else tasks.share
    canary_share = daemon.canary_rate if canaries else 0.0
    ticks = repeat_after_ticks(len(prompts), committees, task_share, canary_share)
    return (
        f"prompts: {len(prompts)}, each asked once per pass in a secret order; they start repeating after about "
        f"{math.ceil(ticks):,} ticks ({committees} committee(s) a tick, {1 - task_share:.0%} of rounds prompts): a "
        "repeated prompt's paid answer is known, so add prompts or raise tasks.share"
    )
