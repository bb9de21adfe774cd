"""No absolute path of one machine anywhere in the repository: every command must run from a clone.

Data beside the checkout is named relatively (``../shared/validity/``, as CI lays it out), outputs
go under the git-ignored ``out/`` or a directory the reader picks, and the home directory is ``~``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# built from parts, so this file does not match itself
_ROOTS = "|".join(["wo" + "rk", "ro" + "ot", r"home/[\w.-]+", r"Users/[\w.-]+", r"mnt/[\w.-]+", r"media/[\w.-]+"])
MACHINE_PATH = re.compile(
    # a path starting at the file system's root (not "x/work" nor "$DIR/tmp" with a slash after them), into a workspace, a home
    # directory, a mount, or a named file or directory in /tmp (one session's scratch)
    r"(?<![\w.$/~-])/(?:(?:" + _ROOTS + r")/|t" + r"mp/[\w-][\w.-]*)"
    # a Windows home directory
    r"|\b[A-Za-z]:\\" + r"Users\\"
)


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the repository's files are those git tracks")
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [ROOT / name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def machine_paths(text: str) -> list[tuple[int, str]]:
    return [
        (text.count("\n", 0, m.start()) + 1, text[max(0, m.start() - 20) : m.end() + 20].replace("\n", " "))
        for m in MACHINE_PATH.finditer(text)
    ]


@pytest.mark.parametrize(
    "text,found",
    [
        ("data at /wo" + "rk/shared/validity", True),
        ("cd /ho" + "me/ali/x", True),
        ("--out /t" + "mp/p16/validity", True),
        ("--json /t" + "mp/rvr.json", True),
        ("C:\\Us" + "ers\\ali\\x", True),
        ("/ro" + "ot/.cache/x", True),
        ("../shared/validity", False),
        ("${TMPDIR:-/t" + "mp}/validator-ci", False),
        ("DIR/t" + "mp/ Ray's session files", False),
        ("https://example.com/wo" + "rk/x", False),
        ("~/.cache/consensus-validator", False),
        ("/usr/bin/time", False),
    ],
)
def test_the_pattern(text, found):
    assert bool(machine_paths(text)) is found


def test_no_absolute_machine_paths_in_the_repository():
    bad = []
    for path in tracked_files():
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary (models, compressed data, images)
        for line, context in machine_paths(data.decode("utf-8", errors="replace")):
            bad.append(f"{path.relative_to(ROOT)}:{line}: ...{context}...")
    assert not bad, (
        "absolute paths of one machine (use paths relative to the checkout, ../shared/ for the "
        "data beside it, out/ for outputs):\n" + "\n".join(bad)
    )
