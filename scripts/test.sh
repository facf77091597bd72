#!/usr/bin/env bash
# Set up the environment and run the test suite: unit, known-answer and integration tests
# (the demo DAG at a small scale, the output cache, and a real single-node SLURM cluster when root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/python -m pytest -rs "$@"
