"""Hostile cases (issues 24 and 25): rounds written as attackers would, and what the issues expect of them.

    python -m benchmarks.hostile [--config X.toml] [--set section.field=value ...] [--out DIR]
                                 [--case NAME ...] [--lm] [--json FILE] [--export-rounds FILE]

Each case is one round in the project's round format plus its roles and expectations
(``benchmarks/hostile_cases/*.json``; the format and the expectation kinds are in
``benchmarks.hostile_spec``). Every round goes through ``validator.round.stages.run_stages``, the unit of
work of ``validator replay``, the daemon and ``validator round``: the real MiniLM embedder
(vectors cached under ``--out`` by content hash, ``benchmarks.data.VectorCache``), the
consensus core and the allocation; with ``--lm`` the cases marked ``lm`` run again with the LM
(the embedded one unless ``--set lm_client.server_url=...``; its checks as ``validator round``
runs them on the embedded LM, with no per-round time budget unless ``--set lm.round_budget_s=30``,
and the LM's answers cached under ``--out``). Without ``--lm`` those rows are SKIP. With ``--lab
lm_grade_weight=W`` the LM's grades cached in ``benchmarks/lm_grades/`` (``python -m benchmarks.lm_grades rate
hostile --case NAME``) join the LM-off rounds they cover fully, as the daemon's stored evidence would.

Prints one table: case, mode, expectation, measured figure, PASS / FAIL / SKIP, and why (the
reasons the attackers' answers got). ``run_cases`` returns the same rows for other benchmarks.

The seeded synonym-swap cases this bench had before live in ``benchmarks.hostile_synthetic``;
the development and wide sets with sybil groups are written by ``benchmarks.sybil_sets``, the
canaries-over-time run is ``benchmarks.canaries_over_time``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.data import CachedEmbedder, VectorCache, read_settings, settings_arguments
from benchmarks.hostile_spec import CASES_DIR, Case, Paid, check, load_cases

# kept importable from here: tests/consensus/test_sybil.py reads the old synthetic answers by these names
from benchmarks.hostile_synthetic import HONEST_PARIS, OFF_TOPIC, WRONG_LYON, reword  # noqa: F401
from benchmarks.lab import LabConfig, extensions
from consensus.signals import Signals
from consensus.types import Round
from judge.nli import load_judge
from validator.settings import Settings

__all__ = ["Row", "run_cases", "format_table", "main"]


@dataclass(frozen=True)
class Row:
    """One expectation of one case in one mode, as the table prints it."""

    case: str
    issue: int
    mode: str  # "off": without the LM; "lm": with it
    expectation: str  # the issue's sentence
    kind: str  # the expectation kind (benchmarks.hostile_spec.KINDS)
    measured: str  # the figure, e.g. "max 1.34x" (empty when skipped)
    value: float | None  # the number the bound applies to (None when skipped)
    bound: float | None
    status: str  # "PASS", "FAIL" or "SKIP"
    note: str = ""  # the reasons the roles' answers got, LM seconds, why skipped

    @property
    def passed(self) -> bool | None:
        return None if self.status == "SKIP" else self.status == "PASS"


def _rounds_of(case: Case) -> list[Round]:
    """The case's round and the counterfactual rounds its expectations compare with."""
    extra = sorted({e.without for e in case.expect if e.without})
    return [case.round] + [case.without(role) for role in extra]


def _reasons(case: Case, paid: Paid, roles: Sequence[str]) -> str:
    parts = []
    for role in roles:
        counts = Counter(paid.reasons[m] for m in case.roles[role])
        parts.append(f"{role}: " + ", ".join(f"{r}" + (f" x{k}" if k > 1 else "") for r, k in counts.items()))
    return "; ".join(parts)


def _rows(case: Case, mode: str, outcomes: dict[str, Paid], extra_note: str = "") -> list[Row]:
    paid = outcomes[case.round.round_id]
    rows = []
    for e in case.expect:
        counter = outcomes.get(case.without(e.without).round_id) if e.without else None
        v = check(case, e, paid, counter)
        roles = [e.who] + ([e.than] if e.than else [])
        note = _reasons(case, paid, roles) + (f"; {extra_note}" if extra_note else "")
        rows.append(
            Row(
                case.name,
                case.issue,
                mode,
                e.text,
                e.kind,
                v.measured,
                v.value,
                e.bound,
                "PASS" if v.passed else "FAIL",
                note,
            )
        )
    return rows


def _skipped(case: Case, mode: str, why: str) -> list[Row]:
    return [Row(case.name, case.issue, mode, e.text, e.kind, "", None, e.bound, "SKIP", why) for e in case.expect]


def lm_settings(settings: Settings, sets: Sequence[str] | None = None) -> Settings:
    """``settings`` as ``validator round`` runs the LM (on; with the embedded LM no LM narrative and the
    "short" reference check), no heatmap; given a command line's ``--set`` pairs (``sets``), no per-round LM
    budget unless they set one."""
    lm = dataclasses.replace(settings.lm, enabled=True, narrative=False)
    if not settings.lm_client.server_url:
        lm = dataclasses.replace(lm, reference_mode="short")
    if sets is not None and not any(p.startswith("lm.round_budget_s=") for p in sets):
        lm = dataclasses.replace(lm, round_budget_s=0.0)
    return dataclasses.replace(settings, lm=lm, output=dataclasses.replace(settings.output, heatmap=False))


@contextlib.contextmanager
def open_lm(settings: Settings, cache_dir: Path | None) -> Iterator[Any]:
    """An ``LMHandle`` on the configured server, or on the embedded LM started for the block."""
    from validator.lm_session import open_client
    from validator.round.stages import LMHandle

    config = settings.lm_config()
    if cache_dir is not None:
        config = dataclasses.replace(config, cache=True, cache_dir=str(cache_dir))
    with open_client(config) as client:
        yield LMHandle(client, config)


def run_cases(
    settings: Settings,
    cases: Sequence[Case] | None = None,
    *,
    out: Path = Path("out/hostile"),
    lm: Any = None,
    lm_settings_: Settings | None = None,
    lab: LabConfig | None = None,
    nli: Any = None,
) -> list[Row]:
    """Every expectation of every case (default: all of ``benchmarks/hostile_cases``) as ``Row``s.

    Without ``lm`` the cases run without the LM and their ``lm`` rows are SKIP. With ``lm`` (an
    ``LMHandle``, e.g. from ``open_lm``) the ``lm`` rows run too, under ``lm_settings_`` (default
    ``lm_settings(settings)``). ``out`` holds the vector cache. ``lab``: rules measured and not shipped
    (``benchmarks.lab``; not sentence coverage) handed to the product's evaluation. ``nli``: the NLI judge
    (``judge.nli``) reading every answer against a reference (``run_stages(nli=)``); None: not read.
    """
    from validator.round.stages import run_stages

    cases = list(load_cases() if cases is None else cases)
    embedder = CachedEmbedder(VectorCache(out, settings))
    hooks, consensus = extensions(lab or LabConfig(), settings.consensus)
    settings = dataclasses.replace(settings, consensus=consensus)
    off_settings = dataclasses.replace(settings, output=dataclasses.replace(settings.output, heatmap=False))
    # one pass over every text first: the model runs once, in large batches, and the cache is written once
    texts = [r.prompt for c in cases for r in _rounds_of(c)] + [c.round.reference for c in cases if c.round.reference]
    texts += [x.text if x.error is None else "" for c in cases for x in c.round.responses]
    embedder.embed(texts)
    # with --lab lm_grade_weight the LM's grades cached in benchmarks/lm_grades/ (``rate hostile``) join the rounds
    # they cover fully, as stored LM evidence; the others are graded by nothing
    from benchmarks.lm_grades import grade_source
    from validator.records.lm_evidence import LMEvidence

    grades = grade_source(lab)
    rows: list[Row] = []
    for case in cases:
        if "off" in case.modes:
            outcomes = {}
            for r in _rounds_of(case):
                graded = grades(r) if grades is not None else None
                known = None if graded is None else LMEvidence(r.round_id, "cached", Signals(lm_grade=graded))
                o = run_stages(r, embedder, off_settings, extensions=hooks, evidence=known, nli=nli)
                outcomes[r.round_id] = Paid.of(r, o.evaluation, o.allocation)
            rows += _rows(case, "off", outcomes)
        if "lm" in case.modes:
            if lm is None:
                rows += _skipped(case, "lm", "needs --lm")
                continue
            on = lm_settings_ or lm_settings(settings)
            outcomes, notes = {}, []
            for r in _rounds_of(case):
                t = time.perf_counter()
                o = run_stages(r, embedder, on, lm=lm, extensions=hooks, nli=nli)
                outcomes[r.round_id] = Paid.of(r, o.evaluation, o.allocation)
                skipped = [k for k in o.lm_skipped if "budget" in k.reason]
                notes.append(
                    f"LM {time.perf_counter() - t:.0f} s"
                    + (f", {len(skipped)} checks cut by the budget" if skipped else "")
                )
            rows += _rows(case, "lm", outcomes, "; ".join(notes))
    return rows


def format_table(rows: Sequence[Row], *, notes: bool = True) -> str:
    """The rows as one Markdown table, and a line counting PASS / FAIL / SKIP."""
    head = "| case | issue | mode | expectation | measured | result |" + (" why |" if notes else "")
    lines = [head, "|" + "---|" * (7 if notes else 6)]
    for r in rows:
        cells = [r.case, str(r.issue), r.mode, r.expectation, r.measured, r.status] + ([r.note] if notes else [])
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    counts = Counter(r.status for r in rows)
    lines.append(f"\n{counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP")
    return "\n".join(lines)


def export_rounds(cases: Sequence[Case], path: Path) -> None:
    """Every case's round as a rounds file (``validator replay`` reads it)."""
    from validator.records.round_input import round_to_json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(round_to_json(c.round)) + "\n" for c in cases), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hostile", description=__doc__.split("\n\n")[0])
    settings_arguments(parser)
    parser.add_argument("--out", type=Path, default=Path("out/hostile"), help="vector and LM caches")
    parser.add_argument("--case", action="append", default=[], metavar="NAME", help="run only these cases")
    parser.add_argument("--cases-dir", type=Path, default=CASES_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--lm", action="store_true", help="also run the cases marked lm, with the LM")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument(
        "--export-rounds", type=Path, metavar="FILE", help="write the cases' rounds as a rounds file and exit"
    )
    parser.add_argument("--no-notes", action="store_true", help="leave the 'why' column out")
    parser.add_argument("--nli", action="store_true", help="read answers against a reference with the NLI judge")
    args = parser.parse_args(argv)
    cases = load_cases(args.cases_dir, args.case or None)
    if args.export_rounds:
        export_rounds(cases, args.export_rounds)
        print(f"wrote {len(cases)} rounds to {args.export_rounds}")
        return 0
    settings, lab = read_settings(args)
    t = time.perf_counter()
    nli = load_judge() if args.nli else None
    if args.lm:
        on = lm_settings(settings, args.set)
        with open_lm(on, args.out / "lm-cache") as lm:
            rows = run_cases(settings, cases, out=args.out, lm=lm, lm_settings_=on, lab=lab, nli=nli)
    else:
        rows = run_cases(settings, cases, out=args.out, lab=lab, nli=nli)
    print(format_table(rows, notes=not args.no_notes))
    print(f"{len(cases)} cases in {time.perf_counter() - t:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1), encoding="utf-8")
    return 0 if not any(r.status == "FAIL" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
