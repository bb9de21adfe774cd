"""Untrusted text (miner ids, reasons, titles) made safe to draw in the heatmap.

Stripped of control/format characters, combining marks and glyphs the bundled
font lacks, collapsed to one line and shortened; tick labels keep their start
and end (miner ids differ at either end) and stay unique.
"""

from __future__ import annotations

import enum
import functools
import unicodedata
from collections.abc import Sequence

from matplotlib import font_manager
from matplotlib.font_manager import FontProperties
from matplotlib.ft2font import FT2Font

FONT = "DejaVu Sans"  # bundled with matplotlib: same glyphs on every machine
LABEL_CHARS = 24  # miner ids longer than this lose their middle to an ellipsis

# Unicode categories removed outright: controls, format (zero-width, bidi overrides),
# surrogates, private use, unassigned, and combining marks (no "zalgo" stacks).
_DROP = {"Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me"}
_SPACE = {"Zs", "Zl", "Zp"}


@functools.lru_cache(maxsize=1)
def _charmap() -> frozenset[int]:
    """Code points the bundled font can draw (a missing glyph would warn at draw time)."""
    path = font_manager.findfont(FontProperties(family=FONT), fallback_to_default=True)
    return frozenset(FT2Font(path).get_charmap())


def sanitise(text: object, limit: int) -> str:
    """One printable line of at most ``limit`` characters (ellipsis when cut)."""
    if isinstance(text, enum.Enum):
        text = text.value
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    s = unicodedata.normalize("NFC", str(text))
    chars = _charmap()
    out: list[str] = []
    for ch in s:
        cat = unicodedata.category(ch)
        if ch in "\t\n\r\v\f" or cat in _SPACE:
            if out and out[-1] != " ":
                out.append(" ")
        elif cat in _DROP:
            continue
        else:
            out.append(ch if ord(ch) in chars else "?")
    s = "".join(out).strip()
    if len(s) > limit:
        s = s[: max(limit - 1, 0)].rstrip() + "\u2026"
    return s


def _shorten(label: object, limit: int) -> str:
    """A sanitised label of at most ``limit`` characters that keeps its start and its end.

    Miner ids differ at either end (``pool-honest-1`` / ``pool-honest-2``, hotkeys ``5F3s…EYjQX``):
    cutting the middle keeps both, where cutting the tail made many ids look alike.
    """
    s = sanitise(label, 10_000)
    if len(s) <= limit:
        return s
    if limit < 6:
        return sanitise(s, limit)
    tail = (limit - 1) // 2
    return s[: limit - 1 - tail].rstrip() + "\u2026" + s[len(s) - tail :].lstrip()


def unique_labels(labels: Sequence[object]) -> list[str]:
    """Sanitised, shortened labels; collisions get their index appended as ``#i``."""
    shown = [_shorten(label, LABEL_CHARS) or f"#{i}" for i, label in enumerate(labels)]
    for _ in range(3):
        seen: dict[str, list[int]] = {}
        for i, s in enumerate(shown):
            seen.setdefault(s, []).append(i)
        clashes = [idx for idx in seen.values() if len(idx) > 1]
        if not clashes:
            return shown
        for idx in clashes:
            for i in idx:
                tag = f"#{i}"
                base = _shorten(labels[i], max(LABEL_CHARS - len(tag), 1))
                shown[i] = base + tag if base and not shown[i].startswith("#") else tag
    # Last resort: bare indices are unique among themselves; make sure nothing else uses them.
    taken = {f"#{i}" for i in range(len(shown))}
    seen_final: dict[str, int] = {}
    for s in shown:
        seen_final[s] = seen_final.get(s, 0) + 1
    return [s if seen_final[s] == 1 and (s not in taken or s == f"#{i}") else f"#{i}" for i, s in enumerate(shown)]


MAX_REASON_KEYS = 10  # legend entries; further reasons share "other"
REASON_COLORS = {
    "in_consensus": "#2e9e44",
    "other_cluster": "#3b75c4",
    "outlier": "#f08c00",
    "copy": "#8e44ad",
    "empty": "#b0b0b0",
    "too_short": "#a0522d",
    "error": "#d62728",
    "polarity": "#e377c2",
    "factual": "#9467bd",
    "injection": "#000000",
}
EXTRA_REASON_COLORS = ("#17becf", "#bcbd22", "#7f7f7f", "#8c564b", "#1f77b4", "#ff9896", "#98df8a", "#c5b0d5")
OTHER_REASON = "other"
OTHER_REASON_COLOR = "#dddddd"


def reason_palette(reasons: list[str]) -> tuple[list[str], dict[str, str]]:
    """Per-response legend key and key -> color, deterministic in the set of reasons."""
    distinct = sorted(
        set(reasons),
        key=lambda r: (r not in REASON_COLORS, list(REASON_COLORS).index(r) if r in REASON_COLORS else 0, r),
    )
    keep = distinct[:MAX_REASON_KEYS]
    colors: dict[str, str] = {}
    extra = iter(EXTRA_REASON_COLORS)
    for r in keep:
        colors[r] = REASON_COLORS.get(r) or next(extra, OTHER_REASON_COLOR)
    keys = [r if r in colors else OTHER_REASON for r in reasons]
    if OTHER_REASON in keys and OTHER_REASON not in colors:
        colors[OTHER_REASON] = OTHER_REASON_COLOR
    return keys, colors
