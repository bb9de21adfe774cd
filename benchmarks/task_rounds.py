"""``python -m benchmarks.task_rounds``: task rounds against adversaries, through the product's daemon.

A simulated network (not recorded models: the recorded local-model network is ``benchmarks/results/tasks``) answers
``--ticks`` task rounds of the default daemon (no prompts: every round a task, one committee) through
``validator.daemon.daemon.Daemon`` with the shipped settings and the real embedder (``--fake-embedder``: the fast suite's):

- a **ladder** of honest solvers, each right with its own probability (0.95, 0.8, 0.65, 0.5, 0.35, 0.2; a draw seeded
  by the seed, the solver and the question), wrong otherwise with a near miss (the answer plus one); each words its replies its own way;
- a **wrong majority**: ``--majority`` identities (default 7, more than the ladder) that agree on one wrong answer
  every round;
- a **cache miner**: serves the answer that was right in the previous task round (what a table of paid answers
  gives when no question repeats), worded as an honest one;
- ``--weak N``: a **weak majority**, N identities of the weakest solver (0.2), each with its own wording and draws;
- a **copycat**: restates the best solver's reply of the same round (one word changed): a copier with live access
  to another miner's answer, which a real copier would need a colluding miner for.

Prints per identity its paid units per task round against the middle of the ladder (0.65), its verified
accuracy (Beta posterior, 95% interval) and final weight, and the Spearman of the ladder's final weights against
its accuracies. ``--seed`` fixes the solvers' draws; the secret fixes the tasks.
"""

from __future__ import annotations

import argparse
import random

from scipy.stats import spearmanr

from storage.memory import MemoryStore
from tasks.trust import Trust
from validator.daemon.daemon import Daemon
from validator.daemon.task_source import TaskSource
from validator.miners.fake import FakeMiners
from validator.settings import load_settings

LADDER = (0.95, 0.8, 0.65, 0.5, 0.35, 0.2)
STYLES = (
    "Let me compute this step by step.\n\nAnswer: {a}",
    "Working through the problem, the result is **{a}**.",
    "First I read the question carefully, then I solve it.\n\nFinal answer: {a}",
    "The answer is {a}.",
    "Here is my reasoning in brief: it follows directly from the numbers given.\n\n**Answer:** {a}",
    "\\boxed{{{a}}}",
)
SECRET = b"benchmarks.task_rounds secret, 32+ chars"


def _near_miss(answer: str) -> str:
    try:
        return str(int(answer) + 1)
    except ValueError:
        return answer[::-1] + "x" if answer else "unknown"


def network(source: TaskSource, seed: int, majority: int, weak: int = 0) -> FakeMiners:
    last_right: list[str] = ["0"]

    def task_of(prompt: str):
        return next(t for t in source._given.values() if t.prompt == prompt)

    said: dict[tuple[str, str], str] = {}  # (solver, prompt) -> its reply: what the copycat restates

    def solver(name: str, p: float, style: str):
        def answer(prompt: str) -> str:
            task = task_of(prompt)
            # one draw per (seed, solver, question): the same whatever order the committees' threads ask in
            right = random.Random(f"{seed}:{name}:{task.question}").random() < p
            said[name, prompt] = style.format(a=task.answer if right else _near_miss(task.answer))
            return said[name, prompt]

        return answer

    def cache(prompt: str) -> str:
        task = task_of(prompt)
        out = STYLES[1].format(a=last_right[0])
        last_right[0] = task.answer  # learned after the round: what was paid is public once it is paid
        return out

    answers = {f"ladder-{p:.2f}": solver(f"ladder-{p:.2f}", p, STYLES[i % len(STYLES)]) for i, p in enumerate(LADDER)}
    answers |= {
        f"majority-{i}": "Working it out carefully, the result follows.\n\nAnswer: 424242" for i in range(majority)
    }
    answers["cache"] = cache
    for i in range(weak):  # a weak majority: identities of the weakest solver, each its own wording and draws
        answers[f"weak-{i}"] = solver(f"weak-{i}", LADDER[-1], STYLES[(i + 1) % len(STYLES)])
    # the best solver's reply of this round (it answers first), one word changed: a copier with live access to it
    # (in another committee it sees nothing to copy and guesses)
    answers["copycat"] = lambda prompt: said.get(("ladder-0.95", prompt), "Answer: 0").replace(
        "Let me compute", "Let me now compute"
    )
    return FakeMiners(answers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.task_rounds", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--majority", type=int, default=7)
    parser.add_argument("--fake-embedder", action="store_true")
    parser.add_argument("--weak", type=int, default=0, help="identities serving the weakest solver (a weak majority)")
    parser.add_argument(
        "--committee-size", type=int, default=0, help="daemon.committee_size (0: everyone in one round)"
    )
    parser.add_argument(
        "--canary-rate",
        type=float,
        default=None,
        help="daemon.canary_rate; since commit 4067d54 canaries come from a canaries file only (this network has none)",
    )
    args = parser.parse_args(argv)
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_DAEMON__COMMITTEE_SIZE": str(args.committee_size),
    }
    if args.canary_rate is not None:
        env["VALIDATOR_DAEMON__CANARY_RATE"] = str(args.canary_rate)
    settings = load_settings(None, env=env, dotenv_path=None)
    if args.fake_embedder:
        from consensus.fake import FakeEmbedder

        embedder = FakeEmbedder()
    else:
        from benchmarks.data import load_embedder

        embedder = load_embedder(settings)
    source = TaskSource(settings.tasks, SECRET, every_round=True)
    query = network(source, args.seed, args.majority, args.weak)
    daemon = Daemon(
        store=MemoryStore(), embedder=embedder, settings=settings, prompts=(), query=query, secret=SECRET, tasks=source
    )
    daemon.run(ticks=args.ticks)
    ledger = daemon.ledger
    weights = ledger.weights()
    middle = ledger.miners["ladder-0.65"].emissions
    print(
        f"{args.ticks} task rounds, {len(query.answers)} identities, seed {args.seed}, "
        f"embedder {'fake' if args.fake_embedder else embedder.name}"
    )
    print(f"  {'identity':<14} {'units/round':>14} {'x middle':>9} {'weight':>7}  verified")
    for miner, m in sorted(ledger.miners.items(), key=lambda kv: -kv[1].emissions):
        ratio = m.emissions / middle if middle else float("nan")
        trust = Trust(m.tasks_right, m.tasks).describe()
        print(f"  {miner:<14} {m.emissions / args.ticks:>14,.0f} {ratio:>9.3f} {weights[miner]:>7.4f}  {trust}")
    ladder = [f"ladder-{p:.2f}" for p in LADDER]
    rho = spearmanr(LADDER, [weights[m] for m in ladder]).statistic
    acc = spearmanr(LADDER, [ledger.miners[m].tasks_right for m in ladder]).statistic
    weak = [m for m in ledger.miners if m.startswith("weak-")]
    if weak:
        per = sum(ledger.miners[m].emissions for m in weak) / len(weak)
        print(f"  weak majority: {len(weak)} identities, each paid {per / middle:.3f}x the middle solver (0.65)")
    print(
        f"  Spearman, ladder's final weights vs its accuracy: {rho:.3f}; verified right answers vs accuracy: {acc:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
