"""Rule script: one page of the report (a paper table or figure with its caption) as HTML."""

from pathlib import Path

from medbias.core.logs import setup_rule_logging
from medbias.pipeline.report import render_page

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
Path(snakemake.output[0]).write_text(
    render_page(Path(snakemake.input[0]), snakemake.params.item, depth=snakemake.wildcards.page.count("/"))
)
