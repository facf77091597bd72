"""Rule script: the report's front door, report/index.html, linking every page under its study."""

from pathlib import Path

from medbias.core.logs import setup_rule_logging
from medbias.pipeline.report import front_door

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
Path(snakemake.output[0]).write_text(front_door(snakemake.params.report_items, snakemake.params.folders))
