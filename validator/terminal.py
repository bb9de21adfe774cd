"""Printing to a terminal: untrusted text made safe (no control characters, bounded width), and a
progress line for a round under way (miners answered, then each validator stage).
"""

from __future__ import annotations

import re
import sys
import threading
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
        d = t.as_dict()
        lines.append(f"{safe(miner, 42):<42} {d['rounds']:>6} {d['in_consensus_rate']:>8.0%} "
                     f"{d['mean_composite']:>10.1f} {d['emissions']:>15,}")
    return "\n".join(lines)


class Progress:
    """What the round under way is doing, on stderr.

    On a terminal one line is rewritten in place (``round-000001: 7/10 miners done``); in a log
    (not a terminal) each stage gets one line and the miner count only its last value, so a
    round adds a handful of lines, not one per miner. Call ``clear()`` before printing a result.
    Thread-safe: the miner count arrives from the query thread.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._shown = False
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            if self.tty:
                self.stream.write("\r\x1b[K" + safe(text, 120))
                self._shown = True
            else:
                count = _COUNT.search(text)
                if count is not None and count.group(1) != count.group(2):
                    return
                self.stream.write(safe(text, 120) + "\n")
            self.stream.flush()

    def done(self, line: str) -> None:
        """Clear the progress line and print ``line`` (a round's result) on stdout."""
        self.clear()
        print(line, flush=True)

    def clear(self) -> None:
        with self._lock:
            if self._shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self._shown = False
