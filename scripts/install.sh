#!/usr/bin/env bash
# Create .venv with the pinned CPU stack and the medbias library (idempotent; needs Python 3.11+).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    if ! "$PYTHON" -m venv .venv 2>/dev/null; then
        rm -rf .venv
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "installing python3-venv with apt-get" >&2
            DEBIAN_FRONTEND=noninteractive apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
            "$PYTHON" -m venv .venv
        else
            "$PYTHON" -m pip install --user -q virtualenv
            "$PYTHON" -m virtualenv -q .venv
        fi
    fi
fi
stamp=.venv/.medbias-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements-cpu.txt -nt "$stamp" ]; then
    echo "installing the medbias environment into .venv (about a minute)" >&2
    .venv/bin/python -m pip install -q --upgrade pip
    # torch is pinned to the CPU build: an unpinned torch pulls a multi-gigabyte CUDA build
    .venv/bin/python -m pip install -q -r requirements-cpu.txt -e ".[test]"
    touch "$stamp"
fi
