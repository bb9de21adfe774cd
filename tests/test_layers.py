"""The layers of docs/architecture.md: no package below ``validator`` imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BELOW = ("consensus", "emissions", "embedding", "storage", "lm", "judge", "narrative", "minerpool")


def imported_top_levels(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", BELOW)
def test_no_package_below_validator_imports_it(package: str) -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / package).rglob("*.py"))
        if "validator" in imported_top_levels(p)
    ]
    assert offenders == []


def test_the_checker_sees_an_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from validator.settings import Settings\n", encoding="utf-8")
    assert "validator" in imported_top_levels(bad)
