"""Tests for narrative.heatmap.render_heatmap (PNG heatmap of one round)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from narrative.heatmap import _order, render_heatmap
from narrative.labels import LABEL_CHARS, sanitise
from narrative.labels import unique_labels as _unique_labels

PNG_SIG = b"\x89PNG\r\n\x1a\n"
ROOT = Path(__file__).resolve().parents[2]


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_SIG
    length, kind = struct.unpack(">I4s", png[8:16])
    assert kind == b"IHDR" and length == 13
    return struct.unpack(">II", png[16:24])


def png_chunks(png: bytes) -> list[bytes]:
    kinds, pos = [], 8
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + data) & 0xFFFFFFFF
        kinds.append(kind)
        pos += 12 + length
    return kinds


def round_inputs(n: int, k: int | None = None, seed: int = 0):
    """Structured similarity: a high-similarity consensus block, a second cluster, a few filtered."""
    rng = np.random.default_rng(seed)
    k = n // 2 if k is None else k
    centre = rng.normal(size=16)
    other = rng.normal(size=16)
    vecs = []
    clusters = []
    for i in range(n):
        if i % 2 == 0 and len([c for c in clusters if c == 0]) < k:
            vecs.append(centre + 0.3 * rng.normal(size=16))
            clusters.append(0)
        elif i % 5 == 1:
            vecs.append(rng.normal(size=16))
            clusters.append(-1)
        else:
            vecs.append(other + 0.8 * rng.normal(size=16))
            clusters.append(1)
    x = np.array(vecs).reshape(n, 16)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    sim = np.clip(x @ x.T, -1.0, 1.0)
    np.fill_diagonal(sim, 1.0)
    members = [i for i, c in enumerate(clusters) if c == 0]
    reasons = ["in_consensus" if c == 0 else ("outlier" if c < 0 else "other_cluster") for c in clusters]
    labels = [f"5Hk{i:04d}{'z' * (i % 20)}" for i in range(n)]
    return sim, labels, members, clusters, reasons


@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, 13, 64])
def test_png_for_sizes(n):
    sim, labels, members, clusters, reasons = round_inputs(n)
    png = render_heatmap(sim, labels, members, clusters, f"round with {n}", reasons)
    assert png[:8] == PNG_SIG
    w, h = png_size(png)
    assert w > 100 and h > 100
    kinds = png_chunks(png)
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"


def test_n0_small_png_and_empty_inputs():
    png = render_heatmap(np.zeros((0, 0)), [], [], [], "empty round")
    w, h = png_size(png)
    assert w <= 600 and h <= 300
    # also a flat empty array
    assert render_heatmap(np.array([]), [], [], [], "")[:8] == PNG_SIG


def test_n1_with_and_without_consensus():
    for members in ([0], []):
        png = render_heatmap(np.ones((1, 1)), ["only"], members, [0], "one", ["in_consensus"])
        assert png[:8] == PNG_SIG


def test_n256_fast_enough():
    sim, labels, members, clusters, reasons = round_inputs(256, k=100)
    render_heatmap(*round_inputs(5)[:4], "warm up")
    t0 = time.perf_counter()
    png = render_heatmap(sim, labels, members, clusters, "big round", reasons)
    elapsed = time.perf_counter() - t0
    assert png[:8] == PNG_SIG
    assert elapsed < 5.0  # ~0.7-1.2 s on the dev box; generous bound for loaded CI


def test_deterministic_bytes():
    args = round_inputs(6)  # small enough to be cheap, still with values written in the cells
    a = render_heatmap(*args[:4], "same", args[4])
    b = render_heatmap(*args[:4], "same", args[4])
    assert a == b
    # no timestamp / software text chunks
    assert b"tEXt" not in png_chunks(a) and b"tIME" not in png_chunks(a) and b"iTXt" not in png_chunks(a)
    # a different input gives a different image
    assert render_heatmap(*args[:4], "other", args[4]) != a


@pytest.mark.slow  # a fresh interpreter with matplotlib: CI runs it, the fast suite does not
def test_deterministic_across_processes():
    code = (
        f"import sys, hashlib; sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_heatmap import round_inputs\n"
        "from narrative.heatmap import render_heatmap\n"
        "a = round_inputs(5)\n"
        "print(hashlib.sha256(render_heatmap(*a[:4], 'x $y$ <z>', a[4])).hexdigest())\n"
    )
    digests = set()
    # one other process, with a hash seed that differs from this one's (a matplotlib import costs ~1.5 s)
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    env = dict(os.environ, PYTHONHASHSEED=seed, MPLBACKEND="Agg")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    digests.add(out.stdout.strip())
    import hashlib

    args = round_inputs(5)
    digests.add(hashlib.sha256(render_heatmap(*args[:4], "x $y$ <z>", args[4])).hexdigest())
    assert len(digests) == 1


def test_dimensions_grow_with_n():
    sizes = []
    for n in (5, 24, 256):  # 24: past the 3-inch minimum grid, cheaper than a labelled 64 (sizes cover 64)
        sim, labels, members, clusters, reasons = round_inputs(n)
        sizes.append(png_size(render_heatmap(sim, labels, members, clusters, "t", reasons)))
    assert sizes[0][0] < sizes[1][0] < sizes[2][0]
    assert sizes[0][1] < sizes[1][1] < sizes[2][1]


HOSTILE = [
    "$\\frac{1}{0}$",
    "<script>alert(1)</script>",
    "a\nb",
    "x" * 500,
    "x" * 499 + "y",  # same as the previous one after truncation
    "\\",
    "$",
    "$$",
    "\x00\x1b[31mred\x07",
    "\u202eevil\u202c",  # bidi override
    "z\u0301\u0302\u0303\u0304\u0305\u0306" * 10,  # zalgo
    "\U0001f600 \U0001f9e0 \u77ff\u5de5 \U000f0000",  # emoji, CJK, private use: mostly not in DejaVu Sans
    "",
    "   ",
    "#0",
    "\\mathrm{x}^{2}_{3}",
    "%s%d{}{0}",
    "\r\n\t",
]


def test_hostile_labels_and_title_do_not_raise():
    n = len(HOSTILE)
    sim, _, members, clusters, reasons = round_inputs(n)
    reasons = list(reasons)
    reasons[0] = "$\\sqrt{x}$ \n weird reason " * 5
    title = "Round $\\frac{a}{0}$ <script>\n" + "\u202e" + "t" * 300
    png = render_heatmap(sim, HOSTILE, members, clusters, title, reasons)
    assert png[:8] == PNG_SIG
    # and with the rows in a different role (all consensus / none)
    render_heatmap(sim, HOSTILE, list(range(n)), [0] * n, HOSTILE[0], None)
    render_heatmap(sim, HOSTILE, [], [-1] * n, HOSTILE[3])


def test_many_distinct_reasons_and_enum_reasons():
    import enum

    class R(str, enum.Enum):
        IN = "in_consensus"
        OUT = "outlier"

    n = 20
    sim, labels, members, clusters, _ = round_inputs(n)
    reasons = [f"reason-{i}" for i in range(n)]
    assert render_heatmap(sim, labels, members, clusters, "t", reasons)[:8] == PNG_SIG
    enum_reasons = [R.IN if i in members else R.OUT for i in range(n)]
    assert render_heatmap(sim, labels, members, clusters, "t", enum_reasons)[:8] == PNG_SIG


def test_sanitise():
    assert sanitise("a\nb", 14) == "a b"
    assert sanitise("\x00\x1b[31m", 14) == "[31m"
    assert sanitise("x" * 500, 14) == "x" * 13 + "\u2026"
    assert len(sanitise("y" * 300, 80)) == 80
    assert sanitise("\u202eabc\u200b", 14) == "abc"
    assert sanitise("e\u0301", 14) == "\u00e9"  # NFC keeps accented letters
    assert sanitise("\u77ff\u5de5 \U0001f9e0", 14) == "?? ?"  # glyphs missing from DejaVu Sans
    assert sanitise("$x$", 14) == "$x$"  # kept literally; mathtext is off


def test_unique_labels():
    labels = ["x" * 500, "x" * 499 + "y", "x" * 20, "dup", "dup", "", "#1", "#0", "a#3", "a"]
    shown = _unique_labels(labels)
    assert len(set(shown)) == len(labels)
    assert all(len(s) <= LABEL_CHARS for s in shown)
    assert shown[1].endswith("y") and shown[2] == "x" * 20  # the middle goes: the ends tell them apart
    assert shown[3] == "dup#3" and shown[4] == "dup#4"
    assert shown[9] == "a"  # untouched when no clash
    rng = np.random.default_rng(1)
    for _ in range(200):
        pool = ["#0", "#1", "#2", "a", "a#1", "a#1#2", "x" * 30, "x" * 31, "", "$", "\n"]
        labels = [pool[j] for j in rng.integers(0, len(pool), size=12)]
        shown = _unique_labels(labels)
        assert len(set(shown)) == len(shown)


def test_order_members_first_then_clusters_then_filtered():
    order, k, bounds = _order(7, members=[5, 2], clusters=[1, -1, 0, 2, 1, 0, -1])
    assert order == [2, 5, 0, 4, 3, 1, 6]
    assert k == 2
    assert bounds == [2, 4, 5]


def test_inputs_not_modified():
    sim, labels, members, clusters, reasons = round_inputs(8)
    sim[0, 1] = sim[1, 0] = -0.4  # negative: clipped only in the copy
    sim[2, 3] = sim[3, 2] = np.nan
    before = (sim.copy(), list(labels), list(members), list(clusters), list(reasons))
    members_arr = np.array(members)
    clusters_arr = np.array(clusters)
    sim.flags.writeable = False  # any in-place write would raise
    render_heatmap(sim, labels, members_arr, clusters_arr, "t", reasons)
    np.testing.assert_array_equal(sim, before[0])
    assert labels == before[1] and reasons == before[4]
    np.testing.assert_array_equal(members_arr, before[2])
    np.testing.assert_array_equal(clusters_arr, before[3])


def test_invalid_inputs_raise_value_error():
    sim, labels, members, clusters, reasons = round_inputs(4)
    with pytest.raises(ValueError):
        render_heatmap(sim[:3], labels, members, clusters, "t")
    with pytest.raises(ValueError):
        render_heatmap(sim, labels[:3], members, clusters, "t")
    with pytest.raises(ValueError):
        render_heatmap(sim, labels, [4], clusters, "t")
    with pytest.raises(ValueError):
        render_heatmap(sim, labels, [-1], clusters, "t")
    with pytest.raises(ValueError):
        render_heatmap(sim, labels, members, clusters, "t", reasons[:2])


def test_thread_safe_and_no_pyplot():
    args = round_inputs(4)  # five renders: a small map keeps them cheap, the lock is what is tested
    expected = render_heatmap(*args[:4], "threads", args[4])
    results: list[bytes] = []
    errors: list[BaseException] = []

    def work():
        try:
            results.append(render_heatmap(*args[:4], "threads", args[4]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [expected] * 4
    import matplotlib._pylab_helpers as helpers

    assert not helpers.Gcf.get_all_fig_managers()


def test_long_miner_names_keep_their_start_and_end():
    names = [
        "5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQX",
        "5F3sa2TJAWMqDhXG6jhV4N8ko9SxwGy8TpaNS1repo5EYjQY",
        "embedded-pool-honest-miner-1",
        "embedded-pool-honest-miner-2",
    ]
    shown = _unique_labels(names)
    assert len(set(shown)) == 4 and all(len(s) <= LABEL_CHARS for s in shown)
    assert shown[0].startswith("5F3sa2TJAW") and shown[0].endswith("EYjQX") and "\u2026" in shown[0]
    assert shown[2].endswith("miner-1") and shown[3].endswith("miner-2") and shown[2].startswith("embedded")


def test_the_caption_says_not_reached_when_consensus_was_not_reached(monkeypatch):
    import narrative.heatmap as heatmap

    captions: list[str] = []
    real_text = heatmap.Figure.text

    def spy(self, x, y, s, *args, **kwargs):
        captions.append(str(s))
        return real_text(self, x, y, s, *args, **kwargs)

    monkeypatch.setattr(heatmap.Figure, "text", spy)
    sim = np.array([[1.0, 0.6, 0.2], [0.6, 1.0, 0.3], [0.2, 0.3, 1.0]])
    render_heatmap(sim, ["a", "b", "c"], [0, 1], [0, 0, 1], "round-000001", reached=False)
    assert "round-000001" in captions and any("not reached" in c for c in captions)
    captions.clear()
    render_heatmap(sim, ["a", "b", "c"], [0, 1], [0, 0, 1], "round-000001", reached=True)
    assert not any("not reached" in c for c in captions) and any("outlined: consensus" in c for c in captions)


@pytest.mark.parametrize("n,reached", [(3, False), (5, False), (8, True), (12, False), (40, False), (120, False)])
def test_every_text_fits_inside_the_image(monkeypatch, n, reached):
    """Title, caption, legend and labels lie inside the figure: nothing is cut at an edge."""
    from matplotlib.text import Text

    import narrative.heatmap as heatmap

    figures = []
    real_png = heatmap._png

    def keep(fig):
        figures.append(fig)
        return real_png(fig)

    monkeypatch.setattr(heatmap, "_png", keep)
    sim, labels, members, clusters, reasons = round_inputs(n, k=max(1, n // 3))
    reasons = [
        r if c >= 0 else "filtered_before_clustering_because_it_was_too_short" for r, c in zip(reasons, clusters)
    ]
    render_heatmap(
        sim,
        labels,
        members,
        clusters,
        "round-000017: " + "a long prompt about boiling water " * 4,
        reasons,
        reached=reached,
    )
    fig = figures[-1]
    renderer = heatmap.FigureCanvasAgg(fig).get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    assert any("filtered before clustering" in t.get_text() for t in texts)  # the caption's longest form
    for t in texts:
        box = t.get_window_extent(renderer)
        assert box.x0 >= -0.5 and box.x1 <= width + 0.5, (t.get_text(), box, width)
        assert box.y0 >= -0.5 and box.y1 <= height + 0.5, (t.get_text(), box, height)
