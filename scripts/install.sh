#!/usr/bin/env bash
# Installs everything the validator and its tests need into the current Python (with the chain extra).
# torch is pinned and installed first: any other version pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1
"$PY" -m pip install --quiet torch==2.13.0
# the chain extra too: CI runs the chain edge's tests (the SDK against an in-memory chain, no network)
"$PY" -m pip install --quiet -e ".[test,chain]"
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
# Export the embedding model to ONNX once; cached under ~/.cache/consensus-validator.
"$PY" -m validator prepare
