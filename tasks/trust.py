"""Earned trust: a miner's verified accuracy on tasks, with its interval (pure).

Each task round is a Bernoulli trial per miner that answered: right (the verifier's full score) or not.
With a Beta(``PRIOR_RIGHT``, ``PRIOR_WRONG``) prior, after ``right`` of ``tasks`` the posterior is
Beta(a + right, b + tasks - right): its mean is the trust shown, its central ``LEVEL`` interval the
uncertainty. A new identity starts at the prior's mean (0.5 with the uniform prior), not at the top, and its
interval is wide until it has answered enough tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy.special import betaincinv

PRIOR_RIGHT = 1.0
PRIOR_WRONG = 1.0
LEVEL = 0.95


@dataclass(frozen=True)
class Trust:
    """Verified accuracy after ``right`` of ``tasks`` task rounds (module docstring)."""

    right: float
    tasks: int
    prior_right: float = PRIOR_RIGHT
    prior_wrong: float = PRIOR_WRONG

    def __post_init__(self) -> None:
        if self.tasks < 0 or not (0.0 <= self.right <= self.tasks):
            raise ValueError(f"trust: {self.right!r} right of {self.tasks!r} tasks")

    @property
    def a(self) -> float:
        return self.prior_right + self.right

    @property
    def b(self) -> float:
        return self.prior_wrong + self.tasks - self.right

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)

    def interval(self, level: float = LEVEL) -> tuple[float, float]:
        """The central ``level`` interval of the posterior."""
        tail = (1.0 - level) / 2.0
        return float(betaincinv(self.a, self.b, tail)), float(betaincinv(self.a, self.b, 1.0 - tail))

    @property
    def accuracy(self) -> float | None:
        """The raw share right (None before the first task)."""
        return self.right / self.tasks if self.tasks else None

    def describe(self) -> str:
        """``0.82 [0.70, 0.91] (41/50)``, or ``prior 0.50 (no task yet)``."""
        if not self.tasks:
            return f"prior {self.mean:.2f} (no task yet)"
        lo, hi = self.interval()
        return f"{self.mean:.2f} [{lo:.2f}, {hi:.2f}] ({self.right:g}/{self.tasks})"
