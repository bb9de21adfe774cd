"""Imports at the top of each module: the dependency graph a reader sees there is the real one (issue 48).

An import inside a function is left only where an optional extra (bittensor, the ``[chain]`` extra) or a measured
start-up cost (scikit-learn, matplotlib, torch, Ray, ...: ``validator --help`` and the fast suite never pay them)
asks for it, or where tests replace the imported function on its module; a comment on its line or the line
above says which. At most ``CAP`` in the packages pyproject.toml ships.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_structure import ROOT, modules, packages

CAP = 60


def lazy_imports(path: Path) -> list[tuple[int, bool]]:
    """(line, commented) of every import inside a function of ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[tuple[int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        previous: tuple[int, bool] | None = None  # (end line, commented) of the import just before, in this body
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                above = lines[child.lineno - 2].strip() if child.lineno > 1 else ""
                own = lines[child.lineno - 1 : child.end_lineno]
                # a comment says why for the block of imports under it
                grouped = previous is not None and previous[0] == child.lineno - 1 and previous[1]
                commented = above.startswith("#") or any("#" in line for line in own) or grouped
                found.append((child.lineno, commented))
                previous = (child.end_lineno or child.lineno, commented)
            else:
                previous = None
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(ast.parse("\n".join(lines)), False)
    return found


def test_the_counter_sees_an_import_in_a_method_and_its_comment(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import os\n\nclass A:\n    def f(self):\n        import json  # lazy: why\n\n"
        "def g():\n    # lazy: why\n    from x import (\n        y,\n    )\n    import z\n\n    import w\n"
    )
    assert lazy_imports(path) == [(5, True), (9, True), (12, True), (14, False)]


def test_at_most_60_imports_inside_functions_each_with_its_reason():
    everywhere = {
        f"{path.relative_to(ROOT).as_posix()}:{line}": commented
        for path in modules(ROOT, packages()).values()
        for line, commented in lazy_imports(path)
    }
    assert len(everywhere) <= CAP, f"{len(everywhere)} imports inside functions (at most {CAP}): move them to the top"
    assert [where for where, commented in everywhere.items() if not commented] == []
