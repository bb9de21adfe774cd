"""The development and wide sets with a 5-identity sybil group, for ``benchmarks.validity``.

    python -m benchmarks.sybil_sets [--validity ../shared/validity] [--out out/hostile/sets] [--seed 0]

Writes, for each set (``dev``: ``rounds.jsonl.gz`` + ``truth.json``; ``wide``: ``wide/`` the same):

- ``<set>-perturbed.jsonl.gz`` and ``<set>-perturbed-truth.json``: every round plus five
  identities (``s-0`` .. ``s-4``, one operator, no entity declared) serving perturbed copies of one
  model's answer (``--source``; default the same model in both sets, xwinlm-13b-v0.1: ``d15`` /
  ``w41``): sentences shuffled and about 15% of the words dropped, each identity with its own seed
  (``benchmarks.attacks.perturb``), arriving 0.05-0.6 s after the source;
- ``<set>-llm.jsonl.gz`` and ``<set>-llm-truth.json``: the rounds of the LLM subset only (the
  rounds ``benchmarks/hostile_cases/sybil_paraphrases.json`` covers), each plus five identities
  (``l-0`` .. ``l-4``) serving the embedded LM's rewrites of the source's answer, one style each
  (``benchmarks.hostile_make sybil``), arriving 0.5-3 s after the source (they wait for it).

The truth files add ``sybil_groups`` (group -> identities), as ``benchmarks.validity`` reads them;
the issue's bar is the group's total share <= 1.5x an honest mean share. Every random step is
seeded (``--seed``); the same seed writes byte-identical files.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.attacks import perturb
from benchmarks.hostile_make import SYBIL_FILE
from consensus.types import Response, Round
from validator.records.round_input import round_to_json

SOURCES = {"dev": "d15", "wide": "w41"}  # xwinlm-13b-v0.1 in both (identical answers: the LLM rewrites serve both)


def _rng(seed: int, *parts: object) -> random.Random:
    return random.Random(f"{seed}:" + ":".join(str(p) for p in parts))


def with_perturbed(
    rounds: Sequence[Round], source: str, seed: int, n: int = 5, drop: float = 0.15, prefix: str = "s"
) -> list[Round]:
    """Every round plus ``n`` identities serving perturbed copies of ``source``'s answer."""
    out = []
    for r in rounds:
        base = next(x for x in r.responses if x.miner == source)
        extra = []
        for k in range(n):
            rng = _rng(seed, r.round_id, k)
            text = perturb(base.text, rng.randrange(2**31), drop)
            extra.append(Response(f"{prefix}-{k}", text, round(base.latency_s + rng.uniform(0.05, 0.6), 3)))
        out.append(Round(r.round_id, r.prompt, r.responses + tuple(extra), r.reference))
    return out


def with_llm(
    rounds: Sequence[Round], source: str, paraphrases: dict[str, Any], seed: int, prefix: str = "l"
) -> list[Round]:
    """The rounds the paraphrase file covers, each plus one identity per stored rewrite of ``source``'s answer."""
    out = []
    for r in rounds:
        entry = paraphrases["rounds"].get(r.prompt)
        if entry is None or len(entry["paraphrases"]) < 5:
            continue
        base = next(x for x in r.responses if x.miner == source)
        if base.text != entry["source_text"]:
            raise ValueError(f"{r.round_id}: {source}'s answer is not the text the paraphrases were written from")
        extra = []
        for k, p in enumerate(entry["paraphrases"][:5]):
            rng = _rng(seed, "llm", r.round_id, k)
            extra.append(Response(f"{prefix}-{k}", p["text"], round(base.latency_s + rng.uniform(0.5, 3.0), 3)))
        out.append(Round(r.round_id, r.prompt, r.responses + tuple(extra), r.reference))
    return out


def with_reworded(rounds: Sequence[Round], source: str, seed: int, n: int = 5, prefix: str = "r") -> list[Round]:
    """Every round plus ``n`` identities rewording ``source``'s answer by seeded synonym swaps, shuffled
    sentences and fillers, 0.05 s apart after it (the ``benchmarks.hostile --dev`` set of 2026-11-25)."""
    from benchmarks.hostile_synthetic import reword

    rng = random.Random(seed)
    out = []
    for r in rounds:
        base = next(x for x in r.responses if x.miner == source)
        extra = tuple(
            Response(f"{prefix}-{k}", reword(base.text, rng, swap=0.3), base.latency_s + 0.05 * (k + 1))
            for k in range(n)
        )
        out.append(Round(r.round_id, r.prompt, r.responses + extra, r.reference))
    return out


def write_sets(validity: Path, out: Path, seed: int = 0) -> dict[str, tuple[Path, Path]]:
    """The suite's sybil sets (``benchmarks.suite``), written once per seed under ``out``: name -> (rounds, truth)."""
    from benchmarks.data import read_rounds

    made: dict[str, tuple[Path, Path]] = {}
    raw = SYBIL_FILE.read_bytes() if SYBIL_FILE.exists() else None
    paraphrases = json.loads(raw) if raw is not None else None
    digest = hashlib.sha256(raw).hexdigest()[:12] if raw is not None else ""
    for name, folder in (("dev", validity), ("wide", validity / "wide")):
        truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
        source = SOURCES[name]
        plans = [
            (
                f"{name}+perturbed",
                lambda rs, source=source: with_perturbed(rs, source, seed),
                {f"perturbed-{source}": [f"s-{k}" for k in range(5)]},
            )
        ]
        if name == "dev":
            plans.append(
                (
                    f"{name}+reworded",
                    lambda rs, source=source: with_reworded(rs, source, seed),
                    {f"reworded-{source}": [f"r-{k}" for k in range(5)]},
                )
            )
        if paraphrases is not None:  # the rewrites of d15's answers serve w41 too: the same model, the same texts
            plans.append(
                (
                    f"{name}+llm",
                    lambda rs, source=source: with_llm(rs, source, paraphrases, seed),
                    {f"llm-{source}": [f"l-{k}" for k in range(5)]},
                )
            )
        rounds = None
        for label, build, groups in plans:
            tag = f"-{digest}" if label.endswith("+llm") else ""  # a grown paraphrase file makes a new set
            path = out / f"{label.replace('+', '-')}-{seed}{tag}.jsonl.gz"
            truth_path = path.with_name(path.name.replace(".jsonl.gz", "-truth.json"))
            if not (path.exists() and truth_path.exists()):
                rounds = rounds if rounds is not None else read_rounds(folder / "rounds.jsonl.gz")
                write_set(build(rounds), truth, groups, path)
            made[label] = (path, truth_path)
    return made


def write_set(rounds: Sequence[Round], truth: dict[str, Any], groups: dict[str, list[str]], path: Path) -> Path:
    """``path`` (.jsonl.gz) and ``<stem>-truth.json`` beside it; returns the truth path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(round_to_json(r)) + "\n" for r in rounds).encode("utf-8")
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:  # mtime 0: same bytes
        fh.write(lines)
    out = dict(truth)
    out["sybil_groups"] = {**truth.get("sybil_groups", {}), **groups}
    truth_path = path.with_name(path.name.replace(".jsonl.gz", "-truth.json"))
    truth_path.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return truth_path


def sybil_rows(name: str, report: dict[str, Any], bound: float = 1.5) -> list[Any]:
    """The sybil groups of a ``benchmarks.validity_report.report`` as hostile-table rows (issue 24's bar)."""
    from benchmarks.hostile import Row

    rows = []
    for group, g in report["sybil_groups"].items():
        r = g["over_honest_mean"]
        rows.append(
            Row(
                f"{name}/{group}",
                24,
                "off",
                f"a 5-identity group earns <= {bound}x an honest mean share together",
                "total_at_most_mean",
                f"{r:.2f}x (share {g['share']:.4f}; Spearman {report['spearman']:.3f})",
                r,
                bound,
                "PASS" if r <= bound + 1e-9 else "FAIL",
                f"{report['rounds']} rounds",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    from benchmarks.data import read_rounds

    parser = argparse.ArgumentParser(prog="python -m benchmarks.sybil_sets", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--validity",
        type=Path,
        default=Path("../shared/validity"),
        help="the validity data (rounds.jsonl.gz, truth.json, wide/)",
    )
    parser.add_argument("--out", type=Path, default=Path("out/hostile/sets"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--drop", type=float, default=0.15, help="share of words each perturbed copy drops")
    args = parser.parse_args(argv)
    paraphrases = json.loads(SYBIL_FILE.read_text(encoding="utf-8")) if SYBIL_FILE.exists() else None
    for name, folder in (("dev", args.validity), ("wide", args.validity / "wide")):
        source = SOURCES[name]
        rounds = read_rounds(folder / "rounds.jsonl.gz")
        truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
        written = [
            write_set(
                with_perturbed(rounds, source, args.seed, drop=args.drop),
                truth,
                {f"perturbed-{source}": [f"s-{k}" for k in range(5)]},
                args.out / f"{name}-perturbed.jsonl.gz",
            )
        ]
        if paraphrases is not None:
            subset = with_llm(rounds, source, paraphrases, args.seed)
            if subset:
                written.append(
                    write_set(
                        subset,
                        truth,
                        {f"llm-{source}": [f"l-{k}" for k in range(5)]},
                        args.out / f"{name}-llm.jsonl.gz",
                    )
                )
        for t in written:
            rounds_path = t.with_name(t.name.replace("-truth.json", ".jsonl.gz"))
            print(f"python -m benchmarks.validity {rounds_path} {t}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
