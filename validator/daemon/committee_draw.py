"""Secret committees: which miners answer which prompt in a tick (pure; the draw of docs/daemon.md "Committees").

Each tick the daemon splits its usable miners into ``committee_count`` committees of about ``committee_size``
and asks each committee its own prompt: every miner once per tick, each committee one round. The draw is a
pure function of a seed, and the seed is ``HMAC-SHA256(secret, purpose:number)``: without the validator's
secret nothing stored (the rounds hold the tick, the committee and its members) tells which miners share
the next tick's committees or which prompt comes next; with it the same tick draws the same committees.

- ``draw_committees``: the miners in a seeded random order, grouped by entity (an operator's hotkeys, a
  chain coldkey; the largest groups first), dealt round robin from a random offset, so the identities of
  one entity land in different committees while there are at least as many committees as identities;
  committee sizes differ by at most one. When the largest entity (a linked component included) has more
  identities than ``miners // size``, the tick draws more, smaller committees (down to half the size: at most
  about twice the rounds), so no two of its identities share a committee while the miners allow it
  (``committee_count``).
- ``linked_entities``: the entities the draw deals apart: the declared ones united with the ledger's identity
  links (``consensus.identity``: pairs far more alike than their round in most rounds both answered), so
  identities the ledger has linked are drawn apart like those of one declared entity.
- ``prompt_index``: the prompt of round ``sequence``: the source in a seeded random order per pass, so no
  prompt is asked twice before every prompt was asked once, and the order is not the file's.
- ``pick``: the canary schedule of ``validator.round.canaries`` with a seed the secret enters, else ``prompt_index``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from consensus.groups import components
from validator.round.canaries import is_canary
from validator.round.prompt_source import PromptItem

MIN_SECRET_BYTES = 16
LINKED = "\x01linked:"  # the entity key of a component of linked miners that holds no declared entity


def derive(secret: bytes, purpose: str, number: int) -> int:
    """A 64-bit seed for ``purpose`` (committees, prompts, canaries) and ``number`` (a tick, a pass)."""
    digest = hmac.new(secret, f"{purpose}:{number}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def committee_count(miners: int, size: int, entities: Iterable[int] = ()) -> int:
    """How many committees ``miners`` make: ``miners // size``; one when there are too few for two (or size 0:
    committees off, everyone in one round). ``entities``: the identities of each entity (declared or linked)
    among them. When one exceeds ``miners // size``, more committees, each of at least ``ceil(size / 2)`` miners
    and two (at most about twice the rounds a tick): the fewest that put the fewest identities of every entity in any one
    committee (one each while the miners allow it, so linked identities never meet)."""
    if size <= 0 or miners < 2 * size:
        return 1
    count = base = miners // size
    most = max(base, miners // max(2, -(-size // 2)))  # committees of at least half the size, and of two
    for n in entities:
        if n > base:
            per = -(-n // most)  # the fewest of its identities per committee the miners allow
            count = max(count, -(-n // per))
    return count


def draw_committees(
    miners: Sequence[str], entities: Mapping[str, str | None], size: int, seed: int
) -> tuple[tuple[str, ...], ...]:
    """The committees of a tick (see the module docstring); each keeps the miners' order in ``miners``."""
    if len(set(miners)) != len(miners):
        raise ValueError("a miner is listed twice")
    sizes: dict[str, int] = {}
    for m in miners:
        if e := entities.get(m):
            sizes[e] = sizes.get(e, 0) + 1
    count = committee_count(len(miners), size, sizes.values())
    if count == 1:
        return (tuple(miners),)
    rng = np.random.default_rng(seed)
    shuffled = [miners[i] for i in rng.permutation(len(miners))]
    groups: dict[str, list[str]] = {}
    for m in shuffled:
        groups.setdefault(entities.get(m) or f"\x00{m}", []).append(m)
    values = list(groups.values())
    tie = rng.random(len(values))
    order = sorted(range(len(values)), key=lambda g: (-len(values[g]), tie[g]))
    dealt = [m for g in order for m in values[g]]
    offset = int(rng.integers(count))
    where = {m: (j + offset) % count for j, m in enumerate(dealt)}
    return tuple(tuple(m for m in miners if where[m] == c) for c in range(count))


def linked_entities(entities: Mapping[str, str | None], links: Iterable[tuple[str, str]]) -> dict[str, str | None]:
    """``entities`` (miner -> declared entity or None) with the ``links`` (pairs of miners) united in: the
    connected components of the links and of the declared entities (union-find), each given one key. A
    component that holds a declared entity takes its name (the smallest name when it joins several, which
    become one); one without takes ``LINKED + <its first miner>`` (a control character first: no declared
    entity is named so). Miners in neither keep their entry; a link
    to a miner not in ``entities`` is ignored (it is not drawn this tick)."""
    pairs = [(a, b) for a, b in links if a in entities and b in entities and a != b]
    if not pairs:
        return dict(entities)
    first: dict[str, str] = {}
    for m, e in entities.items():
        if e is not None:
            pairs.append((first.setdefault(e, m), m))
    merged = dict(entities)
    for group in components(pairs):
        declared = sorted({e for m in group if (e := entities[m]) is not None})
        key = declared[0] if declared else LINKED + group[0]
        merged.update(dict.fromkeys(group, key))
    return merged


@lru_cache(maxsize=8)
def _pass_order(secret: bytes, count: int, number: int) -> tuple[int, ...]:
    return tuple(int(i) for i in np.random.default_rng(derive(secret, "prompts", number)).permutation(count))


def prompt_index(secret: bytes, count: int, sequence: int) -> int:
    """The index of round ``sequence``'s prompt (1-based sequence) in a source of ``count`` prompts."""
    position = sequence - 1
    return _pass_order(secret, count, position // count)[position % count]


def pick(
    prompts: Sequence[PromptItem],
    canaries: Sequence[PromptItem],
    sequence: int,
    secret: bytes,
    rate: float,
    canary_seed: int,
) -> tuple[PromptItem, bool]:
    """The prompt of round ``sequence`` and whether it is a canary (a canary lands in a committee like any prompt)."""
    if canaries and canary_round(secret, sequence, rate, canary_seed):
        digest = hmac.new(secret, f"canary-item:{canary_seed}:{sequence}".encode(), hashlib.sha256).digest()
        return canaries[int.from_bytes(digest[:8], "big") % len(canaries)], True
    return prompts[prompt_index(secret, len(prompts), sequence)], False


def canary_round(secret: bytes, sequence: int, rate: float, canary_seed: int) -> bool:
    """Whether round ``sequence`` asks a canary: ``validator.round.canaries.is_canary`` with the secret in its seed."""
    return is_canary(sequence, rate, canary_seed ^ derive(secret, "canaries", 0))


@dataclass(frozen=True)
class TickPlan:
    """One tick's committees, drawn at its start and kept in the store until its last committee is done, so a
    restart mid-tick asks the remaining committees of the same draw (``first_sequence``: committee 0's round)."""

    tick: int
    first_sequence: int
    committees: tuple[tuple[str, ...], ...]

    def committee_of(self, sequence: int) -> int:
        return sequence - self.first_sequence

    def to_json(self) -> dict[str, Any]:
        return {
            "tick": self.tick,
            "first_sequence": self.first_sequence,
            "committees": [list(c) for c in self.committees],
        }

    @classmethod
    def from_json(cls, data: Any) -> TickPlan:
        try:
            committees = tuple(tuple(str(m) for m in c) for c in data["committees"])
            plan = cls(int(data["tick"]), int(data["first_sequence"]), committees)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed tick plan: {exc}") from None
        if not committees or not all(committees):
            raise ValueError("malformed tick plan: an empty committee")
        return plan


def plan_tick(
    secret: bytes,
    tick: int,
    first_sequence: int,
    miners: Sequence[str],
    entities: Mapping[str, str | None],
    size: int,
) -> TickPlan:
    """Tick ``tick``'s committees, seeded by the secret and the tick number."""
    return TickPlan(tick, first_sequence, draw_committees(miners, entities, size, derive(secret, "committees", tick)))
