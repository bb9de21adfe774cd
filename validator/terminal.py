"""Printing untrusted text to a terminal: no control characters, bounded width."""

from __future__ import annotations

import unicodedata


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
