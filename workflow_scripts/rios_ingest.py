"""Rule script (rios): the reduce step of the PubMed ingest, the parsed files -> per-decade token corpora
(Parquet) and Table 1."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.pubmed import parse_decades, write_decade_corpora
from medbias.io.tables import write_paper_table
from medbias.studies.rios.tables import table1_articles

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
decades = parse_decades(snakemake.params.decades)
outputs = dict(zip([d.label for d in decades], snakemake.output.corpora))
log.info("resolving %d parsed PubMed files into %d decades", len(snakemake.input.parsed), len(decades))
summary = write_decade_corpora(list(snakemake.input.parsed), decades, outputs)
write_json(snakemake.output.summary, summary)
table = table1_articles(summary)
write_paper_table(table, snakemake.output.table_csv, snakemake.output.table_md)
log.info(table.notes[0])
