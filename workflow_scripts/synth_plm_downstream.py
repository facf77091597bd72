"""Rule script: the demo world's small GLUE, PubMedQA, HoC and BC5CDR sets (Table 6)."""

from medbias.core.logs import setup_rule_logging
from medbias.synth.plm_downstream import DEMO_SIZES, write_downstream_sets

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
folders = write_downstream_sets(snakemake.output[0], DEMO_SIZES, snakemake.params.seed)
log.info("downstream sets written: %s (sizes %s)", folders, DEMO_SIZES)
