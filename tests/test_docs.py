"""Docs that list settings stay true to the code."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_configuration_tables_match_the_code():
    spec = importlib.util.spec_from_file_location("gen_config_docs", ROOT / "scripts" / "gen_config_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (ROOT / "docs" / "configuration.md").read_text().endswith(gen.tables()), (
        "docs/configuration.md is stale: run python scripts/gen_config_docs.py"
    )
