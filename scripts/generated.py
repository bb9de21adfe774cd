"""The one writer of the modules that scripts/gen_*.py generate into consensus/.

``consensus/`` reads no file at run time, so the data it needs (the common English words, the Unicode
confusables) is a Python module, generated from a package's data and committed. Each generator declares
its ``TARGET`` (a path relative to the repository root) and ``text()`` (the module's text); ``write``
puts the text in place, and the tests compare the committed module with ``text()``. Run a generator from
the repository root as a module (``python -m scripts.gen_confusables``) or as a file (``python
scripts/gen_confusables.py``): either way it imports ``consensus`` from this checkout.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write(target: str, text: str) -> int:
    """Write ``text`` to ``target`` (relative to the repository root), say so, and return the exit status 0."""
    (ROOT / target).write_text(text, encoding="utf-8")
    print(f"wrote {target} ({len(text.splitlines())} lines)")
    return 0
