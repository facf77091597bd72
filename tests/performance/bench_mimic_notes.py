"""Benchmark: NOTEEVENTS ingest and note processing throughput and peak memory.

    .venv/bin/python tests/performance/bench_mimic_notes.py [--patients 16000] [--threads 2]

Generates a synthetic NOTEEVENTS (16,000 patients give about 200,000 notes) plus one a quarter of
the size, then, each in a fresh process (so that peak RSS is its own): the chunked ingest to Parquet,
and sentence splitting + tokenization + packing with the given number of worker processes.
Throughput is reported per note and per MB of note text, the unit to extrapolate to the real
database (about 3.9 GB of note text in 2.08 million notes; synthetic notes are much shorter).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))

INGEST = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r} + "/workflow_scripts")
import pandas as pd
from medbias.io.mimic import ingest_notes
categories = {repo!r} + "/config/resources/mimic-facts/noteevents_categories.tsv"
cats = pd.read_csv(categories, sep="\t", dtype=str, keep_default_na=False)["category"]
t0 = time.perf_counter()
counts = ingest_notes({folder!r}, {out!r}, cats, chunk_size=50000)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": time.perf_counter() - t0, "peak_mb": peak, **counts}}))
"""
PROCESS = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r} + "/workflow_scripts")
from medbias.core.note_pipeline import process_notes
t0 = time.perf_counter()
totals = process_notes({notes!r}, {tok!r}, {seq!r}, {cnt!r}, {threads})
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": time.perf_counter() - t0, "peak_mb": peak, "worker_peak_mb": children, **totals}}))
"""


def child(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--patients", type=int, default=16000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from medbias.core.note_pipeline import extend_tokenizer
    from medbias.synth.mimic import generate_cohort
    from medbias.synth.tiny_models import train_wordpiece

    hcup = yaml.safe_load((REPO / "config/resources/mimic3-benchmarks/hcup_ccs_2015_definitions.yaml").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        cohort = generate_cohort(args.patients, hcup, seed=7)
        notes = cohort.tables["NOTEEVENTS"]
        print(f"generated {len(notes):,} notes in {time.perf_counter() - t0:.0f} s")
        tokenizer = train_wordpiece(notes["TEXT"].head(20000).tolist(), 2000)
        extend_tokenizer(tokenizer)
        tokenizer.save_pretrained(tmp / "tok")
        for label, frame in (("quarter", notes.head(len(notes) // 4)), ("full", notes)):
            folder = tmp / label
            folder.mkdir()
            frame.to_csv(folder / "NOTEEVENTS.csv.gz", index=False, compression={"method": "gzip", "mtime": 0})
            text_mb = frame["TEXT"].str.len().sum() / 1e6
            ing = child(INGEST.format(repo=str(REPO), folder=str(folder), out=str(folder / "notes.parquet")))
            print(
                f"ingest {label}: {ing['notes_read']:,} notes ({text_mb:.0f} MB text) in {ing['seconds']:.1f} s = "
                f"{ing['notes_read'] / ing['seconds']:,.0f} notes/s, {text_mb / ing['seconds']:.1f} MB/s; peak "
                f"RSS {ing['peak_mb']:.0f} MB"
            )
            pro = child(
                PROCESS.format(
                    repo=str(REPO),
                    notes=str(folder / "notes.parquet"),
                    tok=str(tmp / "tok"),
                    seq=str(folder / "seq.parquet"),
                    cnt=str(folder / "cnt.parquet"),
                    threads=args.threads,
                )
            )
            print(
                f"process {label} ({args.threads} workers): {pro['notes']:,} notes, {pro['pieces']:,} pieces in "
                f"{pro['seconds']:.1f} s = {pro['notes'] / pro['seconds']:,.0f} notes/s, "
                f"{text_mb / pro['seconds']:.2f} MB text/s; "
                f"peak RSS main {pro['peak_mb']:.0f} MB, largest worker {pro['worker_peak_mb']:.0f} MB"
            )


if __name__ == "__main__":
    main()
