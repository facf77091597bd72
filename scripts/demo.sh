#!/usr/bin/env bash
# Set up the environment and run the default DAG on the embedded demo world (2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/snakemake --cores "${CORES:-2}" "$@"
