"""Import a round's heavy dependencies on a background thread while the model loads and embeds.

scikit-learn takes about 0.9 s to import on an idle machine (mostly
scipy.stats) and matplotlib (the heatmap) about 0.5 s. A process that is
about to spend seconds loading the model and inside the embedding runtime
(native code that releases the GIL) can import them meanwhile; the first
real use then finds them loaded, or waits on Python's import lock until they
are. The CLI calls ``preload`` before loading the embedder; the pure core
never starts threads itself.

The thread runs at the process's own priority. It once ran at nice 19, which
turned into a priority inversion under load: the main thread then waits on
the import lock while the niced thread gets almost no CPU next to the
embedding runtime (measured: a 60 s wait for scikit-learn at load average 20).
"""

from __future__ import annotations

import threading

_started: threading.Thread | None = None


def _import() -> None:
    import sklearn.cluster  # noqa: F401
    import sklearn.neighbors  # noqa: F401
    # the heatmap's modules (object-oriented matplotlib: no pyplot, no global backend switch)
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401


def preload() -> threading.Thread:
    """Start (once) the background import; returns the thread."""
    global _started
    if _started is None:
        _started = threading.Thread(target=_import, name="consensus-preload", daemon=True)
        _started.start()
    return _started
