"""Canaries over time (issue 25, item 5): does a majority that is wrong on canaries end with less weight?

    python -m benchmarks.canaries_over_time [--rounds 50] [--config X.toml] [--set section.field=value ...]
                                            [--out DIR] [--seed 0] [--lm]

The project's own daemon (``validator.daemon.daemon.Daemon``: its canary schedule, ``run_stages``, the
evaluation record, ``validator.records.ledger_entries.entries_from_record`` and ``emissions.ledger.Ledger``) runs
``--rounds`` rounds against a scripted miner set on an in-memory store, with the shipped canary
settings (``daemon.canary_rate`` 0.1, ``canary_seed`` 0: rounds 4, 13, 16 and 20 of 50 ask a
canary) unless ``--set`` says otherwise. The prompts are short factual questions
(``benchmarks/hostile_cases/canaries_over_time.json``): 45 regular ones and 10 canaries with a
reference answer (5 short facts, 5 yes/no).

Eight miners answer every round: three honest (``h-0`` .. ``h-2``, right every time) and five
identities of one operator (``m-0`` .. ``m-4``, no entity declared), each wording its short
answer with its own template (no two share five words of their own, so no rule sees one text).
Two scenarios:

- ``wrong-everywhere``: the five give the wrong short answer in every round (a cheap model that
  is wrong on facts; the validator only knows it on canaries);
- ``wrong-on-canaries``: the five answer like the honest miners on regular rounds and wrong on
  the canaries (what a canary alone can catch).

Expectation: the five end with less ledger weight together than the honest three. The run
prints each canary round (consensus right or not, each group's mean accuracy) and the final
ledger: weight, paid share and canary accuracy per group. Latencies are seeded (``--seed``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.data import CachedEmbedder, VectorCache, read_settings, settings_arguments
from benchmarks.hostile import Row, format_table, lm_settings, open_lm
from benchmarks.hostile_spec import CASES_DIR
from benchmarks.lab import LabConfig
from consensus.types import Response
from validator.settings import Settings

DATA = CASES_DIR / "canaries_over_time.json"
HONEST = ("h-0", "h-1", "h-2")
MAJORITY = ("m-0", "m-1", "m-2", "m-3", "m-4")
# one template per miner: the majority's five, then the honest three (no two miners ever send the same text,
# which would make the later one a copy of the earlier whatever its answer)
TEMPLATES = (
    "It's {x}.",
    "The answer is {x}.",
    "{X}, I believe.",
    "That would be {x}.",
    "Fairly sure it is {x}.",
    "My answer: {x}.",
    "{X} is the answer.",
    "I think it is {x}.",
)
YES_NO = (
    "{x} — that's my answer.",
    "{x}, definitely.",
    "{x}, I believe so.",
    "{x}, I'm quite sure.",
    "{x}, as far as I know.",
    "{x}, that's right.",
    "{x} is my answer.",
    "{x}. I'm confident about that.",
)
SCENARIOS = ("wrong-everywhere", "wrong-on-canaries")
EXPECTATION = (
    "a majority wrong on canaries ends with less ledger weight than the honest minority "
    "(50 daemon rounds, 10% canaries)"
)


def word(template: str, x: str) -> str:
    return template.format(x=x, X=x[:1].upper() + x[1:])


def answers(item: dict[str, Any], canary: bool, scenario: str) -> dict[str, str]:
    """Each miner's text for one prompt."""
    templates = YES_NO if x_is_yes_no(item["right"]) else TEMPLATES
    majority_wrong = canary or scenario == "wrong-everywhere"
    out = {m: word(templates[len(MAJORITY) + k], item["right"]) for k, m in enumerate(HONEST)}
    out.update({m: word(templates[k], item["wrong" if majority_wrong else "right"]) for k, m in enumerate(MAJORITY)})
    return out


def x_is_yes_no(x: str) -> bool:
    return x in ("Yes", "No")


class ScriptedMiners:
    """The daemon's ``Query``: the scripted answers to whatever prompt the daemon asks, seeded latencies."""

    def __init__(
        self, regular: Sequence[dict[str, Any]], canaries: Sequence[dict[str, Any]], scenario: str, seed: int
    ) -> None:
        self.items = {i["prompt"]: (i, False) for i in regular}
        self.items.update({i["prompt"]: (i, True) for i in canaries})
        self.scenario, self.seed, self.asked = scenario, seed, 0

    def __call__(self, prompt: str, on_done: Any = None):
        """on_done: the daemon's progress callback (validator.miners.query.Query); called once, all answered."""
        from validator.daemon.daemon import QueryResult

        item, canary = self.items[prompt]
        self.asked += 1
        rng = random.Random(f"{self.seed}:{self.asked}:{prompt}")
        texts = answers(item, canary, self.scenario)
        responses = tuple(
            Response(m, t, round(rng.uniform(0.8, 2.5) if m in HONEST else rng.uniform(0.5, 1.5), 3))
            for m, t in texts.items()
        )
        if on_done is not None:
            on_done(len(responses), len(responses))
        return QueryResult(responses, {}, 0.0)


def run_scenario(
    settings: Settings,
    scenario: str,
    *,
    rounds: int = 50,
    out: Path = Path("out/hostile"),
    seed: int = 0,
    lm: Any = None,
    data: Path = DATA,
) -> dict[str, Any]:
    """Run the daemon ``rounds`` rounds; the canary rounds and the final ledger's figures per group."""
    from storage.memory import MemoryStore
    from validator.daemon.daemon import Daemon
    from validator.records.reader import RoundReader
    from validator.round.prompt_source import PromptItem

    items = json.loads(data.read_text(encoding="utf-8"))
    regular, canaries = items["regular"], items["canaries"]
    settings = dataclasses.replace(
        settings,
        daemon=dataclasses.replace(settings.daemon, interval_s=0.0),
        output=dataclasses.replace(settings.output, heatmap=False),
    )
    store = MemoryStore()
    daemon = Daemon(
        store=store,
        embedder=CachedEmbedder(VectorCache(out, settings)),
        settings=settings,
        prompts=[PromptItem(i["prompt"]) for i in regular],
        canaries=[PromptItem(i["prompt"], i["reference"]) for i in canaries],
        query=ScriptedMiners(regular, canaries, scenario, seed),
        lm=lm,
    )
    daemon.run(rounds=rounds)
    canary_rounds = []
    for s in range(1, rounds + 1):
        record = RoundReader(store).record(daemon.round_id(s))
        if record.canary is None:
            continue
        acc = {a.miner: a.accuracy for a in record.canary.answers}
        canary_rounds.append(
            {
                "sequence": s,
                "prompt": record.prompt,
                "consensus_right": record.canary.consensus_right,
                "majority_accuracy": sum(acc[m] for m in MAJORITY) / len(MAJORITY),
                "honest_accuracy": sum(acc[m] for m in HONEST) / len(HONEST),
                "majority_paid": sum(r.emissions.share for r in record.responses if r.miner in MAJORITY),
            }
        )
    ledger = daemon.ledger
    weights = ledger.weights()
    paid = {m: ledger.miners[m].emissions / ledger.emitted if ledger.emitted else 0.0 for m in ledger.miners}

    def group(miners: Sequence[str]) -> dict[str, float]:
        return {
            "weight": sum(weights.get(m, 0.0) for m in miners),
            "paid": sum(paid.get(m, 0.0) for m in miners),
            "canary_accuracy": sum(ledger.miners[m].canary_accuracy for m in miners) / len(miners),
        }

    return {
        "scenario": scenario,
        "rounds": rounds,
        "canary_rounds": canary_rounds,
        "majority": group(MAJORITY),
        "honest": group(HONEST),
        "canaries_right": ledger.canaries_right,
        "canaries": ledger.canaries,
    }


def to_row(result: dict[str, Any], mode: str) -> Row:
    mj, hn = result["majority"], result["honest"]
    measured = (
        f"weight: majority {mj['weight']:.3f} vs honest {hn['weight']:.3f}; paid {mj['paid']:.3f} / "
        f"{hn['paid']:.3f}; canary accuracy {mj['canary_accuracy']:.2f} / {hn['canary_accuracy']:.2f}"
    )
    note = (
        f"{result['canaries']} canary rounds, consensus right in {result['canaries_right']} "
        f"({', '.join(str(c['sequence']) for c in result['canary_rounds'])})"
    )
    ratio = mj["weight"] / hn["weight"] if hn["weight"] > 0 else float("inf")
    return Row(
        f"canaries-over-time/{result['scenario']}",
        25,
        mode,
        EXPECTATION,
        "total_below",
        measured,
        ratio,
        None,
        "PASS" if mj["weight"] < hn["weight"] else "FAIL",
        note,
    )


def run_canaries(
    settings: Settings,
    *,
    rounds: int = 50,
    out: Path = Path("out/hostile"),
    seed: int = 0,
    lm: Any = None,
    lm_settings_: Settings | None = None,
) -> tuple[list[Row], list[dict[str, Any]]]:
    """Both scenarios as table rows (and their full results); with ``lm``, under ``lm_settings_``."""
    on = settings if lm is None else (lm_settings_ or lm_settings(settings))
    items = json.loads(DATA.read_text(encoding="utf-8"))
    texts = [i["prompt"] for k in ("regular", "canaries") for i in items[k]] + [
        i["reference"] for i in items["canaries"]
    ]
    texts += [
        t
        for k in ("regular", "canaries")
        for i in items[k]
        for s in SCENARIOS
        for t in answers(i, k == "canaries", s).values()
    ]
    CachedEmbedder(VectorCache(out, settings)).embed(texts)  # one pass through the model, one cache write
    results = [run_scenario(on, s, rounds=rounds, out=out, seed=seed, lm=lm) for s in SCENARIOS]
    return [to_row(r, "off" if lm is None else "lm") for r in results], results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.canaries_over_time", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--rounds", type=int, default=50)
    settings_arguments(parser)
    parser.add_argument("--out", type=Path, default=Path("out/hostile"), help="vector and LM caches")
    parser.add_argument("--seed", type=int, default=0, help="latency seed")
    parser.add_argument("--lm", action="store_true", help="run the daemon with the LM on")
    parser.add_argument("--json", type=Path, help="also write the full results as JSON")
    args = parser.parse_args(argv)
    settings, lab = read_settings(args)
    if lab != LabConfig():
        parser.error("--lab: the canaries run the daemon, which takes no lab rules")
    t = time.perf_counter()
    if args.lm:
        on = lm_settings(settings, args.set)
        with open_lm(on, args.out / "lm-cache") as lm:
            rows, results = run_canaries(
                settings, rounds=args.rounds, out=args.out, seed=args.seed, lm=lm, lm_settings_=on
            )
    else:
        rows, results = run_canaries(settings, rounds=args.rounds, out=args.out, seed=args.seed)
    for r in results:
        print(f"{r['scenario']}: canary rounds")
        for c in r["canary_rounds"]:
            print(
                f"  round {c['sequence']:>3}  consensus right={c['consensus_right']}  accuracy majority "
                f"{c['majority_accuracy']:.2f} honest {c['honest_accuracy']:.2f}  majority paid "
                f"{c['majority_paid']:.2f}  {c['prompt'][:60]}"
            )
    print(format_table(rows))
    print(f"{time.perf_counter() - t:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
