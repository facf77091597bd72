"""Rule script (hurtful): fairness gaps (parity, recall, specificity; eq. 2 for more than two
groups) per task, attribute and subgroup with within-label bootstrap replicates (hurtful.downstream.bootstrap;
the paper: 1,000), two-sided
p-values and Benjamini-Hochberg across tasks, plus intersectional cells and AUROC/AUPRC with
bootstrap intervals, for one model's test predictions."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.studies.hurtful.gaps import gap_table, task_performance

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params

predictions = pd.read_parquet(snakemake.input.predictions)
tasks = pd.read_csv(snakemake.input.tasks)["task"].tolist()
log.info(
    "%s: %d test predictions over %d tasks; %d bootstrap replicates", p.model, len(predictions), len(tasks), p.bootstrap
)
gaps, cells = gap_table(
    predictions, tasks, p.attributes, p.excluded, p.bootstrap, p.seed, p.alpha, p.intersectional, p.minimum, log
)
gaps.insert(0, "model", p.model)
for attribute, frame in gaps.groupby("attribute"):
    log.info(
        "%s: %d excluded rows per task at most; %d of %d group-metric rows without a gap (too small); "
        "undefined replicates in %d gaps",
        attribute,
        frame["excluded_rows"].max(),
        int(frame["gap"].isna().sum()),
        len(frame),
        int((frame["undefined_replicates"] > 0).sum()),
    )
gaps.to_parquet(snakemake.output.gaps, index=False)
cells.to_csv(snakemake.output.cells, index=False)
performance = task_performance(predictions, tasks, p.bootstrap, p.seed, p.alpha)
performance.insert(0, "model", p.model)
performance.to_csv(snakemake.output.performance, index=False)
