"""Rule script: tables and a figure describing what the demo world planted."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_page
from medbias.synth.summary import phenotype_table, planted_page, planted_table, plot_demo_world

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
truth = read_json(snakemake.input.truth)
phenotypes = phenotype_table(truth)
planted = planted_table(truth)
phenotypes.to_csv(snakemake.output.phenotypes_csv, index=False)
planted.to_csv(snakemake.output.planted_csv, index=False)
write_page(planted_page(planted, phenotypes), snakemake.output.planted_md)
plot_demo_world(truth, snakemake.output.png, snakemake.output.pdf)
