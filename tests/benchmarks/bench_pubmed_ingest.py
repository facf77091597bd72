"""Benchmark: PubMed ingest throughput and peak memory (1 file vs 10 files), and skip-gram training speed.

    .venv/bin/python tests/benchmarks/bench_pubmed_ingest.py

Each measurement runs in a fresh process so that its peak RSS is its own. Peak memory must not grow
with the number of files: iterparse clears every record, and the version index costs 16 bytes per
article.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r} + "/workflow_scripts")
from medbias.io.pubmed import parse_decades, write_decade_corpora
paths = {paths!r}
decades = parse_decades([[1960, 1969], [1970, 1979], [1980, 1989], [1990, 1999], [2000, 2009], [2010, 2020]])
out = {{d.label: {tmp!r} + f"/{{d.label}}.parquet" for d in decades}}
t0 = time.perf_counter()
summary = write_decade_corpora(paths, decades, out)
print(json.dumps({{"seconds": time.perf_counter() - t0, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "articles": sum(d["articles"] for d in summary["decades"])}}))
"""


def run_child(paths: list[str], tmp: str) -> dict:
    code = CHILD.format(repo=str(REPO), paths=paths, tmp=tmp)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    from medbias.io.resources import read_umnsrs, read_wordsets
    from medbias.synth.pubmed import write_pubmed

    wordsets = read_wordsets(REPO / "config/resources/wordsets/rios2020.yaml")
    umnsrs = read_umnsrs(REPO / "config/resources/umnsrs/UMNSRS_similarity.csv")
    with tempfile.TemporaryDirectory() as tmp:
        paths, _, _ = write_pubmed(Path(tmp) / "pm", 5000, 10, 1, wordsets, umnsrs)
        baseline = [str(p) for p in paths[:10]]
        for label, chosen in (("1 file", baseline[:1]), ("5 files", baseline[:5]), ("10 files", baseline)):
            gz_mb = sum(Path(p).stat().st_size for p in chosen) / 1e6
            xml_mb = sum(len(gzip.open(p).read()) for p in chosen) / 1e6
            result = run_child(chosen, tmp)
            print(f"{label}: {result['articles']:,} articles, {xml_mb:.1f} MB XML ({gz_mb:.1f} MB gzipped) in "
                  f"{result['seconds']:.1f} s = {xml_mb / result['seconds']:.1f} MB/s XML, "
                  f"{result['articles'] / result['seconds']:,.0f} articles/s; peak RSS {result['peak_mb']:.0f} MB")

        from medbias.core.embeddings import ParquetSentences, train_skipgram

        corpus = Path(tmp) / "1960-1969.parquet"
        words = sum(len(s) for s in ParquetSentences(corpus))
        params = {"negative": 5, "sample": 0.001, "min_count": 5, "alpha": 0.025, "vector_size": 100, "window": 5}
        for workers in (1, 2):
            t0 = time.perf_counter()
            train_skipgram(ParquetSentences(corpus), params, 5, 1, workers)
            dt = time.perf_counter() - t0
            print(f"skip-gram, {words:,} words x 5 epochs, {workers} worker(s): {dt:.1f} s = {5 * words / dt:,.0f} words/s")


if __name__ == "__main__":
    main()
