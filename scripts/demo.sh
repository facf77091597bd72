#!/usr/bin/env bash
# Set up the environment and run the default DAG on the embedded demo world (2 cores).
# Every job gets one thread (--max-threads 1), so two run side by side: most jobs are Python start-up
# and small models, which a second thread barely speeds up (scripts/profile_run.py shows where the time goes).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
bash scripts/install.sh
echo "medbias: install took $(($(date +%s) - started)) s"
# --scheduler greedy: Snakemake's default (ilp) solves a job-selection problem each time a job ends,
# on the same two cores as the jobs
.venv/bin/snakemake --cores "${CORES:-2}" --max-threads 1 --scheduler greedy "$@"
