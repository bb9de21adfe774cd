"""One command for the rewards' generalisation guard: both validity sets, their sybil variants, the hostile cases.

    python -m benchmarks.validity [--validity ../shared/validity] [--out out/validity]
                                  [--config X.toml] [--set section.field=value ...] [--no-hostile]

(``benchmarks.validity`` with no rounds file runs this.) Sets, each replayed as ``validator replay`` does
without the LM (``benchmarks.evaluate.replay``):

- ``dev``: the development set (30 models x 100 instructions, ``--validity``);
- ``wide``: 80 models, many fine-tunes of a few bases (``--validity``/wide);
- ``dev+perturbed``, ``wide+perturbed``: each plus five identities serving perturbed copies of one
  model's answers (sentences shuffled, ~15% of the words dropped; ``benchmarks.sybil_sets``, seeded);
- ``dev+reworded``: the development set plus five identities rewording one model's answer every round
  (synonym swaps, shuffled sentences, fillers: the set of 2026-11-25; persistence links them);
- ``dev+llm``: the development set's rounds that ``benchmarks/hostile_cases/sybil_paraphrases.json``
  covers, each plus five identities serving the embedded LM's rewrites of that model's answer (written
  once by ``python -m benchmarks.hostile_make sybil``; absent file, no set);
- the hostile cases of ``benchmarks.hostile`` (rounds written as attackers write them).

It prints one table: per set the Spearman of honest miners' total emissions against their quality
with its 95% interval, the split halves, honest miners' total share, the adversaries' shares, whether
copies paid, the sybil group against an honest mean; each goal of issues 24 and 25 PASS or FAIL; then
the hostile rows. With ``--config``/``--set`` the shipped defaults run too and every figure gets its
change against them, with the rule for a new default: no set loses more than 0.02, no hostile row that
passes with the shipped defaults fails.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.lab import LabConfig
from validator.settings import Settings

DEV_GOAL, WIDE_GOAL, HALF_GAP, JUNK_SHARE, SYBIL_BAR, LOSS = 0.82, 0.70, 0.1, 0.001, 1.5, 0.02


@dataclass(frozen=True)
class SetSpec:
    name: str
    rounds: Path
    truth: Path
    goal: float | None  # the Spearman the issue asks for, when it names one


def specs(validity: Path, out: Path, seed: int = 0) -> list[SetSpec]:
    """The sets, the sybil variants written (seeded, once) under ``out``/sets."""
    base = [
        SetSpec("dev", validity / "rounds.jsonl.gz", validity / "truth.json", DEV_GOAL),
        SetSpec("wide", validity / "wide" / "rounds.jsonl.gz", validity / "wide" / "truth.json", WIDE_GOAL),
    ]
    for s in base:
        if not s.rounds.exists():
            raise SystemExit(
                f"{s.rounds}: not found (the validity data lies beside the checkout: ../shared/validity; "
                "--validity DIR points elsewhere)"
            )
    from benchmarks.sybil_sets import write_sets

    written = write_sets(validity, out / "sets", seed)
    extra = [SetSpec(name, paths[0], paths[1], None) for name, paths in written.items()]
    return base + extra


def run_set(spec: SetSpec, settings: Settings, out: Path, lab: LabConfig | None = None) -> dict[str, Any]:
    from benchmarks.data import VectorCache, read_rounds
    from benchmarks.evaluate import replay
    from benchmarks.lm_grades import grade_source  # --lab lm_grade_weight: the cached LM grades join
    from benchmarks.validity_report import report

    truth = json.loads(spec.truth.read_text(encoding="utf-8"))
    rounds = read_rounds(spec.rounds)
    rep = report(replay(rounds, VectorCache(out, settings), settings, lab, grades=grade_source(lab)), truth)
    return rep


def goals(spec: SetSpec, rep: dict[str, Any]) -> list[tuple[str, bool]]:
    """(goal, met) for one set's report."""
    out: list[tuple[str, bool]] = []
    if spec.goal is not None:
        out.append((f"spearman >= {spec.goal}", rep["spearman"] >= spec.goal))
        out.append(
            (
                f"each split half within {HALF_GAP} of the whole",
                all(abs(v - rep["spearman"]) <= HALF_GAP for v in rep["split_half"].values()),
            )
        )
    junk = {k: v for k, v in rep["adversary_share"].items() if k in ("null", "empty", "short")}
    if junk:
        out.append((f"null, empty, one-word <= {JUNK_SHARE:.1%} each", all(v <= JUNK_SHARE for v in junk.values())))
    if rep["copy_group_over_source"]:
        out.append(("copies earn nothing extra", all(v <= 1.0 + 1e-9 for v in rep["copy_group_over_source"].values())))
    for name, g in rep["sybil_groups"].items():
        out.append((f"sybil group {name} <= {SYBIL_BAR}x an honest mean", g["over_honest_mean"] <= SYBIL_BAR))
    return out


def _fmt(rep: dict[str, Any], base: dict[str, Any] | None) -> list[str]:
    def delta(x: float, y: float | None) -> str:
        return "" if y is None else f" ({x - y:+.3f})"

    h = rep["split_half"]
    adv = "/".join(f"{rep['adversary_share'].get(k, 0.0):.4f}" for k in ("null", "empty", "short", "copy", "nearcopy"))
    syb = (
        "; ".join(
            f"{g['over_honest_mean']:.2f}x (2nd half {g['late_over_honest_mean']:.2f}x)"
            for g in rep["sybil_groups"].values()
        )
        or "-"
    )
    return [
        f"{rep['spearman']:.3f}{delta(rep['spearman'], base and base['spearman'])} "
        f"[{rep['ci95'][0]:.3f}, {rep['ci95'][1]:.3f}]",
        f"{h['rounds_first']:.3f}/{h['rounds_second']:.3f} | {h['models_even']:.3f}/{h['models_odd']:.3f}",
        f"{rep['honest_paid_share']:.4f}",
        adv,
        "; ".join(f"{v:.3f}" for v in rep["copy_group_over_source"].values()) or "-",
        syb,
    ]


def table(rows: Sequence[tuple[SetSpec, dict[str, Any], dict[str, Any] | None]]) -> str:
    head = [
        "set",
        "spearman [95% CI]",
        "halves: rounds | models",
        "honest share",
        "null/empty/short/copy/nearcopy",
        "copies/source",
        "sybil group",
        "goals",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for spec, rep, base in rows:
        met = goals(spec, rep)
        verdict = ", ".join(f"{g}: {'PASS' if ok else 'FAIL'}" for g, ok in met) or "-"
        lines.append("| " + " | ".join([spec.name, *_fmt(rep, base), verdict]) + " |")
    return "\n".join(lines)


def run(
    settings: Settings,
    shipped: Settings | None,
    validity: Path,
    out: Path,
    hostile: bool = True,
    lab: LabConfig | None = None,
) -> int:
    """Run every set (and the shipped defaults when ``shipped`` is given); print the table; 0 when every goal and
    the default rule hold, else 1."""
    rows, failed = [], False
    for spec in specs(validity, out):
        rep = run_set(spec, settings, out, lab)
        base = run_set(spec, shipped, out) if shipped is not None else None
        rows.append((spec, rep, base))
        failed |= not all(ok for _, ok in goals(spec, rep))
        if base is not None and rep["spearman"] < base["spearman"] - LOSS:
            failed = True
    print(table(rows))
    (out / "suite.json").write_text(json.dumps({s.name: r for s, r, _ in rows}, indent=1), encoding="utf-8")
    if hostile:
        failed |= _hostile(settings, shipped, out, lab)
    if shipped is not None:
        worst = min(r["spearman"] - b["spearman"] for _, r, b in rows if b is not None)
        print(
            f"\nagainst the shipped defaults: the worst set changes by {worst:+.3f} (a new default may lose at most "
            f"{LOSS} on any set)"
        )
    return 1 if failed else 0


def _hostile(settings: Settings, shipped: Settings | None, out: Path, lab: LabConfig | None = None) -> bool:
    from benchmarks.hostile import format_table, run_cases

    rows = run_cases(settings, out=out / "hostile", lab=lab)
    print("\n" + format_table(rows))
    broken = False
    if shipped is not None:
        before = {(r.case, r.mode, r.expectation): r.passed for r in run_cases(shipped, out=out / "hostile")}
        newly = [r for r in rows if r.passed is False and before.get((r.case, r.mode, r.expectation)) is True]
        for r in newly:
            print(f"breaks: {r.case} ({r.mode}): {r.expectation}: {r.measured}")
        broken = bool(newly)
    return broken
