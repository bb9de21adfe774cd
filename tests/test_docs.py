"""Docs that list settings stay true to the code."""

from pathlib import Path

from consensus._params import describe
from validator.settings import SECTIONS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_setting_is_documented():
    text = (DOCS / "configuration.md").read_text()
    for section, cls in SECTIONS.items():
        assert f"## [{section}]" in text
        for name, _default, doc in describe(cls):
            assert f"| `{name}` |" in text, f"{section}.{name} missing from docs/configuration.md"
            assert doc, f"{section}.{name} has no doc"
