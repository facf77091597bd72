"""Rule script: record the inputs (files and models) that this results folder was built from, and the
configuration as the workflow resolved it (defaults filled in, registry enrolled)."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.manifest import input_manifest

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
write_json(snakemake.output.manifest, input_manifest(snakemake.config))
write_json(snakemake.output.config, snakemake.config, sort_keys=False)
