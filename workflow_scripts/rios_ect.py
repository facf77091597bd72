"""Rule script (rios): ECT across the decades (Figure 2; medbias.studies.rios.tables)."""

from medbias.core.logs import setup_rule_logging
from medbias.io.resources import read_wordsets
from medbias.io.tables import write_paper_table
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.rios.figures import plot_ect_by_decade
from medbias.studies.rios.tables import ect_tables, load_decades

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
decades = load_decades(list(inp.vectors), p.decades, log=log)  # replicate 0 of each decade
table, coverage = ect_tables(
    decades, read_wordsets(inp.wordsets), seed=p.seed, bootstrap=p.bootstrap, min_fraction=p.min_fraction
)
write_paper_table(with_settings(table, p.settings), out.csv, out.md)
write_paper_table(coverage, out.coverage_csv, out.coverage_md)
plot_ect_by_decade(table.frame, out.png, out.pdf)
log.info("wrote ect outputs")
