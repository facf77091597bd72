"""Rule script: the list of one results folder's paper tables and figures, with their report pages."""

from pathlib import Path

from medbias.core.logs import setup_rule_logging
from medbias.pipeline.report import folder_index

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
p = snakemake.params
index = Path(snakemake.output[0])  # <results>/<folder>/index.md
index.write_text(folder_index(p.folder, p.report_items, index.parents[1].as_posix()))
