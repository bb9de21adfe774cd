"""Printing to a terminal: untrusted text made safe (no control characters, bounded width), and a
progress line for what a command is doing (starting its servers, a round's miners, then each stage),
repeated with the seconds spent while a stage lasts, so no step is silent for long.
"""

from __future__ import annotations

import re
import sys
import threading
import time
import unicodedata
from typing import TextIO

_COUNT = re.compile(r"(\d+)/(\d+) miners done$")


def safe(text: str, limit: int = 40) -> str:
    """Printable form of an untrusted string: control/format characters escaped, truncated."""
    out = []
    for ch in text:
        if unicodedata.category(ch)[0] == "C":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    s = "".join(out)
    return s if len(s) <= limit else s[: limit - 1] + "\u2026"


def miner_table(summary) -> str:
    """Per-miner table: rounds, in-consensus rate, mean composite, total emissions."""
    rows = sorted(summary.miners.items(), key=lambda kv: (-kv[1].emissions, kv[0]))
    header = f"{'miner':<42} {'rounds':>6} {'in-cons':>8} {'mean score':>10} {'emissions':>15}"
    lines = [header, "-" * len(header)]
    for miner, t in rows:
        lines.append(
            f"{safe(miner, 42):<42} {t.rounds:>6} {t.in_consensus_rate:>8.0%} "
            f"{t.mean_composite:>10.1f} {t.emissions:>15,}"
        )
    return "\n".join(lines)


HEARTBEAT_S = 10.0  # a stage still under way after this long is shown again, with its seconds
QUIET_S = 2.0  # a quiet stage (``later``) is shown only once it has lasted this long


class Progress:
    """What the command is doing, on stderr: the current stage, and how long it has lasted.

    On a terminal one line is rewritten in place (``round-000001: 7/10 miners done``); in a log
    (not a terminal) each stage gets one line and the miner count only its last value, so a
    round adds a handful of lines, not one per miner. Call ``clear()`` before printing a result.
    Used as a context manager, a heartbeat shows a stage that lasts again every ``every`` seconds
    with the time it has taken (``round-000001: evaluating (20 s)``): starting the LM servers, a
    first model export, the miners' answers and the LM's checks each take tens of seconds, and a
    command that prints nothing for a minute looks hung (issue 27). ``later(text)`` is a quiet
    stage, shown only once it has lasted ``quiet`` seconds (a start-up step that is usually quick:
    a start that fails at once prints its one error line, nothing else). ``idle(text)`` shows a
    wait that says when it ends (no heartbeat). Thread-safe: the miner count arrives from the
    query thread.
    """

    def __init__(
        self, stream: TextIO | None = None, *, every: float = HEARTBEAT_S, quiet: float = QUIET_S, clock=time.monotonic
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every
        self.quiet = quiet
        self.clock = clock
        self._pending = False  # the stage is quiet and not shown yet
        self._shown = False
        self._lock = threading.Lock()
        self._stage: str | None = None  # the stage under way (None: nothing, or an idle wait)
        self._since = 0.0  # when it began (its first message; a miner count does not restart it)
        self._last = 0.0  # when something was last shown
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, text: str) -> None:
        with self._lock:
            self._begin(text)
            self._show(text, self.clock())

    def later(self, text: str) -> None:
        """A quiet stage: shown (by the heartbeat) only once it has lasted ``quiet`` seconds."""
        with self._lock:
            self._begin(text)
            self._pending = True

    def _begin(self, text: str) -> None:
        now = self.clock()
        if self._stage is None or _stage_of(text) != _stage_of(self._stage):
            self._since = now
        self._stage = text
        self._pending = False

    def _show(self, text: str, now: float) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + safe(text, 120))
            self._shown = True
        else:
            count = _COUNT.search(text)
            if count is not None and count.group(1) != count.group(2):
                return  # the heartbeat shows the count while the miners answer
            self.stream.write(safe(text, 120) + "\n")
        self._last = now
        self.stream.flush()

    def idle(self, text: str) -> None:
        """Show a wait that names its end (``next round in 25 s``): shown once, no heartbeat."""
        with self._lock:
            self._stage, self._pending = None, False
            self._show(text, self.clock())

    def beat(self) -> None:
        """Show the stage under way again with its seconds, when nothing was shown for ``every`` seconds
        (a quiet stage: when it has lasted ``quiet`` seconds, then the same)."""
        with self._lock:
            now = self.clock()
            if self._stage is None:
                return
            if self._pending:
                if now - self._since >= self.quiet:
                    self._pending = False
                    self._show(f"{self._stage} ({now - self._since:.0f} s)", now)
            elif now - self._last >= self.every:
                self._show(f"{self._stage} ({now - self._since:.0f} s)", now)

    def __enter__(self) -> Progress:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="progress-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.clear()

    def _run(self) -> None:
        while not self._stop.wait(min(1.0, self.every / 4)):
            self.beat()

    def done(self, line: str) -> None:
        """Clear the progress line and print ``line`` (a round's result) on stdout."""
        self.clear()
        print(line, flush=True)

    def clear(self) -> None:
        with self._lock:
            self._stage, self._pending = None, False
            if self._shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self._shown = False


def _stage_of(text: str) -> str:
    """A stage's name: ``round-000001: 3/10 miners done`` is the query stage (``round-000001: querying miners``)."""
    return _COUNT.sub("querying miners", text)
