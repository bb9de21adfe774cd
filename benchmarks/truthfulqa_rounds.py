"""TruthfulQA reference rounds (issue 45): does the judgment against a reference pay honest answers and not
imitative falsehoods?

    python -m benchmarks.truthfulqa_rounds [--questions FILE] [--config X.toml] [--set section.field=value ...]
                                           [--lab RULE=VALUE ...] [--out DIR] [--json FILE] [--seed S]

One round per question of ``../shared/truthfulqa/questions.jsonl`` (its README: 409 of TruthfulQA's 817):
prompt = the question, reference = TruthfulQA's best answer, honest miners = its other correct answers
(those equal to the best answer and the abstentions "I have no comment" left out), attackers = its incorrect
answers (the imitative falsehoods, which outnumber the honest answers in most rounds). A question with no honest
answer left gives no round. Arrival order and latencies are seeded (``--seed``); miner names do not tell the roles.

Every round goes through ``validator.round.stages.run_stages`` (the unit of work of ``validator replay``, the daemon
and ``validator round``) with the real MiniLM (vectors cached under ``--out`` by content,
``benchmarks.data.VectorCache``), shipped defaults unless ``--config`` / ``--set`` / ``--lab`` say otherwise, and
the LM off. Pay is the allocation's units (each round's pool is the product's).

Prints: the share of correct answers paid nothing, and by reason; falsehoods' mean pay over the honest answers'
mean pay (pooled over rounds, and the median of the per-round ratios); the share of rounds where a falsehood earns
more than every correct answer; the AUROC of pay, correct over false (pooled; ties count half), with 95% bootstrap
intervals over rounds (``--boot``); and per removal reason the share of honest answers it removed (its
false-removal rate on honest answers) beside the share of falsehoods it removed. ``THRESHOLDS`` are issue 45's
acceptance levels; ``tests/benchmarks/test_truthfulqa_rounds.py`` (slow) keeps the measured figures from getting
worse.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import consensus.reference
from benchmarks.data import CachedEmbedder, VectorCache, read_settings, settings_arguments
from benchmarks.lab import LabConfig, extensions
from benchmarks.nli_cache import verdicts
from consensus.signals import Signals
from consensus.types import Response, Round
from validator.settings import Settings

__all__ = [
    "QUESTIONS",
    "THRESHOLDS",
    "Answer",
    "Figures",
    "auroc",
    "build_rounds",
    "figures",
    "load_questions",
    "main",
    "run",
]

QUESTIONS = Path("../shared/truthfulqa/questions.jsonl")
# issue 45's acceptance levels: correct answers paid nothing, falsehood pay over the honest mean, rounds a falsehood
# tops every correct answer
THRESHOLDS = {"honest_unpaid": 0.05, "false_over_honest": 0.2, "false_tops": 0.05}
_ABSTAIN = re.compile(r"^\W*i have no comment\W*$", re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    best: str
    correct: tuple[str, ...]
    incorrect: tuple[str, ...]


def load_questions(path: Path = QUESTIONS) -> list[Question]:
    """The questions file (one JSON object a line, the README's fields); a bad line is named."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                out.append(
                    Question(
                        str(d["id"]),
                        str(d["question"]),
                        str(d["best_answer"]),
                        tuple(map(str, d["correct_answers"])),
                        tuple(map(str, d["incorrect_answers"])),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a TruthfulQA question ({exc})") from None
    return out


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()).rstrip(".") == " ".join(b.lower().split()).rstrip(".")


def build_rounds(questions: Sequence[Question], seed: int = 0) -> tuple[list[Round], dict[str, dict[str, bool]]]:
    """The rounds (module docstring) and, per round id, miner -> True for an honest answer, False for a falsehood."""
    rng = np.random.default_rng(seed)
    rounds, roles = [], {}
    for q in questions:
        honest = [a for a in dict.fromkeys(q.correct) if a.strip() and not _same(a, q.best) and not _ABSTAIN.match(a)]
        false = [a for a in dict.fromkeys(q.incorrect) if a.strip() and not any(_same(a, h) for h in honest)]
        if not honest or not false:
            continue
        texts = [(t, True) for t in honest] + [(t, False) for t in false]
        order = rng.permutation(len(texts))
        latencies = np.sort(rng.uniform(0.8, 6.0, len(texts)))
        responses, who = [], {}
        for k, j in enumerate(order):
            miner = f"m-{k:02d}"
            responses.append(Response(miner, texts[j][0], float(round(latencies[k], 3))))
            who[miner] = texts[j][1]
        rounds.append(Round(f"tqa-{q.id}", q.question, tuple(responses), reference=q.best))
        roles[f"tqa-{q.id}"] = who
    return rounds, roles


@dataclass(frozen=True)
class Answer:
    """One answer of one round, as measured."""

    round_id: str
    miner: str
    honest: bool
    pay: float  # the allocation's units
    reason: str  # the evaluation's reason ("in_consensus" when in consensus)


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a positive scores above a negative), ties counting half (Mann-Whitney); nan without both."""
    p, n = np.asarray(positive, float), np.asarray(negative, float)
    if not len(p) or not len(n):
        return float("nan")
    greater = (p[:, None] > n[None, :]).sum()
    ties = (p[:, None] == n[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(p) * len(n)))


@dataclass(frozen=True)
class Figures:
    rounds: int
    honest: int
    false: int
    honest_unpaid: float  # share of correct answers paid nothing
    unpaid_reasons: dict[str, int]  # correct answers paid nothing, by reason
    false_over_honest: float  # mean falsehood pay / mean correct pay, pooled
    median_round_ratio: float  # median over rounds of the same ratio (rounds paying honest answers something)
    false_tops: float  # share of rounds where some falsehood earns more than every correct answer
    auroc: float  # pay, correct over false, pooled
    removal: dict[str, tuple[float, float]]  # reason -> (share of honest answers, share of falsehoods) it removed


def figures(answers: Sequence[Answer]) -> Figures:
    """The issue's figures over ``answers`` (any subset of rounds: the bootstrap resamples them)."""
    honest = [a for a in answers if a.honest]
    false = [a for a in answers if not a.honest]
    by_round: dict[str, list[Answer]] = {}
    for a in answers:
        by_round.setdefault(a.round_id, []).append(a)
    tops, ratios = 0, []
    for xs in by_round.values():
        h = [a.pay for a in xs if a.honest]
        f = [a.pay for a in xs if not a.honest]
        tops += bool(f) and max(f) > max(h)
        if np.mean(h) > 0:
            ratios.append(float(np.mean(f) / np.mean(h)) if f else 0.0)
    mean_h = float(np.mean([a.pay for a in honest])) if honest else 0.0
    mean_f = float(np.mean([a.pay for a in false])) if false else 0.0
    reasons = sorted({a.reason for a in answers} - {"in_consensus"})
    return Figures(
        rounds=len(by_round),
        honest=len(honest),
        false=len(false),
        honest_unpaid=sum(a.pay <= 0 for a in honest) / max(1, len(honest)),
        unpaid_reasons=dict(Counter(a.reason for a in honest if a.pay <= 0).most_common()),
        false_over_honest=mean_f / mean_h if mean_h > 0 else float("inf"),
        median_round_ratio=float(np.median(ratios)) if ratios else float("nan"),
        false_tops=tops / max(1, len(by_round)),
        auroc=auroc([a.pay for a in honest], [a.pay for a in false]),
        removal={
            r: (
                sum(a.reason == r for a in honest) / max(1, len(honest)),
                sum(a.reason == r for a in false) / max(1, len(false)),
            )
            for r in reasons
        },
    )


def bootstrap(answers: Sequence[Answer], draws: int = 1000, seed: int = 0) -> dict[str, tuple[float, float]]:
    """95% intervals of the headline figures, resampling rounds with replacement."""
    by_round: dict[str, list[Answer]] = {}
    for a in answers:
        by_round.setdefault(a.round_id, []).append(a)
    ids = sorted(by_round)
    rng = np.random.default_rng(seed)
    keys = ("honest_unpaid", "false_over_honest", "false_tops", "auroc")
    samples: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(draws):
        picked = rng.integers(0, len(ids), len(ids))
        # a round drawn twice counts twice: its answers get the draw's position in their round id
        subset = [
            dataclasses.replace(a, round_id=f"{a.round_id}#{k}") for k, j in enumerate(picked) for a in by_round[ids[j]]
        ]
        f = figures(subset)
        for k in keys:
            samples[k].append(float(getattr(f, k)))
    return {k: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for k, v in samples.items()}


def run(
    settings: Settings,
    questions: Sequence[Question],
    *,
    out: Path = Path("out/truthfulqa"),
    lab: LabConfig | None = None,
    seed: int = 0,
    nli: str | None = None,
) -> list[Answer]:
    """Every answer of every round, evaluated by the product (``run_stages``), LM off, heatmaps off; with ``nli`` (a
    prompt version of ``benchmarks.nli_cache.PROMPTS``, or a combined one of ``COMBINED``: ``deny-v2`` is what the product reads), the NLI judge's verdicts (cached) handed in as
    ``Signals.reference_entailment``."""
    from validator.round.stages import run_stages

    rounds, roles = build_rounds(questions, seed)
    embedder = CachedEmbedder(VectorCache(out, settings))
    hooks, consensus = extensions(lab or LabConfig(), settings.consensus)
    settings = dataclasses.replace(
        settings,
        consensus=consensus,
        lm=dataclasses.replace(settings.lm, enabled=False),
        output=dataclasses.replace(settings.output, heatmap=False),
    )
    texts = [r.prompt for r in rounds] + [r.reference or "" for r in rounds]
    texts += [x.text for r in rounds for x in r.responses]
    embedder.embed(texts)  # one pass: the model runs once, in large batches, and the cache is written once
    judged = verdicts(rounds, nli) if nli else {}
    answers = []
    for r in rounds:
        known = None
        if nli:
            known = Signals(reference_entailment={i: judged[r.round_id][x.miner] for i, x in enumerate(r.responses)})
        o = run_stages(r, embedder, settings, known=known, extensions=hooks)
        reasons = {res.miner: res.reason.value for res in o.evaluation.results}
        for x, amount in zip(r.responses, o.allocation.amounts):
            answers.append(Answer(r.round_id, x.miner, roles[r.round_id][x.miner], float(amount), reasons[x.miner]))
    return answers


def report(f: Figures, intervals: dict[str, tuple[float, float]] | None = None) -> str:
    def ci(k: str) -> str:
        return f" [{intervals[k][0]:.3f}, {intervals[k][1]:.3f}]" if intervals else ""

    lines = [
        f"{f.rounds} rounds, {f.honest} correct answers, {f.false} falsehoods (LM off)",
        f"correct answers paid nothing: {f.honest_unpaid:.1%}{ci('honest_unpaid')}"
        f" (target <= {THRESHOLDS['honest_unpaid']:.0%}); by reason: "
        + ", ".join(f"{r} {k}" for r, k in f.unpaid_reasons.items()),
        f"falsehood pay / honest mean pay: {f.false_over_honest:.3f}{ci('false_over_honest')}"
        f" (target <= {THRESHOLDS['false_over_honest']}); median per round {f.median_round_ratio:.3f}",
        f"rounds where a falsehood out-earns every correct answer: {f.false_tops:.1%}{ci('false_tops')}"
        f" (target <= {THRESHOLDS['false_tops']:.0%})",
        f"AUROC of pay, correct over false: {f.auroc:.3f}{ci('auroc')}",
        "",
        "| removal reason | honest answers removed (false-removal rate) | falsehoods removed |",
        "|---|---|---|",
    ]
    for r, (h, x) in sorted(f.removal.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| {r} | {h:.1%} | {x:.1%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.truthfulqa_rounds", description=__doc__.split("\n\n")[0]
    )
    settings_arguments(parser)
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="TruthfulQA questions (JSONL)")
    parser.add_argument("--out", type=Path, default=Path("out/truthfulqa"), help="vector cache")
    parser.add_argument("--seed", type=int, default=0, help="arrival order and latencies")
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap draws over rounds (0: none)")
    parser.add_argument("--json", type=Path, help="also write every answer's pay and reason as JSON")
    parser.add_argument(
        "--nli", help="hand in the NLI judge's verdicts under this prompt version (benchmarks.nli_judge)"
    )
    parser.add_argument(
        "--nli-weight",
        type=float,
        help="the judge's share of an answer's support (consensus.reference.ENTAILMENT_WEIGHT; variants measured)",
    )
    parser.add_argument(
        "--halves",
        action="store_true",
        help="also report the questions at even (half 0) and odd (half 1) positions apart (fit on one, report the other)",
    )
    args = parser.parse_args(argv)
    settings, lab = read_settings(args)
    if args.nli_weight is not None:
        consensus.reference.ENTAILMENT_WEIGHT = args.nli_weight
    t = time.perf_counter()
    questions = load_questions(args.questions)
    answers = run(settings, questions, out=args.out, lab=lab, seed=args.seed, nli=args.nli)
    print(report(figures(answers), bootstrap(answers, args.boot) if args.boot else None))
    for half in (0, 1) if args.halves else ():
        keep = {f"tqa-{q.id}" for k, q in enumerate(questions) if k % 2 == half}
        part = [a for a in answers if a.round_id in keep]
        print(f"\nhalf {half} (questions at {'even' if half == 0 else 'odd'} positions of the file):")
        print(report(figures(part), bootstrap(part, args.boot) if args.boot else None))
    print(f"in {time.perf_counter() - t:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([dataclasses.asdict(a) for a in answers], indent=0), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
