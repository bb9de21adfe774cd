"""A tick in the ledger: the committees of one tick are folded into the EMA together (pure).

The daemon asks every miner once per tick, split into committees (``validator.daemon.committee_draw``); each
committee is one round. ``Ledger.apply`` adds each committee's round to the ``OpenTick`` and folds it
when the tick's last committee is in:

- a paying committee of ``n_c`` members contributes ``share * n_c`` for each member (``share`` =
  amount / the round's pool), so ``share * n_c / P``, ``P`` the members of the tick's paying committees,
  is the miner's share of what the tick paid: in a committee of 8 an honest answer earns about 1/8 of
  its pool and the committee about 8/P of the tick, the same 1/P as in a committee of 32;
- the members of a committee that paid nobody (no quorum, an empty pool) keep their EMA, as a round that
  paid nobody did; a miner in the ledger that was in no committee decays as if paid 0;
- a tick whose committees all paid nobody changes no EMA.

A tick of one committee is exactly a round of the old ledger: ``share * n / n``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class LedgerError(ValueError):
    """A ledger that cannot be applied to or read: out-of-order round, unknown schema, malformed data."""


class _HasEma(Protocol):
    @property
    def ema(self) -> float: ...


@dataclass(frozen=True)
class TickPart:
    """Which tick a round belongs to: ``committee`` (0-based) of ``committees``."""

    tick: int
    committee: int
    committees: int

    def __post_init__(self) -> None:
        if self.tick < 1 or self.committees < 1 or not 0 <= self.committee < self.committees:
            raise LedgerError(f"tick {self.tick} committee {self.committee} of {self.committees} is not a tick part")


@dataclass(frozen=True)
class OpenTick:
    """The committees of tick ``tick`` applied so far (``done`` of ``committees``), their shares waiting."""

    tick: int
    committees: int
    done: int = 0  # the committees up to this one (0-based) are applied
    paid_members: int = 0  # members of the committees that paid something
    shares: Mapping[str, float] = field(default_factory=dict)  # miner -> share * committee size (paying ones)
    held: tuple[str, ...] = ()  # members of committees that paid nobody (their EMA stays)

    @classmethod
    def start(cls, part: TickPart, last_tick: int, round_id: str) -> OpenTick:
        """A new tick. The daemon starts tick ``last_tick + 1`` at committee 0; a fold of a selection of stored
        rounds (a what-if of some round ids) may start later, and the committees it lacks are simply not in it."""
        if part.tick <= last_tick:
            raise LedgerError(f"round {round_id!r} is tick {part.tick}; the ledger has folded tick {last_tick}")
        return cls(part.tick, part.committees, part.committee)

    @property
    def complete(self) -> bool:
        return self.done == self.committees

    def add(self, part: TickPart, round_id: str, entries: Sequence[tuple[str, float]], counted: bool) -> OpenTick:
        """With one more committee's round: ``entries`` its (miner, share), ``counted`` when it paid someone."""
        if part.tick != self.tick or part.committees != self.committees or part.committee < self.done:
            raise LedgerError(
                f"round {round_id!r} is tick {part.tick} committee {part.committee} of {part.committees}; "
                f"the ledger expects tick {self.tick} committee {self.done} of {self.committees}"
            )
        asked = set(self.shares) | set(self.held)
        twice = sorted(m for m, _ in entries if m in asked)
        if twice:
            raise LedgerError(f"round {round_id!r} asks {twice[0]!r} a second time in tick {self.tick}")
        shares, held, paid = dict(self.shares), self.held, self.paid_members
        if counted:
            size = len(entries)
            shares.update((m, s * size) for m, s in entries)
            paid += size
        else:
            held = tuple(sorted({*held, *(m for m, _ in entries)}))
        return OpenTick(self.tick, self.committees, part.committee + 1, paid, shares, held)

    def fold(self, miners: Mapping[str, _HasEma], alpha: float) -> Iterator[tuple[str, Any, float]]:
        """(miner, totals, EMA after the tick) for every miner of ``miners``."""
        held = set(self.held)
        for name, m in miners.items():
            if self.paid_members == 0 or name in held:
                ema = m.ema
            else:
                ema = alpha * self.shares.get(name, 0.0) / self.paid_members + (1.0 - alpha) * m.ema
            yield name, m, ema

    def to_json(self) -> dict[str, Any]:
        return {
            "tick": self.tick,
            "committees": self.committees,
            "done": self.done,
            "paid_members": self.paid_members,
            "shares": dict(sorted(self.shares.items())),
            "held": list(self.held),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OpenTick:
        try:
            return cls(
                tick=int(data["tick"]),
                committees=int(data["committees"]),
                done=int(data["done"]),
                paid_members=int(data["paid_members"]),
                shares={str(k): float(v) for k, v in data["shares"].items()},
                held=tuple(str(h) for h in data["held"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LedgerError(f"malformed open tick: {exc}") from exc
