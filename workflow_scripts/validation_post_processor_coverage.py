"""Rule script (validation): the coverage of the post-processor's recall-gap intervals, with and without its
refits, on simulated tasks of the demo's size (``medbias.validation.post_processor_coverage``)."""

from medbias.core.logs import setup_rule_logging
from medbias.validation.post_processor_coverage import post_processor_coverage

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
settings = dict(p.settings)
log.info(
    "post-processor coverage: %d simulated tasks, %d test resamples, %d refits",
    p.tasks,
    p.replicates,
    settings["refits"],
)
table = post_processor_coverage(p.tasks, p.replicates, settings["refits"], p.tasks, settings, p.seed, log)
table.to_csv(snakemake.output[0], index=False)
for row in table.itertuples(index=False):
    log.info("%s, %s: coverage %.3f (Monte Carlo SE %.3f)", row.interval, row.target, row.coverage, row.mc_se)
