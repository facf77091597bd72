"""Benchmark: demo-world generation throughput and the default DAG's wall time.

Run on demand (not part of the test suite):
    .venv/bin/python tests/performance/bench_demo_world.py            # generators only, seconds
    .venv/bin/python tests/performance/bench_demo_world.py --dag      # + the whole default DAG in a temp dir
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))
sys.path.insert(0, str(REPO / "tests"))

from medbias.io.resources import read_umnsrs, read_wordsets  # noqa: E402
from medbias.synth.mimic import generate_cohort  # noqa: E402
from medbias.synth.pubmed import write_pubmed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--patients", type=int, default=2500)
    parser.add_argument("--articles-per-decade", type=int, default=2000)
    parser.add_argument("--dag", action="store_true", help="also time the default DAG at scale 1")
    args = parser.parse_args()
    hcup = yaml.safe_load((REPO / "config/resources/mimic3-benchmarks/hcup_ccs_2015_definitions.yaml").read_text())

    t0 = time.perf_counter()
    cohort = generate_cohort(args.patients, hcup, seed=1)
    dt = time.perf_counter() - t0
    n_notes = len(cohort.tables["NOTEEVENTS"])
    print(f"MIMIC generator: {args.patients} patients, {n_notes} notes in {dt:.2f} s ({n_notes / dt:,.0f} notes/s)")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        _, truth, texts = write_pubmed(
            tmp,
            args.articles_per_decade,
            4,
            1,
            read_wordsets(REPO / "config/resources/wordsets/rios2020.yaml"),
            read_umnsrs(REPO / "config/resources/umnsrs/UMNSRS_similarity.csv"),
        )
        dt = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in Path(tmp).glob("*.xml.gz")) / 1e6
        print(
            f"PubMed generator: {len(texts)} articles, {size:.1f} MB gzipped in {dt:.2f} s "
            f"({len(texts) / dt:,.0f} articles/s)"
        )
    print(f"peak RSS of the generators: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

    if args.dag:
        from conftest import demo_config, write_config

        with tempfile.TemporaryDirectory() as tmp:
            configfile = write_config(Path(tmp) / "config.yaml", demo_config(scale=1.0))
            cmd = [
                str(Path(sys.executable).with_name("snakemake")),
                "-s",
                str(REPO / "Snakefile"),
                "-d",
                tmp,
                "--cores",
                "2",
                "--configfile",
                str(configfile),
            ]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            print(f"default DAG on the demo world (scale 1, 2 cores): {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
