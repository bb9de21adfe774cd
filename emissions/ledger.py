"""The ledger: what each miner was paid round after round, and the weights that follow from it (pure).

The daemon applies every round's evaluation record to the ledger (the I/O is
``validator.records.ledger_entries``'s); a chain validator would set the ledger's
``weights()``. Round ``n`` is applied only on top of round ``n - 1``
(``Ledger.apply`` refuses anything else), and the ledger records the last
applied sequence, so a restart that finds a round's record already stored
applies it exactly once.

EMA over what the rounds paid: ``ema <- alpha * share + (1 - alpha) * ema``
with ``share`` what the round paid the miner over its nominal pool (``validator.records.ledger_entries.entries_from_record``:
``amount / pool`` x the round's pool scale, so a round of weak consensus, which pays less, moves the EMAs
less, as its units weigh less in the totals; ``alpha`` is the operators' ``moving_average_alpha``). Every anti-farming rule of the allocation (copies,
junk, filtered and off-topic answers earn 0) therefore carries into the
weights: a miner paid 0 in every round has EMA 0 and weight 0. A miner not in
a counted round (it left the miners file) decays as if paid 0. Rounds that
paid nobody (no quorum, an empty pool) leave every EMA unchanged.

Canary accuracy: in a canary round (a prompt with a known answer) each miner
gets an accuracy ``x`` in [0, 1] (``validator.round.canaries``), folded into an EMA
over canary rounds only: ``acc <- canary_alpha * x + (1 - canary_alpha) * acc``
starting from 1.0, so a miner with no canary round yet is not penalised.

Weights: ``w_i = ema_i * acc_i / sum_j(ema_j * acc_j)``; all 0 while nothing
has been paid (there is nothing to follow yet). A majority that wins every
consensus but is wrong on the canaries keeps its paid shares and loses its
weight through ``acc``.

Ticks: the daemon asks every miner once per tick, split into committees (``validator.daemon.committee_draw``); each
committee is one round, and the EMA folds ticks, not rounds (``emissions.ticks``). A round's shares wait in
the open tick, each weighed by its committee's size, ``share * n_c / sum(n_c of the tick's paying
committees)``; when the tick's last committee is applied every EMA moves once. So a miner's weight does
not depend on the size of the committee it fell into, and a round without tick information is a tick of
one committee (the EMA then moves exactly as round by round).

Earned trust: on a task round (a generated task with its own verifier, docs/daemon.md "Tasks") each miner
asked counts one task, and one right when the verifier said so (``MinerEntry.verified``); ``tasks`` and
``tasks_right`` are the evidence of ``tasks.trust.Trust`` (a Beta posterior: a new identity starts at the prior).

Pair evidence (``consensus.identity``): every round's close pairs (two miners far
more alike than the round's answers) start or extend a ``PairTotals``: from the
round a pair is first close, the rounds both miners answered, the rounds the pair
was close and who arrived later. ``links`` reads them: a pair close in most of the
rounds both answered is one operator (the daemon applies the links to the next
rounds through ``Signals``); the report shows the evidence.

``without`` drops miners (a hotkey that deregistered) and keeps their names in
``forgotten`` until the next ``apply``: the daemon stores them with that round,
so a ledger folded from the stored rounds drops them at the same point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from consensus.identity import ClosePair, Link, links
from emissions.ticks import LedgerError, OpenTick, TickPart

SCHEMA = "consensus-validator/ledger/3"
V2_SCHEMA = "consensus-validator/ledger/2"  # no pair evidence yet: loaded with none
OLD_SCHEMA = "consensus-validator/ledger/1"  # EMAs over composite scores: loaded with every EMA reset to 0


@dataclass(frozen=True)
class MinerEntry:
    """One miner's part of one round, as the ledger needs it."""

    miner: str
    share: float  # amount / pool of the round, 0..1 (0 when the pool is 0)
    emission: int  # units paid
    in_consensus: bool
    failed: bool
    canary: float | None = None  # accuracy 0..1 on this round's known answer; None: not a canary round
    verified: bool | None = None  # a task round: right by the task's verifier (tasks.verify); None: not a task round

    def __post_init__(self) -> None:
        if not (0.0 <= self.share <= 1.0) or math.isnan(self.share):
            raise LedgerError(f"miner {self.miner!r}: share {self.share!r} is not in [0, 1]")
        if self.canary is not None and (not (0.0 <= self.canary <= 1.0) or math.isnan(self.canary)):
            raise LedgerError(f"miner {self.miner!r}: canary accuracy {self.canary!r} is not in [0, 1]")


@dataclass(frozen=True)
class MinerTotals:
    rounds: int = 0
    answered: int = 0
    in_consensus: int = 0
    emissions: int = 0
    ema: float = 0.0  # EMA of the paid share
    last_round: str | None = None
    canary_rounds: int = 0
    canary_accuracy: float = 1.0  # EMA of the canary accuracy (1.0 until the first canary round)
    tasks: int = 0  # task rounds the miner was asked (docs/daemon.md "Tasks")
    tasks_right: int = 0  # of them, answered right by the task's verifier: the earned trust (tasks.trust)


@dataclass(frozen=True)
class PairTotals:
    """Two miners' evidence of being one operator, counted from the first round they were close."""

    together: int = 0  # rounds both answered
    close: int = 0  # of them, rounds the pair was far more alike than the round (consensus.identity.close_pairs)
    first_later: int = 0  # close rounds in which the first miner (in name order) arrived later
    second_later: int = 0


def pair_key(first: str, second: str) -> str:
    """The ledger's key of a pair of miners (names in order, a tab between: miner ids are from a file or a chain)."""
    a, b = sorted((first, second))
    return f"{a}\t{b}"


@dataclass(frozen=True)
class Ledger:
    alpha: float = 0.1
    canary_alpha: float = 0.3
    last_sequence: int = 0
    last_round_id: str | None = None
    rounds: int = 0
    no_quorum: int = 0
    emitted: int = 0
    canaries: int = 0  # canary rounds applied (with quorum)
    canaries_right: int = 0  # of them, rounds whose dominant cluster gave the known answer
    miners: Mapping[str, MinerTotals] = field(default_factory=dict)
    pairs: Mapping[str, PairTotals] = field(default_factory=dict)
    # hotkeys ``without`` dropped since the last round applied (sorted): the daemon stores them with the next
    # round's input, so a ledger rebuilt from the records drops them too; ``apply`` clears them
    forgotten: tuple[str, ...] = ()
    ticks: int = 0  # ticks completed (every committee of the tick applied)
    last_tick: int = 0  # the last completed tick's number
    last_tick_committees: int = 0  # how many committees (rounds) it had
    open_tick: OpenTick | None = None  # a tick with committees still to come: their shares wait here

    def __post_init__(self) -> None:
        for name in ("alpha", "canary_alpha"):
            value = getattr(self, name)
            if not (0.0 < value <= 1.0):
                raise LedgerError(f"{name} {value!r} is not in (0, 1]")

    def apply(
        self,
        sequence: int,
        round_id: str,
        entries: Sequence[MinerEntry],
        *,
        no_quorum: bool,
        consensus_right: bool | None = None,
        close: Sequence[ClosePair] = (),
        comparable: Sequence[str] | None = None,
        tick: TickPart | None = None,
    ) -> Ledger:
        """The ledger after round ``sequence``; ``consensus_right`` is set on canary rounds only; ``close``: the
        round's close pairs (``Evaluation.close_pairs``); ``comparable``: the miners whose answers could be
        compared (``Evaluation.comparable``; a round of one-word answers says nothing of who copies whom),
        every miner that answered when not given; ``tick``: which tick and committee the round is (None: a tick
        of its own, one committee)."""
        if sequence != self.last_sequence + 1:
            raise LedgerError(
                f"round {round_id!r} has sequence {sequence}; the ledger expects {self.last_sequence + 1}"
            )
        paid = 0 if no_quorum else sum(e.emission for e in entries)
        counted = paid > 0  # a round that paid nobody says nothing about who deserves weight
        seen = {e.miner for e in entries}
        if len(seen) != len(entries):
            raise LedgerError(f"round {round_id!r} lists a miner twice")
        miners = dict(self.miners)
        ticks, last_tick, last_committees = self.ticks, self.last_tick, self.last_tick_committees
        opened = self.open_tick
        if opened is not None and (tick is None or tick.tick != opened.tick):
            # the open tick's last committees are not in these rounds (a selection of stored rounds): fold it now
            miners = {k: replace(m, ema=ema) for k, m, ema in opened.fold(miners, self.alpha)}
            ticks, last_tick, last_committees, opened = ticks + 1, opened.tick, opened.committees, None
        part = tick if tick is not None else TickPart(last_tick + 1, 0, 1)
        opened = (opened or OpenTick.start(part, last_tick, round_id)).add(
            part, round_id, [(e.miner, e.share) for e in entries], counted
        )
        canary_round = not no_quorum and any(e.canary is not None for e in entries)
        for e in entries:
            old = miners.get(e.miner, MinerTotals())
            accuracy, canary_rounds = old.canary_accuracy, old.canary_rounds
            if canary_round and e.canary is not None:
                accuracy = self.canary_alpha * e.canary + (1.0 - self.canary_alpha) * accuracy
                canary_rounds += 1
            miners[e.miner] = MinerTotals(
                rounds=old.rounds + 1,
                answered=old.answered + int(not e.failed),
                in_consensus=old.in_consensus + int(e.in_consensus and not no_quorum),
                emissions=old.emissions + (0 if no_quorum else e.emission),
                ema=old.ema,
                last_round=round_id,
                canary_rounds=canary_rounds,
                canary_accuracy=accuracy,
                tasks=old.tasks + int(e.verified is not None and not no_quorum),
                tasks_right=old.tasks_right + int(e.verified is True and not no_quorum),
            )
        right = canary_round and consensus_right is True
        done = opened.complete
        if done:
            miners = {k: replace(m, ema=ema) for k, m, ema in opened.fold(miners, self.alpha)}
        return replace(
            self,
            last_sequence=sequence,
            last_round_id=round_id,
            rounds=self.rounds + 1,
            no_quorum=self.no_quorum + int(no_quorum),
            emitted=self.emitted + paid,
            miners=miners,
            canaries=self.canaries + int(canary_round),
            canaries_right=self.canaries_right + int(right),
            pairs=self._pairs_after(
                {e.miner for e in entries if not e.failed} if comparable is None else set(comparable), close
            ),
            forgotten=(),
            ticks=ticks + int(done),
            last_tick=part.tick if done else last_tick,
            last_tick_committees=part.committees if done else last_committees,
            open_tick=None if done else opened,
        )

    def _pairs_after(self, answered: set[str], close: Sequence[ClosePair]) -> Mapping[str, PairTotals]:
        if not close and not self.pairs:
            return self.pairs
        pairs = dict(self.pairs)
        now = {pair_key(c.first, c.second): c for c in close}
        for key in sorted({k for k, _ in self._pairs_of(answered)} | set(now)):
            first, second = key.split("\t")
            if first not in answered or second not in answered:
                continue
            old = pairs.get(key, PairTotals())
            c = now.get(key)
            pairs[key] = PairTotals(
                together=old.together + 1,
                close=old.close + int(c is not None),
                first_later=old.first_later + int(c is not None and c.later == first),
                second_later=old.second_later + int(c is not None and c.later == second),
            )
        return pairs

    def without(self, miners: Iterable[str]) -> Ledger:
        """The ledger with ``miners`` gone (their totals and every pair they are in), as if never seen: a hotkey
        that left the subnet (deregistered) leaves the ledger; one that registers later starts from nothing.
        Round counts and what was emitted stay (they are the validator's history, not a miner's). The hotkeys
        dropped join ``forgotten`` until the next round is applied."""
        gone = set(miners)
        if not gone:  # every round's fold asks with its forgotten hotkeys, almost always none: no pass over the pairs
            return self
        kept = {k: m for k, m in self.miners.items() if k not in gone}
        pairs = {k: p for k, p in self.pairs.items() if not set(k.split("\t")) & gone}
        if len(kept) == len(self.miners) and len(pairs) == len(self.pairs):
            return self
        dropped = (set(self.miners) | {n for k in self.pairs for n in k.split("\t")}) & gone
        return replace(self, miners=kept, pairs=pairs, forgotten=tuple(sorted(dropped | set(self.forgotten))))

    def links(
        self, *, min_rounds: int, share: float, lead: float, among: Iterable[str] | None = None
    ) -> tuple[Link, ...]:
        """Linked pairs of miners (``consensus.identity.links``) from the pair evidence; with ``among``, only the
        pairs of those miners (one committee's: its pairs are looked up, not every pair of the ledger read)."""
        # ignore[misc]: split gives tuple[str, ...]; a pair's key is always two hotkeys joined by a tab
        return links(
            {
                tuple(k.split("\t")): (p.together, p.close, p.first_later, p.second_later)  # type: ignore[misc]
                for k, p in self._pairs_of(among)
            },
            min_rounds=min_rounds,
            share=share,
            lead=lead,
        )

    def _pairs_of(self, among: Iterable[str] | None) -> Iterable[tuple[str, PairTotals]]:
        if among is None:
            return self.pairs.items()
        names = sorted(set(among))
        if len(names) * (len(names) - 1) // 2 >= len(self.pairs):
            present = set(names)
            return ((k, p) for k, p in self.pairs.items() if set(k.split("\t")) <= present)
        keys = (f"{a}\t{b}" for i, a in enumerate(names) for b in names[i + 1 :])
        return ((k, self.pairs[k]) for k in keys if k in self.pairs)

    def weights(self) -> dict[str, float]:
        """``ema * canary_accuracy`` normalised to sum to 1; all 0 while nothing was paid; empty without miners."""
        raw = {k: m.ema * m.canary_accuracy for k, m in sorted(self.miners.items())}
        total = sum(raw.values())
        if total <= 0:
            return {k: 0.0 for k in raw}
        return {k: v / total for k, v in raw.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "alpha": self.alpha,
            "canary_alpha": self.canary_alpha,
            "last_sequence": self.last_sequence,
            "last_round_id": self.last_round_id,
            "rounds": self.rounds,
            "no_quorum": self.no_quorum,
            "emitted": self.emitted,
            "canaries": self.canaries,
            "canaries_right": self.canaries_right,
            "miners": {
                k: {
                    "rounds": m.rounds,
                    "answered": m.answered,
                    "in_consensus": m.in_consensus,
                    "emissions": m.emissions,
                    "ema": m.ema,
                    "last_round": m.last_round,
                    "canary_rounds": m.canary_rounds,
                    "canary_accuracy": m.canary_accuracy,
                    "tasks": m.tasks,
                    "tasks_right": m.tasks_right,
                }
                for k, m in sorted(self.miners.items())
            },
            "pairs": {
                k: {
                    "together": p.together,
                    "close": p.close,
                    "first_later": p.first_later,
                    "second_later": p.second_later,
                }
                for k, p in sorted(self.pairs.items())
            },
            # absent when empty: a ledger with nothing forgotten since its last round reads as before
            **({"forgotten": list(self.forgotten)} if self.forgotten else {}),
            "ticks": self.ticks,
            "last_tick": self.last_tick,
            "last_tick_committees": self.last_tick_committees,
            **({"open_tick": self.open_tick.to_json()} if self.open_tick is not None else {}),
            "weights": self.weights(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Ledger:
        """A stored ledger; a ``ledger/1`` one keeps its counts and totals, with every EMA restarted at 0.

        Old EMAs ran over composite scores, which credited copies and junk
        that were paid nothing; carrying them over would keep that weight.
        """
        schema = data.get("schema") if isinstance(data, Mapping) else None
        if schema not in (SCHEMA, V2_SCHEMA, OLD_SCHEMA):
            raise LedgerError(f"not a ledger (schema {schema!r}, expected {SCHEMA!r}, {V2_SCHEMA!r} or {OLD_SCHEMA!r})")
        try:
            miners = {str(k): MinerTotals(**v) for k, v in data["miners"].items()}
            pairs = {str(k): PairTotals(**v) for k, v in data.get("pairs", {}).items()}
            if schema == OLD_SCHEMA:
                miners = {k: replace(m, ema=0.0) for k, m in miners.items()}
            forgotten = data.get("forgotten", [])
            if not isinstance(forgotten, list) or not all(isinstance(h, str) for h in forgotten):
                raise TypeError(f"forgotten must be a list of hotkeys, got {forgotten!r}")
            return cls(
                alpha=float(data["alpha"]),
                canary_alpha=float(data.get("canary_alpha", 0.3)),
                last_sequence=int(data["last_sequence"]),
                last_round_id=data["last_round_id"],
                rounds=int(data["rounds"]),
                no_quorum=int(data["no_quorum"]),
                emitted=int(data["emitted"]),
                canaries=int(data.get("canaries", 0)),
                canaries_right=int(data.get("canaries_right", 0)),
                miners=miners,
                pairs=pairs,
                forgotten=tuple(sorted(set(forgotten))),
                # a ledger written before ticks: every round was a tick of one committee
                ticks=int(data.get("ticks", data["rounds"])),
                last_tick=int(data.get("last_tick", data["rounds"])),
                last_tick_committees=int(data.get("last_tick_committees", 1 if data["rounds"] else 0)),
                open_tick=OpenTick.from_json(data["open_tick"]) if data.get("open_tick") is not None else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LedgerError(f"malformed ledger: {exc}") from exc
