"""What the repository holds: no built artefact, and history told by date or commit, never by "session N".

The product's code (every ``.py`` outside ``tests/``), README.md and the docs speak of the product as it is;
where history matters they give the date or the commit (``git log`` finds when). The lab's experiment journals
(benchmarks/journal/) keep their history as written.
"""

from __future__ import annotations

import re

import pytest

from tests.test_portable_paths import ROOT, tracked_files

SESSION = re.compile(r"\bsessions? \d+", re.IGNORECASE)
BUILT = (".whl", ".egg", ".tar.gz", ".pyc", ".so")


def sessions(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in SESSION.finditer(text)]


def held_to_dates(path: str) -> bool:
    if path.endswith(".py"):
        return not path.startswith("tests/")
    return path == "README.md" or (path.startswith("docs/") and path.endswith(".md"))


def test_the_pattern_finds_a_session_and_nothing_else():
    assert sessions("measured in session 19 and in Sessions 17") == [(1, "session 19"), (1, "Sessions 17")]
    assert sessions("a test session, the session's server, 2026-11-26") == []


def test_no_session_numbers_in_the_product_readme_or_docs():
    found = []
    for path in tracked_files():
        name = path.relative_to(ROOT).as_posix()
        if held_to_dates(name):
            found += [f"{name}:{line}: {text}" for line, text in sessions(path.read_text(encoding="utf-8"))]
    assert not found, "history by date or commit (git log finds when):\n" + "\n".join(found)


def test_no_built_artefact_is_tracked():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    built = [p.relative_to(ROOT).as_posix() for p in tracked_files() if p.name.endswith(BUILT)]
    assert not built, f"built artefacts in the repository: {built}"


DOCS_LINES = 4_500  # issue 48: docs/ is for users; the experiment journals live in benchmarks/journal/


def test_docs_stay_a_users_manual():
    pages = sorted((ROOT / "docs").rglob("*.md"))
    lines = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in pages}
    assert pages, "docs/ holds no page"
    assert sum(lines.values()) <= DOCS_LINES, (
        f"docs/ has {sum(lines.values())} lines (at most {DOCS_LINES}): move measurements and history to "
        f"benchmarks/journal/; longest pages: {sorted(lines.items(), key=lambda kv: -kv[1])[:3]}"
    )
