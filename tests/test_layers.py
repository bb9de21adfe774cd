"""The layers of docs/architecture.md: no package below ``validator`` imports it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import imported_top_levels

ROOT = Path(__file__).resolve().parents[1]
BELOW = ("consensus", "emissions", "embedding", "storage", "lm", "judge", "narrative", "minerpool")


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
