"""Rule script (rios): Table 3, the quality of each decade's chosen embeddings on UMNSRS, with the
setting chosen and how many of the decade's tokens the search trained on."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_paper_table
from medbias.studies.rios.tables import table3_embedding_quality

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
searches = [read_json(path) for path in snakemake.input]
write_paper_table(
    table3_embedding_quality(searches, snakemake.params.settings), snakemake.output.csv, snakemake.output.md
)
