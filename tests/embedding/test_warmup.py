"""Background warm-up: the model opens first, then the round's heavy modules are imported."""

import threading

import embedding.warmup as warmup


class Recorder:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[str] = []
        self.error = error

    def open(self) -> None:
        self.calls.append(f"open on {threading.current_thread().name}")
        if self.error is not None:
            raise self.error


def test_open_then_preload_opens_the_model_before_the_imports(monkeypatch):
    monkeypatch.setattr(warmup, "_started", None)
    order: list[str] = []
    embedder = Recorder()
    monkeypatch.setattr(warmup, "_import", lambda: order.append("import"))
    monkeypatch.setattr(Recorder, "open", lambda self: order.append("open"))
    thread = warmup.open_then_preload(embedder)
    thread.join(10)
    assert order == ["open", "import"]
    assert not thread.daemon  # a command that ends first waits for it (the runtime's libraries stay loaded)
    assert warmup.open_then_preload(Recorder()) is thread  # once per process


def test_a_failed_open_is_left_to_the_first_embedding_and_the_imports_still_run(monkeypatch):
    monkeypatch.setattr(warmup, "_started", None)
    imported = []
    monkeypatch.setattr(warmup, "_import", lambda: imported.append(True))
    embedder = Recorder(error=RuntimeError("no model"))
    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args))
    warmup.open_then_preload(embedder).join(10)
    assert embedder.calls == ["open on consensus-preload"] and imported == [True] and errors == []


def test_an_embedder_without_open_only_imports(monkeypatch):
    monkeypatch.setattr(warmup, "_started", None)
    imported = []
    monkeypatch.setattr(warmup, "_import", lambda: imported.append(True))
    warmup.open_then_preload(object()).join(10)
    assert imported == [True]


def test_finish_waits_for_a_non_daemon_warm_up_and_not_for_a_daemon_one(monkeypatch):
    """A command's exit path (``validator.cli.main``): the replay's thread (which the process waits for anyway)
    ends before the interpreter shuts down; the daemon's (``preload``) leaves an error exit immediate."""
    release, done = threading.Event(), []
    monkeypatch.setattr(warmup, "_import", lambda: (release.wait(10), done.append(True)))
    monkeypatch.setattr(warmup, "_started", None)
    thread = warmup.open_then_preload(Recorder())
    threading.Timer(0.2, release.set).start()
    warmup.finish()
    assert done == [True] and not thread.is_alive()

    release.clear()
    monkeypatch.setattr(warmup, "_started", None)
    daemon = warmup.preload()
    warmup.finish()
    assert daemon.is_alive()  # not waited for
    release.set()
    daemon.join(10)


def test_an_import_cut_short_prints_nothing(monkeypatch):
    """Raised again where the module is used; here (an interpreter shutting down) it would be a traceback."""
    monkeypatch.setattr(warmup, "_started", None)
    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args))

    def cut_short():
        raise RuntimeError("can't register atexit after shutdown")

    monkeypatch.setattr(warmup, "_import", cut_short)
    warmup.preload().join(10)
    assert errors == []
