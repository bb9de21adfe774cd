"""What-if: stored rounds re-evaluated under a changed configuration, and what it does to every miner.

``run_whatif`` streams the selected stored rounds through an engine
(``validator.replaying``: in-process or Ray), each round evaluated
under the new settings with its stored embeddings (re-embedded when the
model or long-text policy changed) and its new record written beside the
original (``rounds/<round>/replays/<whatif-id>/``; the originals are never
written). The results come back in round order and are folded into two
ledgers from the first selected round on (``emissions.ledger``): the
original records' (with the ``moving_average_alpha`` they were made with)
and the new ones' (with the new settings'), each dropping the hotkeys a round's
input says the daemon forgot before it (``Ledger.without``). ``WhatIf.file`` is the
report (``validator.records.whatif_report.WhatIfFile``): per miner old vs new total emissions, final weight and rank; per
round consensus reached old/new and the members gained and lost. Its bytes
(``storage.codec.dumps``) hold nothing that depends on the engine, the
machine or the time, so every engine writes the same ``whatif.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from consensus.embedder import Embedder
from emissions.ledger import Ledger
from emissions.ticks import TickPart
from storage import keys
from storage.base import Store
from validator.records.failed_round import Failure
from validator.records.reader import RoundReader
from validator.records.whatif_report import ConfigChange, MinerMove, WhatIfFile, WhatIfRow
from validator.replaying.engine import Executor, executor_for, run
from validator.replaying.jobs import JobResult, Side
from validator.replaying.selection import RoundSelection, selected_keys
from validator.replaying.spec import Job
from validator.settings import Settings
from validator.terminal import safe


def whatif_id_for(settings: Settings, selection: RoundSelection) -> str:
    """A deterministic id: the same config and selection name the same what-if (and its records)."""
    basis = {
        "config": settings.as_dict(),
        "round_ids": sorted(selection.round_ids or ()),
        "since": selection.since,
        "until": selection.until,
    }
    return "whatif-" + hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:12]


@dataclass
class _Fold:
    """One side's ledger, folded round by round (it starts at the first round that side has)."""

    ledger: Ledger | None = None

    def apply(
        self, round_id: str, side: Side | None, forgotten: tuple[str, ...] = (), tick: TickPart | None = None
    ) -> None:
        """Fold one round, after dropping the hotkeys the daemon forgot before it (its input's marker)."""
        if side is None:
            return
        if self.ledger is None:
            self.ledger = Ledger(alpha=side.alpha, canary_alpha=side.canary_alpha)
        self.ledger = self.ledger.without(forgotten).apply(
            self.ledger.last_sequence + 1,
            round_id,
            side.entries,
            no_quorum=side.no_quorum,
            consensus_right=side.consensus_right,
            close=side.close,
            comparable=side.comparable,
            tick=tick,
        )


@dataclass
class WhatIf:
    """The folded outcome of a what-if run (``to_json`` is ``whatif.json``)."""

    whatif_id: str
    source: str
    selection: RoundSelection
    config: dict[str, Any]
    rounds: list[WhatIfRow] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    skipped: int = 0
    old: _Fold = field(default_factory=_Fold)
    new: _Fold = field(default_factory=_Fold)
    old_config: dict[str, Any] | None = None
    new_config: dict[str, Any] | None = (
        None  # the first new record's: what was evaluated (validator.replaying.original_settings)
    )

    def add(self, result: JobResult) -> None:
        """Fold one round's result (results must come in round order)."""
        if result.status == "skipped":
            self.skipped += 1
            return
        if result.status != "ok" or result.new is None:
            self.failures.append(Failure(result.error or "", result.round_id, key=result.key))
            return
        rid = result.round_id or result.key
        self.old.apply(rid, result.old, result.forgotten, result.tick)
        self.new.apply(rid, result.new, result.forgotten, result.tick)
        old, new = result.old, result.new
        before = set(old.members) if old is not None else set()
        self.rounds.append(
            WhatIfRow(
                round_id=rid,
                original=old is not None,
                reached_old=None if old is None else old.reached,
                reached_new=new.reached,
                score_old=None if old is None else old.score,
                score_new=new.score,
                members_gained=tuple(sorted(set(new.members) - before)),
                members_lost=tuple(sorted(before - set(new.members))),
                embeddings_reused=result.embeddings_reused,
            )
        )

    def miners(self) -> dict[str, dict[str, Any]]:
        """Per miner: total emissions, final weight and rank (1 = highest weight), old and new."""
        old_l, new_l = self.old.ledger, self.new.ledger
        old_w = old_l.weights() if old_l is not None else {}
        new_w = new_l.weights() if new_l is not None else {}
        names = sorted(set(old_w) | set(new_w))
        old_rank, new_rank = _ranks(old_w, names), _ranks(new_w, names)
        out = {}
        for name in names:
            e_old = old_l.miners[name].emissions if old_l is not None and name in old_l.miners else 0
            e_new = new_l.miners[name].emissions if new_l is not None and name in new_l.miners else 0
            w_old, w_new = old_w.get(name, 0.0), new_w.get(name, 0.0)
            out[name] = {
                "emissions_old": e_old,
                "emissions_new": e_new,
                "emissions_change": e_new - e_old,
                "weight_old": w_old,
                "weight_new": w_new,
                "weight_change": w_new - w_old,
                "rank_old": old_rank[name],
                "rank_new": new_rank[name],
                "rank_change": old_rank[name] - new_rank[name],
            }
        return out

    def file(self) -> WhatIfFile:
        """What ``whatif.json`` holds (``validator.records.whatif_report``)."""
        ids = self.selection.round_ids
        return WhatIfFile(
            whatif_id=self.whatif_id,
            source=self.source,
            round_ids=tuple(sorted(ids)) if ids else None,
            since=self.selection.since,
            until=self.selection.until,
            failed=len(self.failures),
            skipped=self.skipped,
            config_changes=tuple(
                ConfigChange(**c) for c in config_changes(self.old_config, self.new_config or self.config)
            ),
            miners={m: MinerMove(**v) for m, v in self.miners().items()},
            rounds=tuple(self.rounds),
            failures=tuple(f.whatif_row() for f in self.failures),
            config=self.config,
        )

    def to_json(self) -> dict[str, Any]:
        return self.file().to_json()


def _ranks(weights: dict[str, float], names: list[str]) -> dict[str, int]:
    order = sorted(names, key=lambda n: (-weights.get(n, 0.0), n))
    return {name: i + 1 for i, name in enumerate(order)}


def config_changes(old: dict[str, Any] | None, new: dict[str, Any]) -> list[dict[str, Any]]:
    """Every recorded setting whose value differs between the originals' config and the new one."""
    if old is None:
        return []
    out = []
    for section in sorted(set(old) | set(new)):
        a, b = old.get(section) or {}, new.get(section) or {}
        for name in sorted(set(a) | set(b)):
            if a.get(name) != b.get(name):
                out.append({"setting": f"{section}.{name}", "old": a.get(name), "new": b.get(name)})
    return out


def fold(
    results: Iterable[JobResult],
    *,
    whatif_id: str,
    source: str,
    selection: RoundSelection,
    settings: Settings,
    old_config: Callable[[str], dict[str, Any] | None] | None = None,
    new_config: Callable[[str], dict[str, Any] | None] | None = None,
) -> WhatIf:
    """Fold the results (in round order) into a ``WhatIf``; ``old_config(round_id)`` reads an original's config,
    ``new_config(round_id)`` the config its new record was evaluated with.

    The changes listed compare the first original with its new record: a setting that does not apply
    offline is the original's in both (``validator.replaying.original_settings``), so it is never listed.
    """
    out = WhatIf(whatif_id, source, selection, json.loads(json.dumps(settings.as_dict())))  # JSON values, as stored
    for result in results:
        out.add(result)
        if (
            out.old_config is None
            and old_config is not None
            and result.old is not None
            and result.round_id
            and result.status == "ok"
        ):
            out.old_config = old_config(result.round_id)
            out.new_config = new_config(result.round_id) if new_config is not None else None
    return out


def run_whatif(
    store: Store,
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    whatif_id: str,
    source: str,
    selection: RoundSelection = RoundSelection(),
    executor: Executor | None = None,
    on_total: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
) -> WhatIf:
    """Re-evaluate the selected rounds of ``store`` under ``settings`` and fold the outcome.

    ``store`` is the driver's handle (listing, the originals' config); the
    rounds are evaluated here with ``embedder``, or by ``executor`` (Ray
    workers open their own store). ``on_total(n)`` is told the number of
    rounds, ``on_done(k)`` as rounds finish.
    """
    engine = executor_for(store, embedder, None, executor)
    todo = selected_keys(store, selection)
    if on_total is not None:
        on_total(len(todo))

    def config_of(key: str) -> dict[str, Any] | None:
        try:
            return json.loads(json.dumps(RoundReader(store).record_at(key).config.as_plain()))  # JSON values, as stored
        except (OSError, ValueError):
            return None

    results = run(engine, Job.replay(whatif_id, selection), settings, todo, on_done)
    return fold(
        results,
        whatif_id=whatif_id,
        source=source,
        selection=selection,
        settings=settings,
        old_config=lambda rid: config_of(keys.evaluation(rid)),
        new_config=lambda rid: config_of(keys.replay_evaluation(rid, whatif_id)),
    )


def table(report: dict[str, Any], limit: int = 30) -> str:
    """The terminal view of ``whatif.json``: the rounds' summary and the miners whose weight moved most."""

    s = report["summary"]
    lines = [
        f"what-if {report['whatif_id']}: {s['rounds']} round(s) re-evaluated, {s['failed']} failed, "
        f"{s['skipped']} outside the selection; consensus reached {s['reached_old']} -> {s['reached_new']}; "
        f"membership changed in {s['membership_changed']}"
    ]
    for change in report["config_changes"]:
        lines.append(f"  {change['setting']}: {change['old']!r} -> {change['new']!r}")
    header = f"{'miner':<32} {'emissions old':>14} {'new':>14} {'weight old':>10} {'new':>8} {'rank':>9} {'change':>6}"
    lines += ["", header, "-" * len(header)]
    rows = sorted(report["miners"].items(), key=lambda kv: (-abs(kv[1]["weight_change"]), kv[0]))
    for name, m in rows[:limit]:
        lines.append(
            f"{safe(name, 32):<32} {m['emissions_old']:>14,} {m['emissions_new']:>14,} "
            f"{m['weight_old']:>10.4f} {m['weight_new']:>8.4f} "
            f"{str(m['rank_old']) + '->' + str(m['rank_new']):>9} {m['rank_change']:>+6}"
        )
    if len(rows) > limit:
        lines.append(f"... {len(rows) - limit} more miner(s) in whatif.json")
    return "\n".join(lines)
