"""Import the core's heavy dependencies on a background thread.

scikit-learn takes about 0.9 s to import (mostly scipy.stats). A process that
is about to spend seconds inside the embedding runtime (which releases the
GIL) can import it meanwhile; the first real use then finds it loaded, or
waits on Python's import lock until it is.
"""

from __future__ import annotations

import os
import threading

_started: threading.Thread | None = None


def _import() -> None:
    try:
        # Lowest CPU priority for this thread only (Linux nice is per thread):
        # the import fills gaps instead of slowing the embedding runtime.
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass
    import sklearn.cluster  # noqa: F401
    import sklearn.neighbors  # noqa: F401


def preload() -> threading.Thread:
    """Start (once) the background import; returns the thread."""
    global _started
    if _started is None:
        _started = threading.Thread(target=_import, name="consensus-preload", daemon=True)
        _started.start()
    return _started
