"""Validity benchmark: do a config's rewards track the known quality of the miners?

    python -m benchmarks.validity                       # every set and the hostile cases (benchmarks.suite)
    python -m benchmarks.validity ROUNDS TRUTH [--config X.toml] [--out DIR] [--set consensus.x=1 ...]

ROUNDS is a rounds file in the project's round format (``.jsonl`` or ``.jsonl.gz``); TRUTH is a
``truth.json`` as in ``../shared/validity`` beside the checkout (``lc_winrate`` per honest miner, ``adversarial``
role -> miner, ``copy_of`` copier -> source) and may add ``sybil_groups`` (name -> miners) and
``majority_wrong`` (round id -> miners whose answer is wrong). Each round is evaluated and
allocated exactly as ``validator replay`` does without the LM (``run_round``'s pure core:
``consensus.evaluate`` with the reference signal, then ``emissions.allocate``), and the script
prints:

- Spearman between honest miners' total emissions and their quality, with a 95% bootstrap
  interval over rounds (seeded), and on split halves (rounds 1st/2nd half; models at even/odd
  rank) to show a gain is not one half's accident;
- every adversarial miner's share of emissions, whether copies paid (copy group / source alone),
  each sybil group's total share against an honest miner's mean share;
- per part of the composite (alignment, quality, ...) and per modifier (speed, top), the Spearman
  of its per-miner mean, and how often the best honest miner was an outlier or a copy.

Embedding is the expensive part: vectors are computed once with the project's MiniLM embedder and
cached on disk under ``--out`` by the SHA-256 of (embedder checksum, long-text policy, text), so
a config variant re-evaluates in seconds. With ``consensus.coverage_semantic`` above 0 every answer's
sentences are embedded too (``embedding.sentences``) and cached the same way (``sentences-*.npz``,
one matrix and its keys).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import inspect
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from consensus.pipeline import evaluate
from consensus.similarity import cosine_matrix
from consensus.types import Evaluation, Reason, Round
from emissions.allocate import Allocation, allocate
from validator.rounds import parse_round
from validator.settings import Settings, load_settings

if "signals" in inspect.signature(evaluate).parameters:
    from consensus.signals import Signals
else:  # pragma: no cover - the pre-redesign evaluate (commit 4d83129, docs/validity.md), which the baseline runs with
    Signals = None  # type: ignore[assignment,misc]

try:  # the model reads the text as a reader sees it (consensus.text.visible); older trees embed it as written
    from consensus.text import visible as embedded_text
except ImportError:  # pragma: no cover - the baseline tree

    def embedded_text(text: str) -> str:
        return text


PARTS = ("composite", "alignment", "quality", "confidence", "bonus", "reference")


def read_rounds(path: Path) -> list[Round]:
    opener = gzip.open if path.suffix == ".gz" else open
    rounds = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                rounds.append(parse_round(json.loads(line), f"{path}:{number}"))
    return rounds


def _load_embedder(settings: Settings):
    try:  # the embedding runtime is moving out of consensus/; use whichever path exists
        from embedding import load_embedder  # type: ignore[import-not-found]
    except ImportError:
        from embedding.loader import load_embedder
    return load_embedder(
        settings.embedding.runtime, threads=settings.embedding.threads, long_texts=settings.embedding.policy()
    )


class VectorCache:
    """Embedding vectors by content hash, in one ``.npz`` per (embedder, policy) under ``directory``."""

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.settings = settings
        self.embedder = None
        policy = json.dumps(dataclasses.asdict(settings.embedding), sort_keys=True, default=str)
        self.tag = hashlib.sha256(policy.encode()).hexdigest()[:12]
        self.path = directory / f"vectors-{self.tag}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                self.vectors = {k: data[k] for k in data.files}

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if self.key(t) not in self.vectors})
        if missing:
            if self.embedder is None:
                self.embedder = _load_embedder(self.settings)
            for start in range(0, len(missing), 256):
                chunk = missing[start : start + 256]
                emb = self.embedder.embed(chunk)
                for t, v in zip(chunk, emb.vectors):
                    self.vectors[self.key(t)] = np.asarray(v, dtype=np.float32)
                print(f"  embedded {min(start + 256, len(missing))}/{len(missing)}", file=sys.stderr, flush=True)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, **self.vectors)
            tmp.replace(self.path)
        return np.stack([self.vectors[self.key(t)] for t in texts])


class SentenceCache:
    """Sentence vectors by content hash: one ``.npz`` (keys, matrix) per (embedder, policy) under ``directory``."""

    def __init__(self, vectors: VectorCache) -> None:
        self.parent = vectors
        self.path = vectors.path.with_name(f"sentences-{vectors.tag}.npz")
        self.rows: dict[str, int] = {}
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        if self.path.exists():
            with np.load(self.path) as data:
                self.matrix = data["vectors"]
                self.rows = {str(k): i for i, k in enumerate(data["keys"])}

    def fill(self, texts: Sequence[str]) -> None:
        """Embed every sentence of ``texts`` not cached yet (one pass, in chunks), then save."""
        from embedding.sentences import split_sentences

        missing = sorted({s for t in texts for s in split_sentences(t) if VectorCache.key(s) not in self.rows})
        if not missing:
            return
        if self.parent.embedder is None:
            self.parent.embedder = _load_embedder(self.parent.settings)
        fresh = []
        for start in range(0, len(missing), 1024):
            fresh.append(self.parent.embedder.embed(missing[start : start + 1024]).vectors.astype(np.float32))
            print(f"  sentences {min(start + 1024, len(missing))}/{len(missing)}", file=sys.stderr, flush=True)
        keys = [k for k, _ in sorted(self.rows.items(), key=lambda kv: kv[1])] + [VectorCache.key(s) for s in missing]
        self.matrix = np.concatenate([self.matrix.reshape(-1, fresh[0].shape[1]), *fresh])
        self.rows = {k: i for i, k in enumerate(keys)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=self.matrix)
        tmp.replace(self.path)

    def get(self, texts: Sequence[str]) -> tuple[np.ndarray, ...]:
        from embedding.sentences import split_sentences

        dim = self.matrix.shape[1]
        return tuple(
            self.matrix[[self.rows[VectorCache.key(s)] for s in split_sentences(t)]].reshape(-1, dim) for t in texts
        )


@dataclass(frozen=True)
class Replayed:
    round: Round
    evaluation: Evaluation
    allocation: Allocation


def replay(rounds: list[Round], cache: VectorCache, settings: Settings) -> list[Replayed]:
    """Evaluate and allocate every round, as ``validator replay`` does without the LM (with
    ``consensus.weight_lm_grade`` > 0, the LM's grades cached under benchmarks/lm_grades/ join the rounds they cover)."""
    # one pass over every text first: the model runs once, in large batches, and the cache is written once
    cache.get(
        [embedded_text(x.text) if x.error is None else "" for r in rounds for x in r.responses]
        + [embedded_text(r.reference) for r in rounds if r.reference]
        + [embedded_text(r.prompt) for r in rounds]
    )
    sentences = None
    if getattr(settings.consensus, "coverage_semantic", 0.0) > 0:
        sentences = SentenceCache(cache)
        sentences.fill([x.text if x.error is None else "" for r in rounds for x in r.responses])
    out = []
    tracker = PairTracker(settings)
    graded = _grades(settings)
    for r in rounds:
        texts = [embedded_text(x.text) if x.error is None else "" for x in r.responses]
        ref = [embedded_text(r.reference)] if r.reference else []
        vectors = cache.get(texts + ref + [embedded_text(r.prompt)])
        x = vectors[: len(texts)]
        if Signals is None:
            ev = evaluate(r, x, settings.consensus, sim=cosine_matrix(x))
        else:
            extra = {} if sentences is None else {"sentence_vectors": sentences.get(texts)}
            # what validator replay gives the core: similarities to the reference and to the prompt
            extra["prompt_similarity"] = Signals.cosines(x, vectors[-1])
            extra.update(tracker.signals(r))
            if graded is not None:
                extra.update(graded(r))
            signals = Signals.from_reference_vector(x, vectors[len(texts)], **extra) if ref else Signals(**extra)
            ev = evaluate(r, x, settings.consensus, signals)
        allocation = allocate(r, ev, settings.emissions)
        tracker.fold(r, ev, allocation)
        out.append(Replayed(r, ev, allocation))
    return out


def _grades(settings: Settings):
    try:  # the LM's cached grades (issue 38); a tree without them has none
        from benchmarks.lm_grades import grade_source
    except ImportError:  # pragma: no cover - the baseline tree
        return None
    return grade_source(settings)


def graded_rounds(rounds: list[Round]) -> list[Round]:
    """The rounds every answer of which benchmarks/lm_grades/ holds a grade for (``--graded-only``)."""
    from benchmarks.lm_grades import GradeSource

    source = GradeSource()
    return [r for r in rounds if source.covers(r)]


class PairTracker:
    """The daemon's persistence rule over the rounds in order (consensus.identity): the ledger's pair evidence
    folded round after round, and each round's followers and linked entities from the rounds before it."""

    def __init__(self, settings: Settings) -> None:
        self.config = settings.consensus
        self.ledger = None
        self.sequence = 0
        if getattr(self.config, "identity_persistence", False):
            from emissions.ledger import Ledger

            self.ledger = Ledger()

    def signals(self, round_: Round) -> dict[str, Any]:
        if self.ledger is None or not self.ledger.pairs:
            return {}
        from consensus.identity import round_links

        c = self.config
        present = {x.miner: i for i, x in enumerate(round_.responses) if x.error is None and x.text.strip()}
        followers, entities = round_links(
            present, self.ledger.links(min_rounds=c.identity_min_rounds, share=c.identity_share, lead=c.identity_lead)
        )
        return {k: v for k, v in (("followers", followers), ("entities", entities)) if v}

    def fold(self, round_: Round, ev: Evaluation, allocation: Allocation) -> None:
        if self.ledger is None:
            return
        from emissions.ledger import MinerEntry

        self.sequence += 1
        entries = [
            MinerEntry(res.miner, share, amount, res.in_consensus, resp.error is not None)
            for res, resp, share, amount in zip(ev.results, round_.responses, allocation.shares, allocation.amounts)
        ]
        self.ledger = self.ledger.apply(
            self.sequence, round_.round_id, entries, no_quorum=False, close=ev.close_pairs, comparable=ev.comparable
        )


def ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x), dtype=np.float64)
    r[order] = np.arange(len(x), dtype=np.float64)
    xs = x[order]
    i = 0
    while i < len(x):  # average ranks over ties
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        r[order[i : j + 1]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    ra, rb = ranks(np.asarray(a, dtype=np.float64)), ranks(np.asarray(b, dtype=np.float64))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = float(np.sqrt((ra**2).sum() * (rb**2).sum()))
    return float((ra * rb).sum() / den) if den else 0.0


def amounts_table(reps: list[Replayed], miners: list[str]) -> np.ndarray:
    """(rounds, miners) emitted units; a miner absent from a round has 0."""
    col = {m: j for j, m in enumerate(miners)}
    table = np.zeros((len(reps), len(miners)))
    for k, rep in enumerate(reps):
        for res, amount in zip(rep.evaluation.results, rep.allocation.amounts):
            if res.miner in col:
                table[k, col[res.miner]] = amount
    return table


def part_means(reps: list[Replayed], honest: list[str]) -> dict[str, list[float]]:
    sums: dict[str, dict[str, list[float]]] = {p: {m: [] for m in honest} for p in (*PARTS, "speed", "top", "words")}
    for rep in reps:
        for res, speed, top in zip(rep.evaluation.results, rep.allocation.speed, rep.allocation.top):
            if res.miner not in sums["composite"]:
                continue
            for p in PARTS:
                v = getattr(res.score, p)
                if v is not None:
                    sums[p][res.miner].append(float(v))
            sums["speed"][res.miner].append(speed)
            sums["top"][res.miner].append(top)
            sums["words"][res.miner].append(float(res.words))
    return {p: [float(np.mean(v[m])) if v[m] else 0.0 for m in honest] for p, v in sums.items()}


def report(reps: list[Replayed], truth: dict[str, Any], *, seed: int = 0, boot: int = 1000) -> dict[str, Any]:
    quality = truth["lc_winrate"]
    honest = sorted(quality)
    adv = truth.get("adversarial", {})
    sybils: dict[str, list[str]] = truth.get("sybil_groups", {})
    miners = sorted({res.miner for rep in reps for res in rep.evaluation.results})
    table = amounts_table(reps, miners)
    col = {m: j for j, m in enumerate(miners)}
    q = [quality[m] for m in honest]
    hcols = [col[m] for m in honest if m in col]
    total = table.sum()
    share = {m: float(table[:, col[m]].sum() / total) if total else 0.0 for m in miners}
    rho = spearman(table[:, hcols].sum(axis=0), q)
    rng = np.random.default_rng(seed)
    boots = [spearman(table[rng.integers(0, len(reps), len(reps))][:, hcols].sum(axis=0), q) for _ in range(boot)]
    half = len(reps) // 2
    by_rank = sorted(honest, key=lambda m: -quality[m])
    halves = {
        "rounds_first": spearman(table[:half][:, hcols].sum(axis=0), q),
        "rounds_second": spearman(table[half:][:, hcols].sum(axis=0), q),
        "models_even": spearman([table[:, col[m]].sum() for m in by_rank[0::2]], [quality[m] for m in by_rank[0::2]]),
        "models_odd": spearman([table[:, col[m]].sum() for m in by_rank[1::2]], [quality[m] for m in by_rank[1::2]]),
    }
    honest_mean = float(np.mean([share[m] for m in honest]))
    out: dict[str, Any] = {
        "rounds": len(reps),
        "spearman": rho,
        "ci95": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))],
        "split_half": halves,
        "honest_mean_share": honest_mean,
        "adversary_share": {role: share.get(m, 0.0) for role, m in adv.items()},
    }
    copies: dict[str, list[str]] = {}
    for copier, source in truth.get("copy_of", {}).items():
        copies.setdefault(source, []).append(copier)
    out["copy_group_over_source"] = {
        src: (share.get(src, 0.0) + sum(share.get(c, 0.0) for c in cs)) / max(share.get(src, 0.0), 1e-12)
        for src, cs in copies.items()
    }
    # the second half of the rounds alone: what a group earns once persistence had rounds to link it
    late = table[half:]
    late_total = late.sum()
    late_share = {m: float(late[:, col[m]].sum() / late_total) if late_total else 0.0 for m in miners}
    late_honest = float(np.mean([late_share.get(m, 0.0) for m in honest]))
    out["sybil_groups"] = {
        name: {
            "share": sum(share.get(m, 0.0) for m in ms),
            "over_honest_mean": sum(share.get(m, 0.0) for m in ms) / max(honest_mean, 1e-12),
            "late_over_honest_mean": sum(late_share.get(m, 0.0) for m in ms) / max(late_honest, 1e-12),
        }
        for name, ms in sybils.items()
    }
    means = part_means(reps, honest)
    out["parts"] = {p: spearman(v, q) for p, v in means.items() if np.ptp(v) > 0}
    best = by_rank[0]
    counts = {reason.value: 0 for reason in Reason}
    honest_copy = 0
    for rep in reps:
        for res in rep.evaluation.results:
            if res.miner == best:
                counts[res.reason.value] += 1
            if res.miner in quality and res.reason is Reason.COPY:
                honest_copy += 1
    out["best_miner_reasons"] = {k: v for k, v in counts.items() if v}
    out["honest_marked_copy"] = honest_copy
    out["unreached_rounds"] = sum(not rep.evaluation.consensus.reached for rep in reps)
    out["honest_paid_share"] = float(sum(share[m] for m in honest))
    out["emitted_units"] = int(total)
    out["honest_units"] = int(table[:, hcols].sum())
    return out


def print_report(rep: dict[str, Any]) -> None:
    lo, hi = rep["ci95"]
    print(
        f"spearman={rep['spearman']:.3f}  ci95=[{lo:.3f}, {hi:.3f}]  rounds={rep['rounds']}  "
        f"unreached={rep['unreached_rounds']}"
    )
    print("split-half: " + "  ".join(f"{k}={v:.3f}" for k, v in rep["split_half"].items()))
    print(
        f"honest: mean share={rep['honest_mean_share']:.4f}  total={rep['honest_paid_share']:.4f}  "
        f"marked copy={rep['honest_marked_copy']}  best miner: {rep['best_miner_reasons']}  "
        f"units: emitted={rep['emitted_units']:,} honest={rep['honest_units']:,}"
    )
    if rep["adversary_share"]:
        print("adversaries: " + "  ".join(f"{k}={v:.4f}" for k, v in rep["adversary_share"].items()))
    for src, ratio in rep["copy_group_over_source"].items():
        print(f"copies of {src}: group/source={ratio:.3f} ({'paid' if ratio > 1.0 + 1e-9 else 'did not pay'})")
    for name, g in rep["sybil_groups"].items():
        print(
            f"sybil group {name}: share={g['share']:.4f} = {g['over_honest_mean']:.2f}x honest mean "
            f"(second half of the rounds: {g['late_over_honest_mean']:.2f}x)"
        )
    print("parts (spearman of per-miner mean): " + "  ".join(f"{k}={v:.3f}" for k, v in rep["parts"].items()))


def overrides(settings: Settings, pairs: list[str]) -> Settings:
    """Apply ``section.field=value`` overrides (values parsed as JSON, else kept as text), per section at once."""
    by_section: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        section, _, name = key.partition(".")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        by_section.setdefault(section, {})[name] = value
    for section, values in by_section.items():
        settings = dataclasses.replace(settings, **{section: dataclasses.replace(getattr(settings, section), **values)})
    return settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.validity", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "rounds",
        type=Path,
        nargs="?",
        help="rounds file (.jsonl or .jsonl.gz); none: every set and the hostile cases (benchmarks.suite)",
    )
    parser.add_argument(
        "truth", type=Path, nargs="?", help="truth.json: lc_winrate per honest miner, adversaries, copies"
    )
    parser.add_argument(
        "--validity",
        type=Path,
        default=Path("../shared/validity"),
        help="the validity data (the suite's sets; default: beside the checkout)",
    )
    parser.add_argument("--no-hostile", action="store_true", help="the suite without the hostile cases")
    parser.add_argument("--config", type=Path, help="settings TOML ([consensus], [emissions], ...)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.FIELD=VALUE",
        help="override one setting (repeatable), e.g. --set emissions.speed_weight=0",
    )
    parser.add_argument("--out", type=Path, default=Path("out/validity"), help="vector cache and report.json")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--graded-only",
        action="store_true",
        help="only the rounds the LM's cached grades cover (benchmarks/lm_grades/): the subset they are measured on",
    )
    args = parser.parse_args(argv)
    settings = overrides(load_settings(args.config, env={}, dotenv_path=None), args.set)
    if args.rounds is None or args.truth is None:
        if args.rounds is not None:
            parser.error("a rounds file needs its truth.json")
        from benchmarks.suite import run

        shipped = load_settings(None, env={}, dotenv_path=None) if (args.config or args.set) else None
        args.out.mkdir(parents=True, exist_ok=True)
        return run(settings, shipped, args.validity, args.out, hostile=not args.no_hostile)
    truth = json.loads(args.truth.read_text(encoding="utf-8"))
    rounds = read_rounds(args.rounds)
    if args.graded_only:
        rounds = graded_rounds(rounds)
        if not rounds:
            parser.error(
                f"{args.rounds}: no round is fully graded in benchmarks/lm_grades/ (python -m benchmarks.lm_grades)"
            )
    cache = VectorCache(args.out, settings)
    rep = report(replay(rounds, cache, settings), truth, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(rep, indent=1), encoding="utf-8")
    print(json.dumps(rep, indent=1) if args.json else "", end="")
    if not args.json:
        print_report(rep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
