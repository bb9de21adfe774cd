#!/usr/bin/env bash
# Installs everything the validator and its tests need into the current Python (with the chain extra).
# torch is pinned and installed first: any other version pulls a multi-GB CUDA build.
# Progress: a line per step, and one every INSTALL_HEARTBEAT_S seconds (default 10) while a step runs
# (the pip steps take minutes and print nothing themselves); a failed step stops here with its exit status.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1
HEARTBEAT_S="${INSTALL_HEARTBEAT_S:-10}"

say() { printf 'install %4ds  %s\n' "$SECONDS" "$*"; }

heartbeat() {  # a line every HEARTBEAT_S seconds until killed (its sleep dies with it)
    local n=$1 since=$2 sleeper=
    trap '[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 0' TERM
    while :; do
        sleep "$HEARTBEAT_S" & sleeper=$!
        wait "$sleeper"
        say "[$n] ... $((SECONDS - since)) s so far"
    done
}

step() {  # step N/M "what" command...: the command's exit status is the step's
    local n=$1 what=$2 since=$SECONDS status=0 beat
    shift 2
    say "[$n] $what"
    heartbeat "$n" "$since" &
    beat=$!
    "$@" || status=$?
    kill "$beat" 2>/dev/null || true
    wait "$beat" 2>/dev/null || true
    if [ "$status" -ne 0 ]; then
        say "[$n] $what: failed (exit $status) after $((SECONDS - since)) s"
        return "$status"
    fi
    say "[$n] done in $((SECONDS - since)) s"
}

step 1/3 "installing torch 2.13.0 (CPU build, about 0.7 GB)" "$PY" -m pip install --quiet torch==2.13.0
# the chain extra too: CI runs the chain edge's tests (the SDK against an in-memory chain, no network)
step 2/3 "installing this package and its dependencies (about 3.3 GB, the LM model parts included)" \
    "$PY" -m pip install --quiet -e ".[test,chain,nli]"
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
# Export the embedding model to ONNX once; cached under ~/.cache/consensus-validator.
step 3/3 "preparing the embedding model (export and compile, cached)" "$PY" -m validator prepare
say "installed"
