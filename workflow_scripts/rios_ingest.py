"""Rule script (rios): the reduce step of the PubMed ingest, the parsed files -> per-decade token corpora
(Parquet) and Table 1."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.pubmed import parse_decades, write_decade_corpora
from medbias.io.tables import write_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
decades = parse_decades(snakemake.params.decades)
outputs = dict(zip([d.label for d in decades], snakemake.output.corpora))
log.info("resolving %d parsed PubMed files into %d decades", len(snakemake.input.parsed), len(decades))
summary = write_decade_corpora(list(snakemake.input.parsed), decades, outputs)
write_json(snakemake.output.summary, summary)
table = pd.DataFrame(summary["decades"]).rename(
    columns={"decade": "Year", "articles": "# Articles", "tokens": "# Tokens"}
)
total = {"Year": "Total", "# Articles": table["# Articles"].sum(), "# Tokens": table["# Tokens"].sum()}
table = pd.concat([table, pd.DataFrame([total])], ignore_index=True)
excluded = (
    f"Excluded: {summary['undated']} undated, {summary['outside_decades']} outside the decades, "
    f"{summary['deleted']} deleted (DeleteCitation), {summary['book_articles']} book articles; "
    f"{summary['replaced_versions']} superseded versions replaced by later ones; "
    f"{summary['deletions_of_unknown_pmids']} deletions of PMIDs not in these files."
)
write_table(table, snakemake.output.table_csv, snakemake.output.table_md, "Table 1: articles per decade", (excluded,))
log.info(excluded)
