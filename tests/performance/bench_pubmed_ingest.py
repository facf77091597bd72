"""Benchmark: the PubMed ingest as map and reduce (one parse job per file, one reduce), and skip-gram speed.

    .venv/bin/python tests/performance/bench_pubmed_ingest.py [articles_per_decade] [files]

Measures, on synthetic baseline files (medbias.synth.pubmed, the demo world's generator):
- the map step over every file with 1 worker and with 2 workers (two processes, as Snakemake runs two
  parse jobs on 2 cores), and the speed-up;
- the reduce step (version index, then the kept articles streamed into the decades);
- each map job's peak RSS on a file and on a file five times larger (memory must be flat in file size);
- the projection for the real baseline on one 16-core node: the map's serial time divided by 16, plus the
  reduce (which runs once), scaled from the measured MB/s to 100 GB of XML;
- skip-gram words/s with 1 and 2 gensim workers.
Each map job runs in a fresh process, so its peak RSS is its own.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))

PARSE_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r} + "/workflow_scripts")
from medbias.io.pubmed import parse_file
t0 = time.perf_counter()
counts = parse_file({path!r}, {output!r})
print(json.dumps({{"seconds": time.perf_counter() - t0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **counts}}))
"""

REDUCE_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r} + "/workflow_scripts")
from medbias.io.pubmed import parse_decades, write_decade_corpora
decades = parse_decades([[1960, 1969], [1970, 1979], [1980, 1989], [1990, 1999], [2000, 2009], [2010, 2020]])
out = {{d.label: {tmp!r} + f"/{{d.label}}.parquet" for d in decades}}
t0 = time.perf_counter()
summary = write_decade_corpora({parsed!r}, decades, out)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": time.perf_counter() - t0, "peak_mb": peak,
                  "articles": sum(d["articles"] for d in summary["decades"])}}))
"""

REAL_BASELINE_GB = 100.0  # the PubMed baseline's uncompressed XML (about 1,300 files)


def parse_job(path: str, output: str) -> dict:
    """One map job in a fresh Python process (its start-up included, as a Snakemake job pays it)."""
    code = PARSE_CHILD.format(repo=str(REPO), path=path, output=output)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def map_all(paths: list[str], folder: Path, workers: int) -> tuple[float, list[dict]]:
    outputs = [str(folder / f"{Path(p).name}.parquet") for p in paths]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(parse_job, paths, outputs))
    return time.perf_counter() - t0, results


def xml_mb(paths: list[str]) -> float:
    return sum(len(gzip.open(p).read()) for p in paths) / 1e6


def main() -> None:
    from medbias.io.resources import read_umnsrs, read_wordsets
    from medbias.synth.pubmed import write_pubmed

    per_decade = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    n_files = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    wordsets = read_wordsets(REPO / "config/resources/wordsets/rios2020.yaml")
    umnsrs = read_umnsrs(REPO / "config/resources/umnsrs/UMNSRS_similarity.csv")
    with tempfile.TemporaryDirectory() as tmp:
        paths, _, _ = write_pubmed(Path(tmp) / "pm", per_decade, n_files, 1, wordsets, umnsrs)
        paths = [str(p) for p in paths]
        size = xml_mb(paths)
        print(f"{len(paths)} files ({n_files} baseline + 1 update), {size:.1f} MB XML")
        timings = {}
        for workers in (1, 2):
            folder = Path(tmp) / f"parsed{workers}"
            folder.mkdir()
            timings[workers], results = map_all(paths, folder, workers)
            print(
                f"map, {workers} worker(s): {timings[workers]:.1f} s = {size / timings[workers]:.1f} MB/s XML; "
                f"per job {min(r['seconds'] for r in results):.1f}-{max(r['seconds'] for r in results):.1f} s "
                f"in the parse itself, peak RSS {max(r['peak_mb'] for r in results):.0f} MB"
            )
        speedup = timings[1] / timings[2]
        print(f"map speed-up with 2 workers on 2 cores: {speedup:.2f}x")

        parsed = sorted(str(p) for p in (Path(tmp) / "parsed1").glob("*.parquet"))
        code = REDUCE_CHILD.format(repo=str(REPO), parsed=parsed, tmp=tmp)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        reduce = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"reduce: {reduce['articles']:,} articles in {reduce['seconds']:.1f} s = "
            f"{size / reduce['seconds']:.1f} MB/s of the input XML, peak RSS {reduce['peak_mb']:.0f} MB"
        )

        # memory flat in file size: one file vs the same records five times over
        one = paths[0]
        body = gzip.open(one).read().decode()
        start, end = body.index("<PubmedArticle>"), body.rindex("</PubmedArticleSet>")
        big = Path(tmp) / "pubmed26n0999.xml.gz"
        big.write_bytes(gzip.compress((body[:start] + body[start:end] * 5 + body[end:]).encode()))
        small_job = parse_job(one, str(Path(tmp) / "one.parquet"))
        big_job = parse_job(str(big), str(Path(tmp) / "big.parquet"))
        print(
            f"map peak RSS: {xml_mb([one]):.1f} MB file {small_job['peak_mb']:.0f} MB, "
            f"{xml_mb([str(big)]):.1f} MB file {big_job['peak_mb']:.0f} MB"
        )

        map_mb_s = size / timings[1]
        reduce_mb_s = size / reduce["seconds"]
        hours_one = REAL_BASELINE_GB * 1000 / map_mb_s / 3600
        hours_16 = REAL_BASELINE_GB * 1000 / map_mb_s / 16 / 3600 + REAL_BASELINE_GB * 1000 / reduce_mb_s / 3600
        print(
            f"projection for {REAL_BASELINE_GB:.0f} GB of baseline XML: map {hours_one:.1f} h on one core; "
            f"map on 16 cores + reduce = {hours_16:.1f} h (reduce at {reduce_mb_s:.0f} MB/s of input)"
        )

        from medbias.core.skipgram import ParquetSentences, train_skipgram

        corpus = Path(tmp) / "1960-1969.parquet"
        words = sum(len(s) for s in ParquetSentences(corpus))
        params = {"negative": 5, "sample": 0.001, "min_count": 5, "alpha": 0.025, "vector_size": 100, "window": 5}
        for workers in (1, 2):
            t0 = time.perf_counter()
            train_skipgram(ParquetSentences(corpus), params, 5, 1, workers)
            dt = time.perf_counter() - t0
            print(
                f"skip-gram, {words:,} words x 5 epochs, {workers} worker(s): {dt:.1f} s = "
                f"{5 * words / dt:,.0f} words/s"
            )


if __name__ == "__main__":
    main()
