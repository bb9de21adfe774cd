# Source this file (`. scripts/venv.sh`) from the repository root: it keeps the active virtual
# environment, or else creates .venv (once) and activates it, so nothing is installed into the
# system Python (which Debian and Ubuntu refuse anyway: "externally-managed-environment").
if [ -z "${VIRTUAL_ENV:-}" ]; then
    if [ ! -x .venv/bin/python ]; then
        echo "creating the virtual environment .venv (activate it later with: . .venv/bin/activate)" >&2
        "${PYTHON:-python3}" -m venv .venv || { echo "cannot create .venv (on Debian/Ubuntu: apt install python3-venv)" >&2; false; }
    fi
    [ -x .venv/bin/python ] && . .venv/bin/activate
fi
