"""Shared fixtures: a clean environment, the fake embedder (fast suite) and the real one (slow tests)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Where PYTHONDONTWRITEBYTECODE is set, each worker would compile every module of the tree and
# re-rewrite every test module's asserts on every run (about 4 s of a worker's 9 s start). The suite
# caches them anyway, outside the sources (.pytest_cache is git-ignored); the workers started after
# this import inherit the setting. Without the variable Python's usual __pycache__ is left alone.
if sys.dont_write_bytecode:
    _PYCACHE = str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", _PYCACHE)
    sys.dont_write_bytecode = False
    sys.pycache_prefix = sys.pycache_prefix or _PYCACHE


def pytest_configure(config):
    # warnings are errors (pyproject), except the deep-learning stack's own deprecations,
    # raised inside the reference runtime and the one-time ONNX export
    for line in (
        "ignore::DeprecationWarning:torch",
        "ignore::DeprecationWarning:transformers",
        "ignore::UserWarning:torch",
    ):
        config.addinivalue_line("filterwarnings", line)


def pytest_addoption(parser):
    parser.addoption(
        "--file-durations",
        type=int,
        default=None,
        metavar="N",
        help="after the run, the N test files that took longest (setup, call and teardown summed; 0: all)",
    )


_FILE_SECONDS: dict[str, float] = {}
_FILE_TESTS: dict[str, int] = {}


def pytest_runtest_logreport(report):
    """Each phase's time added to its file's (under xdist the controller receives every worker's reports)."""
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration
    if report.when == "call" or (report.when == "setup" and report.skipped):
        _FILE_TESTS[path] = _FILE_TESTS.get(path, 0) + 1


def pytest_terminal_summary(terminalreporter, config):
    """``--file-durations N``: the per-file time report (CI prints it: .ci/run)."""
    n = config.getoption("--file-durations")
    if n is None or not _FILE_SECONDS:
        return
    rows = sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1])
    total = sum(_FILE_SECONDS.values())
    terminalreporter.write_sep("=", f"time per test file ({len(rows)} files, {total:.0f} s of test time in all)")
    for path, seconds in rows[: n or None]:
        share = seconds / total if total else 0.0
        terminalreporter.write_line(f"{seconds:9.1f} s {share:6.1%} {_FILE_TESTS.get(path, 0):5d} tests  {path}")


def pytest_collection_modifyitems(config, items):
    # the fast suite never loads the real model: a test that needs it must say so with the slow mark
    for item in items:
        if "real_embedder" in getattr(item, "fixturenames", ()) and item.get_closest_marker("slow") is None:
            raise pytest.UsageError(f"{item.nodeid} uses the real embedding model (real_embedder): mark it slow")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """How many processes ``-n auto`` (pyproject's addopts) starts: two for the whole fast suite, else none.

    ``python -m pytest`` (no paths, the default ``-m "not slow"``) is split over two processes by file
    (``--dist loadfile``: a module's fixtures are built once), which halves its wall time on two cores.
    A run naming paths, or one with slow tests (CI's ``-m "slow or not slow"``: the real model, servers,
    Ray), stays in one process. ``-n N`` on the command line (``-n 0``: serial) overrides this.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):  # xdist's own override
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    whole_fast_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS and config.option.markexpr == "not slow"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 2 if whole_fast_suite and cpus >= 2 else 0


# test files that share session fixtures (tests/report/conftest.py: the replayed hostile store, the daemon
# store) run in one worker, which builds them once; every other file is a unit of its own
SHARED_SCOPES = ("tests/report/",)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the files under each of ``SHARED_SCOPES`` as one unit of work."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFixtureScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return next((scope for scope in SHARED_SCOPES if path.startswith(scope)), path)

    return SharedFixtureScheduling(config, log)


# The tests' embedded LM servers run on one thread (llama.cpp's default here is one per core). With a core
# taken by another process, a server with two threads spins the free core while one thread waits for its
# preempted peer: tests/judge/test_local_judge.py took 705 s with two threads, 191 s with one (docs/performance.md,
# "Test-suite time", also what one thread costs without a busy core). The session's server (``local_lm``) and the
# servers the tests start themselves take it as ``threads=``; commands, in-process or in a subprocess, through
# the setting.
# VALIDATOR_TEST_LM_THREADS=N measures the tests with another count (0: one per core, the product's default).
TEST_LM_THREADS = int(os.environ.get("VALIDATOR_TEST_LM_THREADS", "1"))
# The real embedding model's threads in the tests: unset, the product's default (``embedding.threads = 0``, one
# per core); VALIDATOR_TEST_THREADS=N forces N in every test, in the commands they run (``VALIDATOR_THREADS``) and
# in the session's ``real_embedder``. The suite passes at 1 and at 2 (what a replay promises across thread
# settings: tests/replay_tolerance.py).
TEST_EMBEDDING_THREADS = os.environ.get("VALIDATOR_TEST_THREADS", "")
# Module- and session-scoped fixtures run before the first test's ``clean_env``: a fixture that replays with a
# command (tests/validator/test_replay.py's ``replayed``) embedded on one thread per core while the test that
# compared its bytes with a second replay ran on N, and the bytes differed (VALIDATOR_TEST_THREADS=1, 2026-11-29).
# The process's own environment holds both counts, so every fixture and every subprocess reads them too.
os.environ["VALIDATOR_LM_THREADS"] = str(TEST_LM_THREADS)
if TEST_EMBEDDING_THREADS:
    os.environ["VALIDATOR_THREADS"] = TEST_EMBEDDING_THREADS
else:  # the shell's own count would reach the fixtures and not the tests (clean_env removes it)
    os.environ.pop("VALIDATOR_THREADS", None)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No VALIDATOR_* settings leak in from the developer's shell, and no .env is read.

    ``VALIDATOR_LM_THREADS`` is ``TEST_LM_THREADS``: an embedded LM a command starts runs on one thread;
    ``VALIDATOR_THREADS`` is ``TEST_EMBEDDING_THREADS`` when that is set.
    """
    for name in list(os.environ):
        if name.startswith("VALIDATOR_") and name != "VALIDATOR_CACHE_DIR":
            monkeypatch.delenv(name)
    monkeypatch.setenv("VALIDATOR_LM_THREADS", str(TEST_LM_THREADS))  # 0 is the setting's "one per core"
    if TEST_EMBEDDING_THREADS:
        monkeypatch.setenv("VALIDATOR_THREADS", TEST_EMBEDDING_THREADS)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def fast_tests_never_load_the_model(request, monkeypatch):
    """Outside slow tests, commands run in-process get the fake embedder and the real one cannot be built, and no
    NLI judge (tests that need one hand in a fake: tests/validator/test_nli_evidence.py)."""
    if request.node.get_closest_marker("slow") is not None:
        return
    import embedding.loader
    import embedding.windowed
    from consensus.fake import FakeEmbedder

    def refuse(*args, **kwargs):
        raise RuntimeError(
            "the fast suite does not load the real embedding model: use the `embedder` "
            "fixture (consensus.fake) or mark the test slow and use `real_embedder`"
        )

    fake = FakeEmbedder()
    monkeypatch.setattr(embedding.loader, "load_embedder", lambda *args, **kwargs: fake)
    monkeypatch.setattr(embedding.windowed.WindowedEmbedder, "__init__", refuse)
    import judge.nli

    # nor the NLI judge (its extra installed or not): the commands read no verdict, as without the extra
    monkeypatch.setattr(judge.nli, "installed_judge", lambda: None)


@pytest.fixture(scope="session")
def embedder():
    """The fast suite's embedder: deterministic hashed vectors, no model (consensus.fake).

    Texts sharing words are close, so paraphrased answers still form a consensus.
    Tests of the real model ask for ``real_embedder`` and are marked slow.
    """
    from consensus.fake import FakeEmbedder

    return FakeEmbedder()


@pytest.fixture(scope="session")
def real_embedder():
    """The real all-MiniLM-L6-v2 on the configured runtime (session-wide); only for tests marked slow.

    Built as the commands build it, from the settings: its export is cached under ``paths.cache_dir``
    (``VALIDATOR_CACHE_DIR``, which ``clean_env`` keeps for this reason).
    """
    from validator.app import load_configured_embedder
    from validator.settings import load_settings

    cache_env = {k: v for k, v in os.environ.items() if k in ("VALIDATOR_CACHE_DIR", "XDG_CACHE_HOME")}
    if TEST_EMBEDDING_THREADS:
        cache_env["VALIDATOR_THREADS"] = TEST_EMBEDDING_THREADS
    return load_configured_embedder(load_settings(None, env=cache_env, dotenv_path=None))


@pytest.fixture(scope="session")
def lm_threads() -> int | None:
    """The thread count of an embedded LM server a test starts itself (``LocalServer(threads=lm_threads)``)."""
    return TEST_LM_THREADS or None  # None: LocalServer's one per core


@pytest.fixture(scope="session")
def local_lm(lm_threads):
    """The embedded LM server (slow tests only), started once per test session and shared by every file.

    Starting it takes 20-25 s on two cores, and each of six files used to start its own; the CLI tests in
    them (``validator judge``, ``selectit``, ``lm score``) started another each. Inside this test process the
    commands find it as they find a running ``validator lm serve`` (``lm.running_server.running`` answers with it for
    the settings' cache directory, unless a real ``lm serve`` is advertised there), and nothing is written
    for other processes: a shared machine's other commands never come to depend on a server that stops
    with the session. ``tests/lm/test_local.py`` still starts and stops one of its own, and
    ``tests/lm/test_served.py`` tests the advert itself in a directory of its own.
    """
    from lm import running_server as served
    from lm.embedded import LocalServer
    from validator.settings import load_settings

    cache = Path(load_settings().paths.cache)
    original = served.running
    with LocalServer(parallel=1, cache_dir=cache, threads=lm_threads) as server, pytest.MonkeyPatch.context() as patch:

        def running(cache_dir, model=server.model):
            found = original(cache_dir, model)
            if found is None and model == server.model and cache_dir is not None and Path(cache_dir) == cache:
                return server.endpoint
            return found

        patch.setattr(served, "running", running)
        yield server
