"""Rule script (rios): RIPA across the decades (Table 4; medbias.studies.rios.tables)."""

from medbias.core.logs import setup_rule_logging
from medbias.io.resources import read_wordsets
from medbias.io.tables import write_paper_table
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.rios.tables import load_decades, ripa_tables

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
decades = load_decades(list(inp.vectors), p.decades, log=log)  # replicate 0 of each decade
tables = ripa_tables(decades, read_wordsets(inp.wordsets), top=p.top, min_fraction=p.min_fraction)
tables.scores.to_csv(out.scores_csv, index=False)
write_paper_table(with_settings(tables.top, p.settings), out.csv, out.md)
write_paper_table(tables.wide, out.wide_csv, out.wide_md)
write_paper_table(tables.pairs, out.pairs_csv, out.pairs_md)
log.info("wrote ripa outputs")
