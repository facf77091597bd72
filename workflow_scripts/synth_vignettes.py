"""Rule script: the demo world's vignette set and the truth of its planted decision (``medbias.synth.vignettes``)."""

import yaml

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.synth.vignettes import demo_vignette_set, vignette_truth

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out = snakemake.params, snakemake.output
settings = p.settings
with open(out.vignettes, "w", encoding="utf-8") as handle:
    yaml.safe_dump(demo_vignette_set(settings["vignettes"]), handle, sort_keys=False, allow_unicode=True)
write_json(out.truth, vignette_truth(p.set_name, settings["planted"], settings["control"], p.trained_models))
log.info("demo vignettes: %d cases; planted P(Yes) to an opioid %s", settings["vignettes"], settings["planted"])
