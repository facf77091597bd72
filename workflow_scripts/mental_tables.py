"""Rule script (mental): Table V (fairness and macro-F1 of every classifier on the counterfactual
pairs, with bootstrap intervals) and Table IV (gender classifiers on original vs neutralized notes)."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.tables import write_page, write_paper_table
from medbias.studies.mental.tables import (
    fairness_table,
    table4,
    table5,
    table5_all_learners,
    treatment_leans,
    with_gender_null,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
out = snakemake.output

predictions = pd.concat([pd.read_parquet(path) for path in snakemake.input.predictions], ignore_index=True)
log.info(
    "%d test pairs over %d classifiers; %d bootstrap replicates each",
    len(predictions),
    predictions.groupby(["embedding", "treatment", "task", "learner"]).ngroups,
    p.bootstrap,
)
null = pd.concat([pd.read_csv(path) for path in snakemake.input.null], ignore_index=True)
long = with_gender_null(fairness_table(predictions, p.bootstrap, p.seed), null)
long.insert(1, "label", long["embedding"].map(lambda e: p.labels.get(e, e)))
long.to_csv(out.table5_long, index=False)
treatment_leans(predictions, p.bootstrap, p.seed).to_csv(out.treatment_leans, index=False)
layout = {"embeddings": p.embeddings, "treatments": p.treatments, "tasks": p.tasks, "labels": p.labels}
write_paper_table(table5(long, layout, p.settings), out.table5_csv, out.table5_md)
write_page(table5_all_learners(long, p.learners, layout), out.table5_learners_md)
gender = pd.concat([pd.read_csv(path) for path in snakemake.input.gender], ignore_index=True)
write_paper_table(table4(gender, p.labels, p.settings), out.table4_csv, out.table4_md)
