"""Rule script (plm): the benchmark table, its long form per bias type, the paired differences and the
figure of scores with intervals (``medbias.studies.plm.benchmark_tables``)."""

import numpy as np
import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_paper_table
from medbias.metrics.benchmarks import evaluation_files, published_values
from medbias.metrics.benchmarks.scores import evaluation_rows, read_evaluation_frames
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.plm.benchmark_tables import benchmark_table, paired_rows, paired_table, wide_table
from medbias.studies.plm.figures import plot_benchmark_intervals

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
settings = p.benchmarks
rng = np.random.default_rng(p.seed)
frames, long_rows, summaries = {}, [], {}
for i, (model, debias) in enumerate(p.evaluations):
    paths = {key: inp[key][i] for key in evaluation_files(settings["suite"])}
    frames[(model, debias)] = read_evaluation_frames(paths, settings["suite"])
    summaries[(model, debias)] = read_json(inp.summary[i])
    rows = evaluation_rows(frames[(model, debias)], summaries[(model, debias)]["status"], settings, rng)
    long_rows += [{"model": model, "debias": debias, **row} for row in rows]
    log.info("%s / %s: %d benchmark rows", model, debias, len(rows))
long = pd.DataFrame(long_rows)
long.to_csv(out.long, index=False)
wide = wide_table(long, p.labels, settings)
scored = [s for s in summaries.values() if "sampled" in s]
sampled = scored[0]["sampled"] if scored else {}
excluded = {k: len(v) for k, v in scored[0]["excluded"].items()} if scored else {}
write_paper_table(
    with_settings(
        benchmark_table(wide, sampled, excluded, settings["alpha"], published_values(settings["suite"])), p.settings
    ),
    out.csv,
    out.md,
)
paired = paired_rows(p.evaluations, frames, settings["bootstrap"], settings["permutations"], rng, settings["alpha"])
write_paper_table(paired_table(paired, settings["alpha"]), out.paired_csv, out.paired_md)
plot_benchmark_intervals(long, p.labels, out.png, out.pdf)
