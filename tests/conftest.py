"""Shared fixtures: a clean environment and the real embedding model (session-wide)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_configure(config):
    # warnings are errors (pyproject), except the deep-learning stack's own deprecations,
    # raised inside the reference runtime and the one-time ONNX export
    for line in ("ignore::DeprecationWarning:torch", "ignore::DeprecationWarning:transformers",
                 "ignore::UserWarning:torch"):
        config.addinivalue_line("filterwarnings", line)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No VALIDATOR_* settings leak in from the developer's shell, and no .env is read."""
    for name in list(os.environ):
        if name.startswith("VALIDATOR_") and name != "VALIDATOR_CACHE_DIR":
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def embedder():
    from consensus.embed import load_embedder

    return load_embedder("onnx")
