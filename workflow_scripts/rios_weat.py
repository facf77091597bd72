"""Rule script (rios): WEAT across the decades (Figure 1, its trend, Table 2's coverage;
medbias.studies.rios.tables)."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.resources import read_wordsets
from medbias.io.tables import write_paper_table
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.rios.figures import plot_weat_by_decade
from medbias.studies.rios.tables import load_decades, weat_tables

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
decades = load_decades(list(inp.vectors), p.decades, p.replicates, log)  # every seed replicate, decade-major
document_null = (
    pd.concat([pd.read_csv(path) for path in inp.document_null], ignore_index=True) if list(inp.document_null) else None
)
tables = weat_tables(
    decades,
    read_wordsets(inp.wordsets),
    seed=p.seed,
    budget=p.budget,
    alternative=p.alternative,
    bootstrap=p.bootstrap,
    min_fraction=p.min_fraction,
    null_draws=p.null_draws,
    document_null=document_null,
    document_null_draws=p.document_null_draws,
)
write_paper_table(with_settings(tables.figure1, p.settings), out.csv, out.md)
tables.seeds.to_csv(out.seeds_csv, index=False)
write_paper_table(with_settings(tables.trend, p.settings), out.trend_csv, out.trend_md)
write_paper_table(tables.coverage, out.coverage_csv, out.coverage_md)
plot_weat_by_decade(tables.figure1.frame, tables.seeds, out.png, out.pdf)
log.info("wrote weat outputs")
