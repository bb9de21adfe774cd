"""README's first command, timed: `validator daemon --rounds 3` on the embedded defaults, idle and loaded.

    python -m benchmarks.main_job [--runs 3] [--conditions idle,loaded] [--out FILE.json]

Each run is the README's command after install (``validator daemon --rounds 3
--store DIR``, a fresh store, so the embedded LM starts, then three rounds)
in a subprocess, timed from start to exit. "loaded" runs one CPU-bound
process beside it (``yes > /dev/null``) for the whole run. The subprocess
is the real CLI with one observer added: after each round it appends the
round's report (seconds, stage times) to a JSONL file, which is how the
per-round stage times are read. From the stored records: which miners
failed and why (an honest pool miner, ``honest-*``, that misses the
deadline fails the goal).

Goals (issue 13, on 2 cores): idle, 3 rounds <= 90 s including LM start;
loaded, no honest pool miner misses the deadline and no round takes more
than 2x its idle time. Prints a table and writes JSON (median of the runs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.resources import daemon_args
from storage.local import LocalStore
from validator.records.reader import RoundReader

ROUNDS = 3
# the stage names of the daemon's timings, grouped as docs/performance.md reports them
STAGES = {
    "queries": ("query",),
    "embedding": ("embed",),
    "polarity": ("polarity",),
    "judging": ("factual", "reference", "selectit"),
    "narrative": ("narrative",),
    "storage": ("persist", "ledger"),
    "consensus+emissions+heatmap": ("consensus", "emissions", "heatmap"),
}

# The README's command, in-process in the child, with an observer on each round's report.
_CHILD = """
import json, sys
from validator import daemon as d
out = sys.argv[1]
run_one = d.Daemon.run_one
def observed(self):
    report = run_one(self)
    with open(out, "a") as fh:
        fh.write(json.dumps({"round": report.round_id, "status": report.status, "seconds": report.seconds,
                             "stages": report.stages}) + "\\n")
    return report
d.Daemon.run_one = observed
from validator.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def one_run(workdir: Path, loaded: bool) -> dict:
    workdir.mkdir(parents=True)
    rounds_file = workdir / "rounds.jsonl"
    store = workdir / "store"
    cmd = [sys.executable, "-c", _CHILD, str(rounds_file), *daemon_args(ROUNDS, store)]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    load = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if loaded else None
    try:
        started = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        wall = time.perf_counter() - started
    finally:
        if load is not None:
            load.kill()
            load.wait()
    (workdir / "stdout.txt").write_text(proc.stdout)
    (workdir / "stderr.txt").write_text(proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"daemon exited {proc.returncode}: {proc.stderr[-2000:]}")
    rounds = [json.loads(line) for line in rounds_file.read_text().splitlines()]
    reader = RoundReader(LocalStore(store))
    for r in rounds:
        record = reader.record(r["round"])
        r["failed"] = {x.miner: x.error for x in record.responses if x.error}
        r["honest_missed"] = sorted(m for m in r["failed"] if m.startswith("honest"))
        r["grouped"] = {name: round(sum(r["stages"].get(s, 0.0) for s in parts), 2) for name, parts in STAGES.items()}
    startup = wall - sum(r["seconds"] for r in rounds)
    return {"wall_s": round(wall, 1), "startup_s": round(startup, 1), "rounds": rounds}


def summary(runs: list[dict]) -> dict:
    """Medians over runs: wall time, start-up, and per round position its seconds and stage times."""
    med = {
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "startup_s": statistics.median(r["startup_s"] for r in runs),
        "rounds": [],
    }
    for i in range(ROUNDS):
        rounds = [r["rounds"][i] for r in runs if len(r["rounds"]) > i]
        med["rounds"].append(
            {
                "seconds": round(statistics.median(x["seconds"] for x in rounds), 1),
                "stages": {name: round(statistics.median(x["grouped"][name] for x in rounds), 2) for name in STAGES},
                "honest_missed": sorted({m for x in rounds for m in x["honest_missed"]}),
                "statuses": [x["status"] for x in rounds],
            }
        )
    return med


def machine_load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.main_job", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--conditions", default="idle,loaded")
    p.add_argument("--out", type=Path, default=None, help="write the full results as JSON")
    args = p.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="main-job-"))
    results: dict = {"machine": {"before": machine_load()}, "conditions": {}}
    for condition in args.conditions.split(","):
        runs = []
        for i in range(args.runs):
            load_before = machine_load()
            run = one_run(base / f"{condition}-{i}", loaded=condition == "loaded")
            run["load_before"] = load_before
            runs.append(run)
            print(
                f"{condition} run {i + 1}: {run['wall_s']} s (start-up {run['startup_s']} s; rounds "
                + ", ".join(f"{r['seconds']:.1f}" for r in run["rounds"])
                + f"; {load_before})",
                flush=True,
            )
            results["conditions"][condition] = {"runs": runs, "median": summary(runs)}
            if args.out is not None:  # after every run: a long benchmark cut short keeps what it measured
                args.out.write_text(json.dumps(results, indent=1))
    results["machine"]["after"] = machine_load()
    print_table(results)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


def print_table(results: dict) -> None:
    conditions = results["conditions"]
    print(
        f"\n{'condition':<8} {'wall':>7} {'start':>6} {'round':>5} {'secs':>6} "
        + " ".join(f"{name[:10]:>10}" for name in STAGES)
        + "  honest missed"
    )
    for condition, data in conditions.items():
        m = data["median"]
        for i, r in enumerate(m["rounds"]):
            lead = f"{condition:<8} {m['wall_s']:>7.1f} {m['startup_s']:>6.1f}" if i == 0 else " " * 22
            print(
                f"{lead} {i + 1:>5} {r['seconds']:>6.1f} "
                + " ".join(f"{r['stages'][name]:>10.2f}" for name in STAGES)
                + f"  {', '.join(r['honest_missed']) or '-'}"
            )
    if "idle" in conditions:
        idle = conditions["idle"]["median"]
        print(
            f"\ngoal idle: 3 rounds incl. LM start <= 90 s: {idle['wall_s']:.1f} s "
            f"({'met' if idle['wall_s'] <= 90 else 'NOT met'})"
        )
        if "loaded" in conditions:
            loaded = conditions["loaded"]["median"]
            ratios = [
                lr["seconds"] / ir["seconds"] for lr, ir in zip(loaded["rounds"], idle["rounds"]) if ir["seconds"] > 0
            ]
            missed = sorted(
                {m for run in conditions["loaded"]["runs"] for r in run["rounds"] for m in r["honest_missed"]}
            )
            print(
                f"goal loaded: no honest miner misses the deadline: {', '.join(missed) or 'none missed'}; "
                f"round time / idle: {', '.join(f'{x:.2f}' for x in ratios)} "
                f"({'met' if not missed and all(x <= 2 for x in ratios) else 'NOT met'})"
            )


if __name__ == "__main__":
    sys.exit(main())
