"""Benchmark: how long `snakemake -n` takes to plan the full real-world DAG (goal: at most 15 s).

    .venv/bin/python tests/performance/bench_real_dry_run.py [pubmed_files]

Builds the fake input tree of the dry-run tests (config/mimic.yaml over MIMIC-III tables that hold only
their header rows) with as many PubMed files as the real baseline and updates (default 1,300: one
parse job each), then times the dry run as a user types it, from the repository root, with the SLURM
profile and without. Prints the seconds and the number of jobs planned.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))
sys.path.insert(0, str(REPO / "tests"))


def main() -> None:
    from conftest import write_config
    from test_config_helpers import fake_real_config

    n_files = int(sys.argv[1]) if len(sys.argv) > 1 else 1300
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        config = fake_real_config(workdir)
        folder = Path(config["inputs"]["pubmed_dir"])
        for number in range(1, n_files + 1):
            (folder / f"pubmed26n{number:04d}.xml.gz").write_bytes(b"")
        configfile = write_config(workdir / "mimic.yaml", config)
        snakemake = str(Path(sys.executable).with_name("snakemake"))
        for profile in ([], ["--profile", "slurm"]):
            started = time.perf_counter()
            result = subprocess.run(
                [snakemake, "-n", *profile, "--configfile", str(configfile), "-d", str(workdir)],
                cwd=REPO,
                capture_output=True,
                text=True,
            )
            seconds = time.perf_counter() - started
            output = result.stdout + result.stderr
            if result.returncode != 0:
                raise SystemExit(output[-3000:])
            total = int(re.search(r"^total\s+(\d+)$", output, re.M).group(1))
            parse = int(re.search(r"^rios_parse\s+(\d+)$", output, re.M).group(1))
            print(
                f"snakemake -n {' '.join(profile) or '(no profile)'}: {total:,} jobs ({parse:,} PubMed parse jobs) "
                f"planned in {seconds:.1f} s"
            )


if __name__ == "__main__":
    main()
