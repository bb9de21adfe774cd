"""Task rounds on the recorded network (issue 44, item 7): the recorded task ladder handed to the daemon.

``benchmarks.network --tasks SHARE`` runs the product's ``Daemon`` with a task source beside the free-form
prompts. The tasks are the ones ``benchmarks.task_record`` recorded real local models answering
(``benchmarks/results/tasks/<rung>.jsonl``): each rung (a model, greedy or degraded) has a recorded text per task
(family, reasoning-gym version, seed, config). Here:

- ``load_ladder`` reads the recordings: the rungs that answered enough tasks (``min_cover`` of the best covered
  rung's count; a rung recorded less is left out and named), each rung's accuracy on the **accuracy** draw (the
  product's extraction and the task's own verifier, ``tasks.verify``), and the **network** draw's tasks every
  kept rung answered: what the network asks. While the network draw is thinner than ``min_network`` tasks
  (it is recorded after the accuracy draw), the accuracy draw is split instead: its tasks in even places
  (family by family) are asked on the network, those in odd places measure the accuracy, and ``Ladder.draw``
  says ``accuracy-split`` so the figures say so.
- ``LabTaskSource`` is the product's ``TaskSource`` whose task of round ``sequence`` is a recorded one (a secret
  order of the network's tasks, cycled: with a thin recording tasks repeat, which the product's source never
  does), regenerated from its spec by ``tasks.source.generate``: the daemon stores it with the round and its
  verifier re-verifies the recorded text exactly as in production.
- ``TaskNetwork`` answers a task prompt for every identity: honest identities and farms with their rung's
  recorded text (``with_rungs``: the free-form model ranked i of M serves rung ``i * R // M``, best to best),
  copycats with their partner's, and the adversaries:

  - ``cache``: serves the best rung's recorded answer to another task of the same family (the answer a
    strong model was paid for earlier, or one recorded for another seed), never the task's own (the product
    never asks a question twice);
  - ``wrong``: a wrong majority: every member serves one wrong answer (variants of one text): the strongest
    rung's short readable wrong answer when there is one (a plausible shared mistake), else ``Answer: none``;
  - ``weak``: the weakest rung's own answer, in variants (on free-form rounds the set's worst model's answer,
    in variants: ``benchmarks.recorded_network``);
  - ``sybil``: its off-topic text, or the worst rung's answer when it votes for the worst model;
  - ``guess``: a cache miner that keeps the answer paid most often: the family's most common answer (over
    ``GUESS_SAMPLE`` tasks the public generator draws at the task's config), whatever the question (on free-form
    rounds it serves the best model's answers, as the cache miner does).

Free-form prompts go to ``benchmarks.recorded_network.RecordedNetwork`` unchanged.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.recorded_network import OFF_TOPIC, RecordedNetwork, RecordedPersona
from benchmarks.validity_report import spearman
from consensus.types import Response
from tasks.source import Task, TaskSpec, generate
from tasks.verify import verify
from validator.daemon.committee_draw import derive
from validator.daemon.task_source import TaskSource
from validator.settings.sections import TaskSettings

DEFAULT_DIR = Path(__file__).resolve().parent / "results" / "tasks"
NO_ANSWER = "Answer: none"
GUESS_SAMPLE = 500  # tasks per family the guess miner draws from the public generator to find the usual answer


@dataclass(frozen=True)
class Ladder:
    """The recorded ladder as the network uses it (module docstring)."""

    rungs: tuple[str, ...]  # best first by accuracy on the accuracy draw
    accuracy: Mapping[str, float]  # rung -> share right on the accuracy draw (the product's verifier)
    accuracy_tasks: int  # tasks of the accuracy draw each rung was measured on
    tasks: tuple[Task, ...]  # the network's tasks, answered by every rung
    texts: Mapping[str, Mapping[str, str]]  # task prompt -> rung -> recorded text
    right: Mapping[str, Mapping[str, bool]]  # task prompt -> rung -> right by the verifier
    wrong: Mapping[str, str]  # task prompt -> the wrong majority's answer
    cached: Mapping[str, str]  # task prompt -> the cache miner's answer (another task of its family)
    draw: str  # "network" or "accuracy-split"
    left_out: tuple[str, ...] = ()  # rungs recorded on too few tasks
    guessed: Mapping[str, str] = field(default_factory=dict)  # task prompt -> the guess miner's answer

    def summary(self) -> dict[str, Any]:
        return {
            "task_draw": self.draw,
            "task_network_tasks": len(self.tasks),
            "task_accuracy_tasks": self.accuracy_tasks,
            "task_rungs": list(self.rungs),
            "task_rungs_left_out": list(self.left_out),
            "task_accuracy": {r: round(self.accuracy[r], 4) for r in self.rungs},
            "task_network_right": {
                r: round(sum(self.right[t.prompt][r] for t in self.tasks) / max(len(self.tasks), 1), 4)
                for r in self.rungs
            },
        }


def _rows(directory: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(directory.glob("*.jsonl")):
        rows = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a half-written last line of a recording still running
        if rows:
            out[path.stem] = rows
    return out


def _key(row: Mapping[str, Any]) -> tuple[str, str, int, str]:
    return (row["draw"], row["family"], int(row["seed"]), json.dumps(row.get("config") or {}, sort_keys=True))


def load_ladder(
    directory: Path = DEFAULT_DIR,
    *,
    min_network: int = 30,
    min_cover: float = 0.8,
    families: Collection[str] = (),
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> Ladder:
    """The recorded ladder under ``directory`` (module docstring); ``families``: only the tasks of these (both
    draws; a task set without the others, measured on the same recordings); ``configs``: only the answers to
    tasks of these families at exactly these configs (a directory that also holds an earlier task set's)."""

    def wanted(row: Mapping[str, Any]) -> bool:
        if families and row["family"] not in families:
            return False
        if configs is None:
            return True
        config = configs.get(row["family"])
        return config is not None and _key(row)[3] == json.dumps(dict(config), sort_keys=True)

    by_rung = {rung: {_key(r): r for r in rows if wanted(r)} for rung, rows in _rows(directory).items()}
    by_rung = {rung: keyed for rung, keyed in by_rung.items() if keyed}
    if not by_rung:
        raise SystemExit(f"{directory}: no recorded task answers (python -m benchmarks.task_record record)")
    # a rung's coverage counts the tasks at least half the rungs answered: answers only one or two rungs have
    # (a chunk still being recorded, a draw recorded while the set had other families) do not raise the bar
    held = Counter(k for keyed in by_rung.values() for k in keyed)
    common_enough = {k for k, n in held.items() if 2 * n >= len(by_rung)}
    cover = {r: len(common_enough & set(v)) for r, v in by_rung.items()}
    most = max(cover.values())
    kept = sorted(r for r in by_rung if cover[r] >= min_cover * most)
    left_out = tuple(sorted(set(by_rung) - set(kept)))
    common = set.intersection(*(set(by_rung[r]) for r in kept))
    network = sorted(k for k in common if k[0] == "network")
    accuracy = sorted((k for k in common if k[0] == "accuracy"), key=lambda k: (k[1], k[2]))
    draw = "network"
    if len(network) < min_network:
        draw = "accuracy-split"
        place: dict[str, int] = {}
        split: tuple[list[Any], list[Any]] = ([], [])
        for k in accuracy:  # family by family, alternately: both halves hold every family
            split[place.get(k[1], 0) % 2].append(k)
            place[k[1]] = place.get(k[1], 0) + 1
        network, accuracy = split
    tasks = {k: generate(TaskSpec(k[1], k[2], json.loads(k[3]))) for k in [*network, *accuracy]}
    right = {k: {r: verify(tasks[k], by_rung[r][k].get("text") or "").right for r in kept} for k in tasks}
    acc = {r: sum(right[k][r] for k in accuracy) / max(len(accuracy), 1) for r in kept}
    rungs = tuple(sorted(kept, key=lambda r: (-acc[r], r)))
    asked = tuple(tasks[k] for k in network)
    texts = {tasks[k].prompt: {r: by_rung[r][k].get("text") or "" for r in kept} for k in network}
    wrong: dict[str, str] = {}
    for k in network:
        t = tasks[k]
        choice = NO_ANSWER
        for r in rungs:  # the strongest rung's short readable wrong answer: a plausible shared mistake
            v = verify(t, texts[t.prompt][r])
            if not v.right and v.answer is not None and len(v.answer) <= 40:
                choice = f"Answer: {v.answer}"
                break
        if verify(t, choice).right:  # pragma: no cover - "none" answers no generated task
            raise SystemExit(f"task {k}: no wrong answer found")
        wrong[t.prompt] = choice
    cached: dict[str, str] = {}
    for i, k in enumerate(network):
        same = [j for j, o in enumerate(network) if o[1] == k[1] and j != i]
        others = same or [j for j in range(len(network)) if j != i]
        j = min(others, key=lambda j: ((i - j) % len(network), j)) if others else i  # the nearest one before
        cached[tasks[k].prompt] = texts[tasks[network[j]].prompt][rungs[0]] if others else NO_ANSWER
    modes: dict[str, str] = {}
    for k in network:
        if k[1] + k[3] not in modes:  # the generator's own seeds, far from any draw's: what anyone can run
            sample = (generate(TaskSpec(k[1], 10**9 + j, json.loads(k[3]))).answer for j in range(GUESS_SAMPLE))
            modes[k[1] + k[3]] = f"Answer: {Counter(str(a) for a in sample).most_common(1)[0][0]}"
    return Ladder(
        guessed={tasks[k].prompt: modes[k[1] + k[3]] for k in network},
        rungs=rungs,
        accuracy=acc,
        accuracy_tasks=len(accuracy),
        tasks=asked,
        texts=texts,
        right={tasks[k].prompt: right[k] for k in network},
        wrong=wrong,
        cached=cached,
        draw=draw,
        left_out=left_out,
    )


LEADS = ("Let me work it out.", "Here is my answer.", "Solved step by step.", "Checked twice.", "Done.")


def task_variant(text: str, variant: int) -> str:
    """A variant of a task answer for the ``variant``-th identity sharing it: a lead line before it (its
    last line, the answer, kept readable); variant 0 is the text itself."""
    if variant == 0 or not text:
        return text
    return f"{LEADS[(variant - 1) % len(LEADS)]} ({variant})\n{text}"


class LabTaskSource(TaskSource):
    """The product's task source asking the ladder's recorded tasks (module docstring)."""

    def __init__(self, settings: TaskSettings, secret: bytes, tasks: Sequence[Task], share: float) -> None:
        super().__init__(settings, secret, every_round=False)
        if not tasks:
            raise SystemExit("the recorded ladder has no network tasks")
        self.share = share
        self.recorded = tuple(tasks)
        self.order = sorted(range(len(tasks)), key=lambda i: derive(secret, "lab-task-order", i))

    def task_for(self, sequence: int) -> Task:
        return self.recorded[self.order[sequence % len(self.order)]]


def with_rungs(people: Sequence[RecordedPersona], models: Sequence[str], rungs: Sequence[str]) -> list[RecordedPersona]:
    """Each identity serving a free-form model (honest, farm; a copycat copies its partner) also serves a rung:
    the model ranked i of M (``models`` best first) serves rung ``i * R // M`` (``rungs`` best first); a weak
    identity serves the weakest rung, a sybil voting for the worst model the worst rung."""
    rank = {m: i for i, m in enumerate(models)}
    out = []
    for p in people:
        rung = None
        if p.kind == "weak" or (p.kind == "sybil" and p.model is not None):
            rung = rungs[-1]
        elif p.model is not None and p.model in rank:
            rung = rungs[min(len(rungs) - 1, rank[p.model] * len(rungs) // len(models))]
        out.append(dataclasses.replace(p, rung=rung))
    return out


class TaskNetwork(RecordedNetwork):
    """``RecordedNetwork`` that also answers the ladder's task prompts (module docstring)."""

    def __init__(
        self,
        answers: Mapping[str, Mapping[str, str]],
        personas: Sequence[RecordedPersona],
        ladder: Ladder,
        arrival: str = "order",
    ) -> None:
        super().__init__(answers, personas, arrival)
        self.ladder = ladder

    def answer(
        self, prompt: str, members: Collection[str] | None = None
    ) -> tuple[tuple[Response, ...], dict[str, str]]:
        texts = self.ladder.texts.get(prompt)
        if texts is None:
            return super().answer(prompt, members)
        asked = [p for p in self.specs if members is None or p.hotkey in members]
        present = {p.hotkey for p in asked}
        shared: dict[str, int] = {}
        responses = []
        for p in asked:
            text = ""
            if p.kind in ("honest", "farm") and p.rung is not None:
                text = texts.get(p.rung, "")
            elif p.kind == "copycat":
                partner = self.personas.get(p.partner or "")
                if p.partner in present and partner is not None and partner.rung is not None:
                    text = texts.get(partner.rung, "")
            elif p.kind == "cache":
                text = self.ladder.cached[prompt]
            elif p.kind == "guess":
                text = self.ladder.guessed[prompt]
            elif p.kind == "wrong":
                text = self.ladder.wrong[prompt]
            elif p.kind in ("weak", "sybil"):
                text = texts.get(p.rung, "") if p.rung is not None else OFF_TOPIC
            if p.kind in ("farm", "sybil", "wrong", "weak"):
                text = task_variant(text, self.variant_number(p.operator or p.kind, shared))
            responses.append(
                Response(p.hotkey, text, 1.0 + 0.01 * len(responses), error=None if text else "empty", entity=p.entity)
            )
        return tuple(responses), {r.miner: "no answer" for r in responses if r.error}


class Tally:
    """Each identity's units and rounds asked, task rounds and free-form rounds apart, read from the records the
    daemon wrote (``add`` after each tick, its round reports)."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.units: dict[str, dict[str, int]] = {"task": {}, "free": {}}
        self.asked: dict[str, dict[str, int]] = {"task": {}, "free": {}}
        self.rounds = {"task": 0, "free": 0}
        # (kind, miner) -> reason -> answers: why each identity's answers were or were not in consensus
        self.reasons: dict[tuple[str, str], dict[str, int]] = {}

    def add(self, reports: Sequence[Any]) -> None:
        for report in reports:
            record = self.reader.record(report.round_id)
            kind = "free" if record.task is None else "task"
            self.rounds[kind] += 1
            for r in record.responses:
                self.units[kind][r.miner] = self.units[kind].get(r.miner, 0) + r.emissions.amount
                self.asked[kind][r.miner] = self.asked[kind].get(r.miner, 0) + 1
                why = self.reasons.setdefault((kind, r.miner), {})
                why[r.reason] = why.get(r.reason, 0) + 1

    def per_round(self, miner: str, kind: str | None = None) -> float:
        """Units per round asked (``kind``: task or free-form rounds only; None: every round)."""
        kinds = ("task", "free") if kind is None else (kind,)
        units = sum(self.units[k].get(miner, 0) for k in kinds)
        asked = sum(self.asked[k].get(miner, 0) for k in kinds)
        return units / asked if asked else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def task_figures(
    ladder: Ladder | None,
    tally: Tally,
    people: Sequence[RecordedPersona],
    weights: Mapping[str, float],
    twins: Sequence[str],
    peers: Sequence[str],
    quality: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The task network's figures: the ladder's order (final weights and task pay per rung against the accuracy
    draw), the cache miner and the weak majority per round asked against honest identities (``twins``: the
    median model's; ``peers``: the five models nearest it), the wrong majority's task units; without a ``ladder``
    (no task rounds) the adversaries' figures alone. With the models' ``quality`` (the truth's lc_winrate),
    ``spearman_free_pay``: each model's honest identities' units per free-form round against it (the free-form
    evaluation alone, whatever the task rounds pay)."""
    honest = [p for p in people if p.kind == "honest" and (p.rung is not None or ladder is None)]
    rungs = [r for r in ladder.rungs if any(p.rung == r for p in honest)] if ladder is not None else []
    weight = [_mean([weights.get(p.hotkey, 0.0) for p in honest if p.rung == r]) for r in rungs]
    pay = [_mean([tally.per_round(p.hotkey, "task") for p in honest if p.rung == r]) for r in rungs]
    acc = [ladder.accuracy[r] for r in rungs] if ladder is not None else []
    honest_task = _mean([tally.per_round(p.hotkey, "task") for p in honest])
    of = {kind: [p.hotkey for p in people if p.kind == kind] for kind in ("cache", "guess", "wrong", "weak")}
    twin = _mean([tally.per_round(h) for h in twins])
    peer = _mean([tally.per_round(h) for h in peers])
    weak = _mean([tally.per_round(w) for w in of["weak"]])
    out: dict[str, Any] = {"task_rounds": tally.rounds["task"], "free_rounds": tally.rounds["free"]}
    if quality:
        models = sorted({p.model for p in people if p.kind == "honest" and p.model in quality})
        free = [
            _mean([tally.per_round(p.hotkey, "free") for p in people if p.kind == "honest" and p.model == m])
            for m in models
        ]
        out["spearman_free_pay"] = round(spearman(free, [quality[m] for m in models]), 4) if len(models) > 1 else None
    if ladder is not None:
        out.update(
            rung_mean_weight={r: round(w, 6) for r, w in zip(rungs, weight, strict=True)},
            rung_task_units_per_round={r: round(u, 2) for r, u in zip(rungs, pay, strict=True)},
            rung_spearman_weights=round(spearman(weight, acc), 4) if len(rungs) > 1 else None,
            rung_spearman_task_pay=round(spearman(pay, acc), 4) if len(rungs) > 1 else None,
        )
    if of["cache"]:
        out["cache_per_task_round"] = _ratio(_mean([tally.per_round(c, "task") for c in of["cache"]]), honest_task)
        out["cache_per_free_round"] = _ratio(
            _mean([tally.per_round(c, "free") for c in of["cache"]]),
            _mean([tally.per_round(p.hotkey, "free") for p in honest]),
        )
    copies = [p for p in people if p.kind == "copycat" and p.partner]
    if copies:
        # the copycat on task rounds (a task's right answer is a few words: identical short answers are agreement
        # by design, and only an answer of copies.copy_min_words words can be a copy): its units per task round
        # over its partner's (the honest identity it copies), and its task answers by the record's reason
        for kind in ("task", "free"):
            mine = sum(tally.units[kind].get(p.hotkey, 0) for p in copies)
            theirs = sum(tally.units[kind].get(p.partner or "", 0) for p in copies)
            out[f"copycat_{kind}_units_vs_partner"] = _ratio(mine, theirs)
        reasons: dict[str, int] = {}
        for p in copies:
            for why, n in tally.reasons.get(("task", p.hotkey), {}).items():
                reasons[why] = reasons.get(why, 0) + n
        out["copycat_task_reasons"] = dict(sorted(reasons.items()))
    if of["guess"]:
        out["guess_per_task_round"] = _ratio(_mean([tally.per_round(c, "task") for c in of["guess"]]), honest_task)
    if of["wrong"]:
        out["wrong_task_units"] = sum(tally.units["task"].get(w, 0) for w in of["wrong"])
        out["wrong_free_per_round"] = _ratio(
            _mean([tally.per_round(w, "free") for w in of["wrong"]]),
            _mean([tally.per_round(p.hotkey, "free") for p in honest]),
        )
    if of["weak"]:
        out["weak_per_identity"] = _ratio(weak, twin)
        out["weak_per_identity_vs_peers"] = _ratio(weak, peer)
        for kind in ("task", "free"):
            out[f"weak_per_{kind}_round_vs_peers"] = _ratio(
                _mean([tally.per_round(w, kind) for w in of["weak"]]), _mean([tally.per_round(h, kind) for h in peers])
            )
    return out
