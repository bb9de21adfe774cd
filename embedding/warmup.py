"""Import a round's heavy dependencies on a background thread while the model loads and embeds.

scikit-learn takes about 0.9 s to import on an idle machine (mostly
scipy.stats) and matplotlib (the heatmap) about 0.5 s. A process that is
about to spend seconds loading the model and inside the embedding runtime
(native code that releases the GIL) can import them meanwhile; the first
real use then finds them loaded, or waits on Python's import lock until they
are. The CLI calls ``preload`` before loading the embedder; the pure core
never starts threads itself.

A command whose first work is the model (a file replay) calls ``open_then_preload``
instead: the model opens first and the imports follow on the same thread. The
open (importing the runtime, reading the compiled model) is on the path to the
first batch, while the imports are not needed before the first round is
evaluated, seconds later; run side by side with them, it waited on the GIL
(docs/performance.md: the first batch of the benchmark replay came 0.3 s later).

The thread runs at the process's own priority. It once ran at nice 19, which
turned into a priority inversion under load: the main thread then waits on
the import lock while the niced thread gets almost no CPU next to the
embedding runtime (measured: a 60 s wait for scikit-learn at load average 20).
"""

from __future__ import annotations

import threading

_started: threading.Thread | None = None


def _import() -> None:
    # the heatmap's modules (object-oriented matplotlib: no pyplot, no global backend switch)
    # lazy: start-up cost, matplotlib takes 1.7 s to import
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401

    # lazy: start-up cost, scikit-learn takes 4.7 s to import
    import sklearn.cluster
    import sklearn.neighbors  # noqa: F401


def _warm() -> None:
    """The imports, and nothing raised: this is only a warm-up. An import that fails here fails again where
    the module is used, with the error reported there; one cut short by the interpreter's shutdown (a command
    that ended at once with a one-line error) would otherwise print a traceback after that line
    (``can't register atexit after shutdown``, from concurrent.futures imported by scikit-learn)."""
    try:
        _import()
    except Exception:  # noqa: BLE001 - see the docstring: raised again, and reported, by the real import
        pass


def preload() -> threading.Thread:
    """Start (once) the background import (a daemon thread: imports only); returns the thread."""
    return _start(_warm)


def open_then_preload(embedder: object) -> threading.Thread:
    """Start (once) one background thread that opens ``embedder`` (its ``open()``, if any), then imports.

    A failed open is left to the first embedding, which opens again and raises the error where it is
    reported (for a replay: the round, by line); this thread only goes on to the imports. The thread is
    not a daemon: a command that ends before the model is open (a file of bad lines) waits for it,
    rather than unloading the runtime's libraries under a thread still inside them.
    """

    def run() -> None:
        try:
            getattr(embedder, "open", lambda: None)()
        except Exception:  # noqa: BLE001 - raised again, and reported, by the first embed
            pass
        _warm()

    return _start(run, daemon=False)


def finish(timeout: float = 120.0) -> None:
    """A command's exit path, before the interpreter shuts down: wait for the background thread when it is
    not a daemon thread (``open_then_preload``: the process waits for it anyway, and its imports then end
    before the shutdown rather than during it). A daemon thread (``preload``) is not waited for: an error
    exit stays immediate, and ``_warm`` keeps its cut-short import silent."""
    thread = _started
    if thread is not None and not thread.daemon and thread.is_alive() and thread is not threading.current_thread():
        thread.join(timeout)


def _start(target, daemon: bool = True) -> threading.Thread:
    global _started
    if _started is None:
        _started = threading.Thread(target=target, name="consensus-preload", daemon=daemon)
        _started.start()
    return _started
