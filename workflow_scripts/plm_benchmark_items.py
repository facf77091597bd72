"""Rule script (plm): the benchmark items every evaluation and the calibration control score: the
CrowS-Pairs pairs and StereoSet examples, read and checked (``medbias.metrics.benchmarks.items``), sampled when
``plm.benchmarks.sample`` asks (``medbias.studies.plm.benchmarks.sample_rows``), with the examples
set aside and why."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.metrics.benchmarks.items import read_crows_pairs, read_stereoset
from medbias.studies.plm.benchmarks import sample_rows

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inputs, out = snakemake.params, snakemake.input, snakemake.output
excluded = {}
items = {"crows_pairs": read_crows_pairs(inputs.crows_pairs)}
for kind in ("intrasentence", "intersentence"):
    read = read_stereoset(inputs.stereoset, kind)
    items[kind], excluded[kind] = read.examples, read.excluded
for name, frame in items.items():
    chosen = sample_rows(frame, p.sample[name], p.seed)
    chosen.to_parquet(out[name], index=False)
    log.info("%s: %d of %d items", name, len(chosen), len(frame))
write_json(out.excluded, excluded)
