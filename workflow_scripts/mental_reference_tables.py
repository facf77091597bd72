"""Rule script (mental): Tables I and III (``medbias.studies.mental.reference_tables``): the phenotype
definitions and the gender terms the treatments swap and neutralize."""

from medbias.core.logs import setup_rule_logging
from medbias.io.tables import write_paper_table
from medbias.studies.mental.reference_tables import table1_phenotypes, table3_gender_terms

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
out = snakemake.output
write_paper_table(table1_phenotypes(snakemake.params.tasks), out.table1_csv, out.table1_md)
write_paper_table(table3_gender_terms(), out.table3_csv, out.table3_md)
log.info("Tables I and III written for %d phenotype tasks", len(snakemake.params.tasks))
