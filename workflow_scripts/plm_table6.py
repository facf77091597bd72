"""Rule script: Table 6 of the plm study (downstream scores after debiasing)."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_paper_table
from medbias.studies.plm.tables import downstream_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
results = [read_json(path) for path in snakemake.input]
table, long = downstream_table(results, p.models, p.methods, p.labels, p.settings)
long.to_csv(snakemake.output.long, index=False)
write_paper_table(table, snakemake.output.csv, snakemake.output.md)
log.info("Table 6 from %d fine-tuning results", len(results))
