"""Rule script: Table 6 of the plm study (downstream scores after debiasing)."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_table
from medbias.studies.plm.tables import downstream_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
results = [read_json(path) for path in snakemake.input]
table, long = downstream_table(results, p.models, p.methods, p.labels)
long.to_csv(snakemake.output.long, index=False)
write_table(
    table,
    snakemake.output.csv,
    snakemake.output.md,
    "Table 6: downstream performance after debiasing (Xie et al. 2024)",
    (
        "GLUE: mean accuracy over the configured GLUE tasks; PubMedQA: accuracy; HoC: micro-F1; BC5CDR: "
        "exact-span entity F1 "
        "(all x100). Mean Diff (Debias): mean over the four of debiased - plain; Mean Diff. (Task): mean over "
        "the methods.",
        "The projection stays in the model during fine-tuning. Per task, epochs, steps and losses: "
        "table6_downstream_long.csv.",
        *p.settings,
    ),
    digits=2,
)
log.info("Table 6 from %d fine-tuning results", len(results))
