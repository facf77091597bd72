"""Rule script (rios): the map step of the PubMed ingest, one file's records as Parquet (io.pubmed.parse_file)."""

from medbias.core.logs import setup_rule_logging
from medbias.io.pubmed import parse_file

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
counts = parse_file(snakemake.input.xml, snakemake.output.parsed)
log.info("%(file)s: %(articles)d articles, %(deleted_pmids)d deleted PMIDs, %(book_articles)d book articles", counts)
