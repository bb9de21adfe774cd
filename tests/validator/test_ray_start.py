"""``ray_session`` tries again when a local Ray start times out, and leaves no warning from the failed try behind."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import types
import warnings

import pytest

from validator.replaying.ray_engine import RayEngineError, RayOptions, ray_session


class FakeRay(types.ModuleType):
    """``ray``'s start as a busy machine sees it: the first tries time out with their processes still running."""

    def __init__(self, failures: int, message: str = "The current node timed out during startup.") -> None:
        super().__init__("ray")
        self.failures, self.message, self.started, self.pids = failures, message, False, []

    def is_initialized(self) -> bool:
        return self.started

    def init(self, **kwargs) -> None:
        self.kwargs = kwargs
        if len(self.pids) < self.failures:
            process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # a half-started node
            self.pids.append(process.pid)
            raise RuntimeError(self.message)  # the Popen lives on in this frame, held by the traceback
        self.started = True

    def shutdown(self) -> None:
        self.started = False


@pytest.fixture
def fake_ray(monkeypatch):
    made: list[FakeRay] = []

    def install(failures: int, **kwargs) -> FakeRay:
        fake = FakeRay(failures, **kwargs)
        monkeypatch.setitem(sys.modules, "ray", fake)
        made.append(fake)
        return fake

    yield install
    for fake in made:
        for pid in fake.pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def test_a_start_that_timed_out_is_tried_again_and_its_processes_warn_nowhere(fake_ray):
    fake = fake_ray(failures=2)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with ray_session(RayOptions(num_cpus=2)):
            assert fake.started
        gc.collect()
    assert len(fake.pids) == 2 and not fake.started
    assert [w for w in seen if issubclass(w.category, ResourceWarning)] == []


def test_another_failure_stops_at_once_in_one_line(fake_ray):
    fake_ray(failures=1, message="port 6379 is in use")
    with pytest.raises(
        RayEngineError, match=r"^cannot start Ray \(a local runtime\): RuntimeError: port 6379 is in use$"
    ):
        with ray_session(RayOptions()):
            pass


def test_a_local_runtime_has_one_worker_per_core_this_process_may_run_on(fake_ray, monkeypatch):
    # Ray's own count is the machine's cores: pinned to one core (taskset, a cpuset) it started two workers there
    fake = fake_ray(failures=0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with ray_session(RayOptions()):
        assert fake.kwargs["num_cpus"] == 1
    with ray_session(RayOptions(num_cpus=3)):
        assert fake.kwargs["num_cpus"] == 3
