"""What README's first command needs of a machine: disk, memory and CPU.

    python -m benchmarks.resources [--rounds 3] [--no-run] [--out FILE.json]

Disk: the virtual environment (``sys.prefix``) with its largest packages, the LM model parts
packaged in it (``lm.embedded``'s part packages), and the cache directory (``paths.cache_dir``,
default ``~/.cache/consensus-validator``: the assembled models, the embedding model's export and
compiled form, the daemon's local state). Sizes are bytes on disk (allocated blocks).

Memory and CPU: README's command (``validator daemon --rounds N --store DIR`` on the embedded
defaults, a fresh store, metrics off) in a subprocess, its process tree sampled every 0.5 s
(``psutil``): the peak resident set of the daemon's own process, the peak sum over the tree
(the daemon, its three LM servers, the miner pool) as RSS and as PSS (shared pages counted
once), the CPU seconds of the tree, and the wall time. The models are assembled and the
embedding model compiled on a first run; run once before measuring a warm start.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GIB = 1024**3


def daemon_args(rounds: int, store: Path) -> list[str]:
    """The arguments of README's first command (``validator daemon --rounds N --store DIR``) with the metrics
    endpoint off, so that runs side by side do not compete for its port (benchmarks.main_job, the LM tests)."""
    return ["daemon", "--rounds", str(rounds), "--store", str(store), "--metrics-port", "-1"]


def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (hard links counted once)."""
    seen, total = set(), 0
    for dirpath, dirs, files in os.walk(path):
        for name in files + dirs:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def disk() -> dict:
    import site

    from lm.embedded import MODELS
    from validator.settings import load_settings

    packages = Path(site.getsitepackages()[0])
    biggest = sorted(((disk_bytes(p), p.name) for p in packages.iterdir() if p.is_dir()), reverse=True)[:10]
    parts = 0
    for model in MODELS.values():
        for package, _sha in model.parts:
            spec = importlib.util.find_spec(package)
            if spec is not None and spec.submodule_search_locations:
                parts += disk_bytes(Path(list(spec.submodule_search_locations)[0]))
    cache = Path(load_settings().paths.cache)
    return {
        "venv": disk_bytes(Path(sys.prefix)),
        "venv_largest": [[n, b] for b, n in biggest],
        "model_parts_in_venv": parts,
        "cache_dir": str(cache).replace(str(Path.home()), "~"),
        "cache": disk_bytes(cache) if cache.is_dir() else 0,
        "cache_parts": {p.name: disk_bytes(p) for p in sorted(cache.iterdir())} if cache.is_dir() else {},
    }


def run(rounds: int) -> dict:
    import psutil

    with tempfile.TemporaryDirectory(prefix="resources-") as tmp:
        cmd = [sys.executable, "-m", "validator", *daemon_args(rounds, Path(tmp) / "store")]
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        main = psutil.Process(proc.pid)
        cpu: dict[int, float] = {}
        peak = {"daemon_rss": 0, "tree_rss": 0, "tree_pss": 0, "processes": 0}
        while proc.poll() is None:
            try:
                tree = [main, *main.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            rss = pss = 0
            for p in tree:
                try:
                    info = p.memory_full_info()
                    times = p.cpu_times()
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                rss, pss = rss + info.rss, pss + getattr(info, "pss", info.rss)
                cpu[p.pid] = times.user + times.system + times.children_user + times.children_system
                if p.pid == main.pid:
                    peak["daemon_rss"] = max(peak["daemon_rss"], info.rss)
            peak["tree_rss"], peak["tree_pss"] = max(peak["tree_rss"], rss), max(peak["tree_pss"], pss)
            peak["processes"] = max(peak["processes"], len(tree))
            time.sleep(0.5)
        out = proc.stdout.read() if proc.stdout else ""
        wall = time.perf_counter() - t0
        store = disk_bytes(Path(tmp) / "store")
    if proc.returncode != 0:
        raise SystemExit(f"the daemon exited {proc.returncode}:\n{out[-3000:]}")
    return {
        **peak,
        "cpu_s": sum(cpu.values()),
        "wall_s": wall,
        "rounds": rounds,
        "load_at_start": load,
        "store_bytes": store,
        "cores": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-run", action="store_true", help="disk only")
    p.add_argument("--out", default=None, help="also write the figures here (JSON)")
    args = p.parse_args(argv)
    result = {"disk": disk()}
    d = result["disk"]
    print(
        f"virtual environment {d['venv'] / GIB:.2f} GiB (LM model parts in it {d['model_parts_in_venv'] / GIB:.2f} "
        f"GiB); largest: " + ", ".join(f"{n} {b / GIB:.2f}" for n, b in d["venv_largest"][:6])
    )
    print(
        f"cache {d['cache_dir']} {d['cache'] / GIB:.2f} GiB: "
        + ", ".join(f"{n} {b / 2**20:.0f} MiB" for n, b in d["cache_parts"].items())
    )
    if not args.no_run:
        r = result["run"] = run(args.rounds)
        print(
            f"validator daemon --rounds {r['rounds']}: {r['wall_s']:.0f} s wall, {r['cpu_s']:.0f} CPU s "
            f"({r['cores']} cores, load {r['load_at_start']:.1f} at start); peak RSS: daemon "
            f"{r['daemon_rss'] / GIB:.2f} GiB, all {r['processes']} processes {r['tree_rss'] / GIB:.2f} GiB "
            f"(PSS {r['tree_pss'] / GIB:.2f} GiB); store {r['store_bytes'] / 2**20:.1f} MiB"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
